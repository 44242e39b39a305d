"""Command line: `python -m autograder grade [DIR]` and `python -m autograder batch ROOT`.

Exit status (SPEC §5): 0 graded; 1 graded but below --fail-under; 2 the grader could not run.
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

from autograder import paths, reports

EXIT_OK, EXIT_BELOW, EXIT_GRADER = 0, 1, 2
OPTIONAL_ARTEFACTS = ("evidence.yaml", "fault_injection.png")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission folder")
    g.add_argument("submission", nargs="?", type=Path, default=paths.ASSIGNMENTS,
                   help="folder holding the topic modules (default: assignments/rnn_prehistory)")
    g.add_argument("--out", type=Path, default=Path("reports"), help="report folder (default: reports)")
    g.add_argument("--suite", choices=["public", "hidden", "all"], default="all")
    g.add_argument("--topic", action="append", dest="topics", metavar="ID", help="grade only this topic (repeatable)")
    g.add_argument("--fail-under", type=float, default=None, metavar="PCT",
                   help="exit 1 when the score is below PCT percent")
    g.add_argument("--seed", type=int, default=None, help="replay a run's random inputs (default: fresh)")
    g.add_argument("--jobs", type=int, default=1, help="accepted for symmetry with batch; one submission uses one worker")
    g.add_argument("--quiet", action="store_true", help="print only the total")
    b = sub.add_parser("batch", help="grade every sub-folder of ROOT (one submission each)")
    b.add_argument("root", type=Path)
    b.add_argument("--out", type=Path, required=True, help="one report folder per submission, plus class.csv")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    b.add_argument("--shard", default="1/1", metavar="K/N", help="grade only the K-th of N shards (1-based)")
    b.add_argument("--suite", choices=["public", "hidden", "all"], default="all")
    b.add_argument("--seed", type=int, default=None)
    b.add_argument("--topic", action="append", dest="topics", metavar="ID")
    return p


def cmd_grade(args) -> int:
    started = time.perf_counter()
    if not args.submission.is_dir():
        print(f"autograder: submission folder {args.submission} does not exist", file=sys.stderr)
        return EXIT_GRADER
    from autograder import rubric
    from autograder.sandbox import Sandbox

    the_rubric = rubric.load()
    # Start the worker now: its start-up (~0.3 s) overlaps the import of pytest and the suites.
    sandbox = Sandbox(args.submission.resolve(), the_rubric.limits)
    sandbox.start()
    plotter = _start_plotter(args)
    from autograder.grade import GraderError, grade

    try:
        outcome = grade(args.submission, suite=args.suite, topics=args.topics, seed=args.seed,
                        the_rubric=the_rubric, sandbox=sandbox, started=started)
        written = _write_artefacts(args.out, outcome, args, plotter)
    except GraderError as exc:
        print(f"autograder: the grader could not run: {exc}", file=sys.stderr)
        return EXIT_GRADER
    finally:
        sandbox.close()
        if plotter is not None:
            plotter.cancel()
    score = outcome.score
    figure = "fault_injection.png" if (args.out / "fault_injection.png") in written else None
    reports.write_all(args.out, score, outcome.topic_messages, figure, outcome.seed, outcome.durations)
    if args.quiet:
        print(f"{score['earned']:g} / {score['possible']:g}")
    else:
        print(reports.terminal_table(score, outcome.topic_messages, args.out, outcome.seed))
        if not (outcome.sandbox_info or {}).get("uid_dropped"):
            print("note: student code ran with your own user id (start the grader as root to also "
                  "drop privileges, isolate the network and hide the file system)")
    pct = 100 * score["earned"] / score["possible"] if score["possible"] else 100.0
    if args.fail_under is not None and pct < args.fail_under:
        return EXIT_BELOW
    return EXIT_OK


def _start_plotter(args):
    """The figure's renderer, started early when this run can reach the fault-injection lab."""
    if args.suite == "public" or (args.topics and "fault_injection" not in args.topics):
        return None
    from autograder import evidence

    return evidence.Plotter()


def _write_artefacts(out: Path, outcome, args, plotter) -> list[Path]:
    """evidence.yaml and the figure, when the run reached the fault-injection topic."""
    written: list[Path] = []
    if "fault_injection" in outcome.extras:
        from autograder import evidence

        command = "python -m autograder grade " + " ".join(sys.argv[2:])
        written.append(evidence.write_evidence(out, outcome.extras, outcome.signals, args.submission, command))
        try:
            fig = (plotter.finish(out, outcome.extras) if plotter is not None
                   else evidence.write_fault_plot(out, outcome.extras))
        except Exception as exc:  # noqa: BLE001 - a missing figure must not cost the score report
            print(f"autograder: warning: no figure: {exc}", file=sys.stderr)
            fig = None
        if fig:
            written.append(fig)
    for name in OPTIONAL_ARTEFACTS:       # never leave a previous run's artefact beside a new score
        if out / name not in written and (out / name).exists():
            (out / name).unlink()
    return written


def cmd_batch(args) -> int:
    k, n = (int(x) for x in args.shard.split("/"))
    if not (1 <= k <= n):
        print("autograder: --shard must be K/N with 1 <= K <= N", file=sys.stderr)
        return EXIT_GRADER
    subs = sorted(p for p in args.root.iterdir() if p.is_dir() and not p.name.startswith("."))
    mine = subs[k - 1::n]

    def run(sub: Path):
        cmd = [sys.executable, "-m", "autograder", "grade", str(sub), "--out", str(args.out / sub.name),
               "--suite", args.suite, "--quiet"] + (["--seed", str(args.seed)] if args.seed is not None else [])
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
    writer.writerows(rows)
    name = "class.csv" if n == 1 else f"class.shard{k}of{n}.csv"
    reports.atomic_write(args.out / name, buf.getvalue())
    print(f"graded {len(rows)} submission(s) -> {args.out / name}")
    return EXIT_GRADER if any(r["status"] == "grader_error" for r in rows) else EXIT_OK


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"grade": cmd_grade, "batch": cmd_batch}[args.command](args)
    except Exception:  # noqa: BLE001 - anything unexpected is the grader's fault: exit 2
        traceback.print_exc()
        return EXIT_GRADER


if __name__ == "__main__":
    sys.exit(main())
