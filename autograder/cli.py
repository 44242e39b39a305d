"""Command line: `python -m autograder grade [DIR]`, `batch ROOT`, `merge SHARD_DIR...`,
`pr CHECKOUT` (CI), `export DIR` (LMS files), `gradescope` (Gradescope's run_autograder),
`new-unit NAME`, `new-topic UNIT NAME`, `build [UNIT]` (the derived files) and `check UNIT` (a unit's own checks).

Exit status: 0 graded; 1 graded but below --fail-under; 2 the grader could not run.
The unit to grade is named by `--unit NAME|PATH` (a unit's name or folder); with one unit
installed it is the default. `--assignment` is its former name, still accepted everywhere.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from pathlib import Path

from autograder import reports
from autograder.errors import GraderError
from autograder.pipeline import EXIT_GRADER, EXIT_INTERRUPTED, limit_own_memory, stop_on_sigterm
from autograder.reports.detail import HIDDEN_DETAIL
from autograder.reports.text import terminal

# The verb table: verb -> module of autograder.commands whose `run(args)` carries it out.
# Only the chosen verb's module is imported (a `grade` never loads batch's or pr's code).
COMMANDS = {"grade": "grade", "batch": "batch", "pr": "pr", "merge": "merge", "gradescope": "gradescope",
            "new-unit": "new_unit", "export": "export", "build": "build",
            "check": "check", "new-topic": "new_topic"}


def _unit_option(cmd, what: str = "the unit to grade") -> None:
    """--unit, and --assignment: its former name, kept for the scripts that still pass it."""
    cmd.add_argument("--unit", "--assignment", dest="unit", default=None, metavar="NAME|PATH",
                     help=f"{what} (default: the only one installed; --assignment is the former name of --unit)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission folder")
    g.add_argument("submission", nargs="?", type=Path, default=None,
                   help="folder holding the topic modules (default: the unit's stub folder)")
    b = sub.add_parser("batch", help="grade every sub-folder of ROOT (one submission each)")
    b.add_argument("root", type=Path)
    for cmd in (g, b):
        _unit_option(cmd)
        cmd.add_argument("--suite", choices=["public", "hidden", "all"], default="all")
        cmd.add_argument("--topic", action="append", dest="topics", metavar="ID",
                         help="grade only this topic (repeatable)")
        cmd.add_argument("--seed", type=int, default=None,
                         help="replay a run's random inputs (default: a seed derived from the submission's files, "
                              "so the same files always get the same inputs)")
        cmd.add_argument("--lang", choices=["en", "zh"], default=None,
                         help="language of messages, hints and reports (default: from the locale, e.g. LANG=zh_CN.UTF-8)")
    g.add_argument("--test", action="append", dest="tests", metavar="TOPIC::SUITE::NAME",
                   help="grade only this test of its topic: the topic id, public or hidden, and the test's name as "
                        "the rubric lists it (repeatable; a topic also given to --topic is graded whole). The "
                        "unit's extra artefacts describe whole gradings and are not written")
    g.add_argument("--out", type=Path, default=Path("reports"), help="report folder (default: reports)")
    g.add_argument("--fail-under", type=float, default=None, metavar="PCT",
                   help="exit 1 when the score is below PCT percent")
    g.add_argument("--quiet", action="store_true", help="print only the total")
    g.add_argument("--trust-submission", action="store_true",
                   help="the code is trusted (e.g. the reference): grade it even where it cannot be isolated")
    b.add_argument("--out", type=Path, required=True, help="one report folder per submission, plus class.csv")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    b.add_argument("--shard", default="1/1", metavar="K/N", help="grade only the K-th of N shards (1-based)")
    b.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                   help="CPU seconds a submission's grading may use (the grader and its workers; the "
                        "wall clock is a backstop of 4 times that); a submission over it is recorded as timeout")
    b.add_argument("--force", action="store_true",
                   help="regrade every submission (default: skip those graded before by the same grader version "
                        "with the same seed)")
    b.add_argument("--plan", type=Path, default=None, metavar="FILE",
                   help="JSON {submission folder name: [topic id or TOPIC::SUITE::NAME test, ...]}: grade those "
                        "submissions on those topics and tests only (the others on --topic, or everything)")
    b.add_argument("--manifest", type=Path, default=None, metavar="FILE",
                   help="the release's protected-files.sha256: a submission that holds the student repository "
                        "is flagged in class.csv's tampered column when it changed a protected file")

    r = sub.add_parser("pr", help="grade a pull request's checkout with this (trusted) grader")
    r.add_argument("checkout", type=Path, help="the pull request's checkout (only its module files are used)")
    r.add_argument("--manifest", type=Path, required=True, help="the instructor's protected-files.sha256")
    r.add_argument("--out", type=Path, default=Path("reports"))
    _unit_option(r)
    r.add_argument("--hidden-detail", choices=HIDDEN_DETAIL, default="tests",
                   help="what students see of hidden tests in every report, the comment and the summary: total "
                        "per topic, test names and messages, or also hints")
    r.add_argument("--fail-under", type=float, default=None, metavar="PCT",
                   help="the pass mark: exit 1 when the score is below PCT percent (every report says so)")
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--lang", choices=["en", "zh"], default=None, help="language of the report (default: from the locale)")

    m = sub.add_parser("merge", help="merge the class files of a sharded batch into one class file and report")
    m.add_argument("shards", type=Path, nargs="+", metavar="SHARD_DIR", help="the --out folder of each shard")
    m.add_argument("--out", type=Path, required=True, help="where the merged class.csv, report and folders go")
    _unit_option(m, "the unit the shards graded")
    m.add_argument("--lang", choices=["en", "zh"], default=None,
                   help="language of the class report (default: from the locale)")

    x = sub.add_parser("export", help="a class's grades as Canvas and Moodle import files and a plain CSV")
    x.add_argument("folder", type=Path, nargs="?", default=None, metavar="DIR",
                   help="the --out folder of `batch` or `merge` (its class.csv)")
    x.add_argument("--gradebook", type=Path, default=None, metavar="FILE",
                   help="export nbgrader's gradebook.db instead (with --nbgrader-assignment)")
    x.add_argument("--nbgrader-assignment", default=None, metavar="NAME", help="the nbgrader assignment to export")
    x.add_argument("--roster", type=Path, action="append", metavar="FILE|ROOT",
                   help="who each submission is (repeatable): Gradescope's submission_metadata.yml/.json (or the "
                        "folder its Export Submissions unpacks to), a "
                        "class folder of Gradescope runs (submission/ beside submission_metadata.json), a GitHub Classroom roster CSV, or a CSV with a folder "
                        "column and student_id, name, email, sis_user_id, sis_login_id, canvas_id, section")
    x.add_argument("--submissions", type=Path, default=None, metavar="ROOT",
                   help="the class folder graded: its entries' times decide which of a student's submissions is "
                        "the later one, and which are late (when no roster gives submission times)")
    x.add_argument("--out", type=Path, default=None, help="where the files go (default: DIR)")
    _unit_option(x, "the unit graded")
    x.add_argument("--title", default=None, help="the assignment's column title in the LMS (default: the unit's name)")
    x.add_argument("--canvas-assignment", default=None, metavar="ID",
                   help="the Canvas assignment id to fill (default: Canvas creates a new assignment)")
    x.add_argument("--per-topic", action="store_true", help="one more LMS column per topic")
    x.add_argument("--moodle-id", choices=["email", "idnumber", "username"], default="email",
                   help="the user field moodle.csv identifies students by (default: email)")
    x.add_argument("--deadline", default=None, metavar="ISO-TIME",
                   help="flag submissions after it as late, e.g. 2026-03-01T23:59+08:00 (no zone: local time)")

    s = sub.add_parser("gradescope", help="grade ROOT/submission into ROOT/results/results.json (Gradescope)")
    s.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's folder (default: /autograder)")
    _unit_option(s)
    s.add_argument("--lang", choices=["en", "zh"], default=None,
                   help="language of messages and hints (default: from the locale)")

    d = sub.add_parser("build", help="write everything derived from the topic folders and the solutions: catalogues, "
                                     "stubs, notebooks, the README's and AUTHORING's tables")
    d.add_argument("unit", nargs="?", default=None, metavar="UNIT",
                   help="a unit's name or folder (default: every unit of this repository, and its own files)")
    d.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming each stale file and the command that fixes it")
    d.add_argument("--force", action="store_true",
                   help="overwrite stubs edited since they were generated (a .bak copy of each is kept)")

    c = sub.add_parser("check", help="the checks every unit gets: kill matrix, clause tables, translations, "
                                     "no stale derived file")
    c.add_argument("unit", metavar="UNIT", help="a unit's name or folder")
    c.add_argument("--no-grading", action="store_true", help="skip grading the kill matrix (the static checks only)")
    c.add_argument("--jobs", type=int, default=2, help="processes grading the kill matrix (default: 2)")

    t = sub.add_parser("new-topic", help="add a topic to a unit with every file a topic needs, then build the unit")
    t.add_argument("unit", metavar="UNIT", help="the unit's name or folder")
    t.add_argument("name", help="the topic's id (a Python identifier): its folder's name")
    t.add_argument("--module", default=None, help="the student's module, without .py (default: the topic's id)")

    n = sub.add_parser("new-unit", help="scaffold a one-topic unit that grades out of the box")
    n.add_argument("name", help="the unit's id (a Python identifier)")
    n.add_argument("--dest", type=Path, default=Path("."), help="folder to create the unit in (default: here)")
    return p


def main(argv=None) -> int:
    """The grader's process: `python -m autograder` and the `autograder` script."""
    limit_own_memory()
    stop_on_sigterm()
    return run(argv)


