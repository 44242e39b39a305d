"""The per-topic scores each delivery path gave each journey student, side by side (Markdown).

    AUTOGRADER_JOURNEY_SCORES=journey.jsonl make sweep
    python scripts/journey_table.py journey.jsonl

The file is what tests/e2e/test_journey.py keeps where that variable names one: a JSON line
per path and student ({"student", "path", "earned": {topic: points}}). The tests assert that
the paths agree; this prints what they agreed on, for a note or an issue."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tables(lines: list[dict]) -> str:
    out = []
    for student in dict.fromkeys(line["student"] for line in lines):
        rows = [line for line in lines if line["student"] == student]
        topics = list(dict.fromkeys(t for row in rows for t in row["earned"]))
        out.append(f"**{student}**\n")
        out.append("| path | " + " | ".join(topics) + " | total |")
        out.append("|---|" + "---:|" * (len(topics) + 1))
        for row in rows:
            cells = [f"{row['earned'][t]:g}" if t in row["earned"] else "–" for t in topics]
            out.append(f"| {row['path']} | " + " | ".join(cells) + f" | {sum(row['earned'].values()):g} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(tables([json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]))
