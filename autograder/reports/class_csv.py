"""class.csv: one row per submission of a class (`batch`), or per shard (`batch --shard`,
which `merge` joins into the file one unsharded run would have written)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.reports.class_report import in_class_order
from autograder.reports.files import atomic_write
from autograder.reports.text import csv_cell


def write_class_csv(out: Path, unit, rows: list[dict], k: int, n: int, version: str = "") -> str:
    """class.csv: one row per entry in the order of their names (so that merged shards give
    the same file as one run), the topics in rubric order (score, then status)."""
    fields = ["submission", "earned", "possible", "status", "seed", "grader_version", "tampered", "folder"]
    for t in unit.topics:
        if any(r.get(t.id, "") != "" for r in rows):
            fields += [t.id, f"{t.id}_status"]
    fields.append("detail")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows([{key: csv_cell(v) for key, v in dict(r, grader_version=version).items()}
                      for r in in_class_order(rows)])
    name = "class.csv" if n == 1 else f"class.shard{k}of{n}.csv"
    atomic_write(out / name, buf.getvalue())
    return name


ESCAPED = ("'=", "'+", "'-", "'@", "'\t", "'\r")


def read_class_csv(path: Path) -> list[dict]:
    """class.csv's rows, each submission's name as the class folder spells it (csv_cell
    guards a formula start with a ')."""
    with Path(path).open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        name = row.get("submission", "")
        row["submission"] = name[1:] if name.startswith(ESCAPED) else name
    return rows