def run(argv=None) -> int:
    """One command, in this process, which it leaves as it found it (no memory limit, no
    signal handler: `main` sets those up for a process of its own). The repository's tests
    call it in-process; argparse's errors raise SystemExit as they would on the command line."""
    args = _parser().parse_args(argv)
    module = f"autograder.commands.{COMMANDS[args.command]}"
    try:
        try:
            command = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            # the student repository leaves out the instructor's verbs (scripts/release.py)
            print(f"autograder: `{args.command}` is an instructor's command, which this copy of the grader "
                  "does not have (a student repository has grade, batch, pr and gradescope)", file=sys.stderr)
            return EXIT_GRADER
        return command.run(args)
    except GraderError as exc:  # UnitError and RubricError are GraderErrors too
        print(f"autograder: the grader could not run: {terminal(str(exc))}", file=sys.stderr)
        return EXIT_GRADER
    except KeyboardInterrupt:        # Ctrl-C: one line, no traceback; the `with` blocks have cleaned up
        if args.command == "grade":  # an earlier grading's reports would look like this one's
            reports.remove_earlier(args.out)
        print("autograder: interrupted; nothing was graded (run the same command again)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - anything unexpected is the grader's fault: exit 2
        traceback.print_exc()
        return EXIT_GRADER


if __name__ == "__main__":
    sys.exit(main())
