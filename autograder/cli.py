"""Command line: `python -m autograder grade [DIR]` and `python -m autograder batch ROOT`.

Exit status: 0 graded; 1 graded but below --fail-under; 2 the grader could not run.
The assignment is a unit folder (`--assignment NAME|PATH`); with one unit installed it
is the default.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder import assignment, reports
from autograder.reports.text import csv_cell, terminal

EXIT_OK, EXIT_BELOW, EXIT_GRADER = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission folder")
    g.add_argument("submission", nargs="?", type=Path, default=None,
                   help="folder holding the topic modules (default: the assignment's stub folder)")
    b = sub.add_parser("batch", help="grade every sub-folder of ROOT (one submission each)")
    b.add_argument("root", type=Path)
    for cmd in (g, b):
        cmd.add_argument("--assignment", default=None, metavar="NAME|PATH",
                         help="the unit to grade (default: the only one installed)")
        cmd.add_argument("--suite", choices=["public", "hidden", "all"], default="all")
        cmd.add_argument("--topic", action="append", dest="topics", metavar="ID",
                         help="grade only this topic (repeatable)")
        cmd.add_argument("--seed", type=int, default=None, help="replay a run's random inputs (default: fresh)")
    g.add_argument("--out", type=Path, default=Path("reports"), help="report folder (default: reports)")
    g.add_argument("--fail-under", type=float, default=None, metavar="PCT",
                   help="exit 1 when the score is below PCT percent")
    g.add_argument("--jobs", type=int, default=1, help="accepted for symmetry with batch; one submission uses one worker")
    g.add_argument("--quiet", action="store_true", help="print only the total")
    b.add_argument("--out", type=Path, required=True, help="one report folder per submission, plus class.csv")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    b.add_argument("--shard", default="1/1", metavar="K/N", help="grade only the K-th of N shards (1-based)")
    return p


class Artefacts:
    """The unit's extra report files (its `artefacts` module), or nothing. The hook is
    created before grading (so it can start slow work early) and asked to write after it."""

    def __init__(self, unit, topics, suite: str):
        self.hook, self.files = None, ()
        if unit.artefacts:
            module = unit.import_module(unit.artefacts)
            self.hook = module.Artefacts(unit, [t.id for t in topics], suite)
            self.files = tuple(getattr(self.hook, "FILES", ()))

    def write(self, out: Path, result, submission: Path, command: str) -> list[tuple[str, str]]:
        """Write the unit's artefacts; return the images to show in score.md as (name, caption)."""
        written = self.hook.write(out, result, submission, command) if self.hook else []
        names = {Path(path).name for path, _ in written}
        for name in self.files:        # never leave a previous run's artefact beside a new score
            if name not in names and (out / name).exists():
                (out / name).unlink()
        return [(Path(path).name, caption) for path, caption in written if caption]

    def close(self) -> None:
        if self.hook is not None:
            self.hook.close()


def cmd_grade(args) -> int:
    started = time.perf_counter()
    unit = assignment.load(args.assignment)
    submission = args.submission if args.submission is not None else Path(unit.stubs)
    if not submission.is_dir():
        print(f"autograder: submission folder {submission} does not exist", file=sys.stderr)
        return EXIT_GRADER
    from autograder.grading.run import Options, grade, select_topics

    topics = select_topics(unit, args.topics)
    artefacts = Artefacts(unit, topics, args.suite)
    try:
        result = grade(unit, submission, Options(args.suite, tuple(args.topics or ()) or None, args.seed), started)
        command = "python -m autograder grade " + " ".join(sys.argv[2:])
        images = artefacts.write(args.out, result, submission, command)
    finally:
        artefacts.close()
    reports.write_all(args.out, result, images)
    if args.quiet:
        print(f"{result.earned:g} / {result.possible:g}")
    else:
        from autograder.reports import terminal as terminal_report

        print(terminal_report.table(result, args.out))
        if not result.sandbox_info.get("uid_dropped"):
            print("note: student code ran with your own user id (start the grader as root to also "
                  "drop privileges, isolate the network and hide the file system)")
    if args.fail_under is not None and result.percent < args.fail_under:
        return EXIT_BELOW
    return EXIT_OK


def cmd_batch(args) -> int:
    k, n = (int(x) for x in args.shard.split("/"))
    if not (1 <= k <= n):
        print("autograder: --shard must be K/N with 1 <= K <= N", file=sys.stderr)
        return EXIT_GRADER
    unit = assignment.load(args.assignment)
    subs = sorted(p for p in args.root.iterdir() if p.is_dir() and not p.name.startswith("."))
    mine = subs[k - 1::n]

    def run(sub: Path):
        cmd = [sys.executable, "-m", "autograder", "grade", str(sub), "--out", str(args.out / sub.name),
               "--assignment", str(unit.path), "--suite", args.suite, "--quiet"]
        cmd += ["--seed", str(args.seed)] if args.seed is not None else []
        cmd += [arg for topic in args.topics or [] for arg in ("--topic", topic)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return sub, proc

    rows = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for sub, proc in pool.map(run, mine):
            score_file = args.out / sub.name / "score.json"
            if proc.returncode == EXIT_GRADER or not score_file.exists():
                rows.append({"submission": sub.name, "earned": "", "possible": "", "status": "grader_error",
                             "detail": proc.stderr.strip()[-300:]})
                continue
            score = json.loads(score_file.read_text())
            row = {"submission": sub.name, "earned": score["earned"], "possible": score["possible"],
                   "status": "graded", "detail": ""}
            row.update({t["id"]: t["earned"] for t in score["topics"]})
            rows.append(row)
    fields = ["submission", "earned", "possible", "status"]
    fields += sorted({k for r in rows for k in r} - set(fields) - {"detail"}) + ["detail"]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows([{k: csv_cell(v) for k, v in r.items()} for r in rows])
    name = "class.csv" if n == 1 else f"class.shard{k}of{n}.csv"
    reports.atomic_write(args.out / name, buf.getvalue())
    print(f"graded {len(rows)} submission(s) -> {args.out / name}")
    return EXIT_GRADER if any(r["status"] == "grader_error" for r in rows) else EXIT_OK


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from autograder.grading.score import GraderError
    from autograder.grading.rubric import RubricError

    try:
        return {"grade": cmd_grade, "batch": cmd_batch}[args.command](args)
    except (GraderError, RubricError, assignment.UnitError) as exc:
        print(f"autograder: the grader could not run: {terminal(str(exc))}", file=sys.stderr)
        return EXIT_GRADER
    except Exception:  # noqa: BLE001 - anything unexpected is the grader's fault: exit 2
        traceback.print_exc()
        return EXIT_GRADER


if __name__ == "__main__":
    sys.exit(main())
