"""Command line: `python -m autograder grade [DIR]`, `batch ROOT`, `merge SHARD_DIR...`,
`pr CHECKOUT` (CI), `gradescope` (Gradescope's run_autograder) and `new-unit NAME`.

Exit status: 0 graded; 1 graded but below --fail-under; 2 the grader could not run.
The assignment is a unit folder (`--assignment NAME|PATH`); with one unit installed it
is the default.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

from autograder import assignment, reports
from autograder.i18n import _
from autograder.reports.markdown import pass_mark_note
from autograder.reports.text import terminal

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
    g.add_argument("--jobs", type=int, default=1, help="accepted for symmetry with batch; one submission uses one worker")
    g.add_argument("--quiet", action="store_true", help="print only the total")
    g.add_argument("--trust-submission", action="store_true",
                   help="the code is trusted (e.g. the reference): grade it even where it cannot be isolated")
    b.add_argument("--out", type=Path, required=True, help="one report folder per submission, plus class.csv")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    b.add_argument("--shard", default="1/1", metavar="K/N", help="grade only the K-th of N shards (1-based)")
    b.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                   help="wall-clock limit per submission; a submission over it is recorded as timeout")
    b.add_argument("--force", action="store_true",
                   help="regrade every submission (default: skip those graded before by the same grader version "
                        "with the same seed)")
    b.add_argument("--plan", type=Path, default=None, metavar="FILE",
                   help="JSON {submission folder name: [topic id or TOPIC::SUITE::NAME test, ...]}: grade those "
                        "submissions on those topics and tests only (the others on --topic, or everything)")
    b.add_argument("--manifest", type=Path, default=None, metavar="FILE",
                   help="the release's protected-files.sha256: a submission that holds the student repository "
                        "is flagged in class.csv's tampered column when it changed a protected file")
    from autograder import gradescope, merge, new_unit, pr

    pr.add_parser(sub)
    merge.add_parser(sub)
    gradescope.add_parser(sub)
    new_unit.add_parser(sub)
    return p


class Artefacts:
    """The unit's extra report files (its `artefacts` module), or nothing. The hook is
    created before grading (so it can start slow work early) and asked to write after it."""

    def __init__(self, unit, topics, suite: str):
        self.hook, self.files, self.first_topics = None, (), ()
        if unit.artefacts:
            module = unit.import_module(unit.artefacts)
            self.hook = module.Artefacts(unit, [t.id for t in topics], suite)
            self.files = tuple(getattr(self.hook, "FILES", ()))
            # Topics whose data the hook can start working on before grading ends: run first.
            self.first_topics = tuple(getattr(self.hook, "FIRST_TOPICS", ()))

    def topic_done(self, topic: str, extras: dict) -> None:
        if hasattr(self.hook, "topic_done"):
            self.hook.topic_done(topic, extras)

    def write(self, out: Path, result, submission: Path, command: str) -> list[tuple[str, str]]:
        """Write the unit's artefacts; return the images to show in score.md as (name, caption).
        A grading of selected tests (--test) writes none: they describe a whole grading."""
        written = self.hook.write(out, result, submission, command) if self.hook and not result.selected_tests else []
        names = {Path(path).name for path, _ in written}
        for name in self.files:        # never leave a previous run's artefact beside a new score
            if name not in names and (out / name).exists():
                (out / name).unlink()
        return [(Path(path).name, caption) for path, caption in written if caption]

    def close(self) -> None:
        if self.hook is not None:
            self.hook.close()


def grade_and_report(unit, submission: Path, out: Path, options, command: str, started: float,
                     shown_as: str | None = None, tampered: list[str] | None = None, hidden_detail: str = "hints",
                     artefacts: Artefacts | None = None, image=None, spare: bool = True,
                     pass_mark: float | None = None, source: Path | None = None):
    """The whole run: grading (probe, suites, score), then the unit's artefacts, then the
    reports. `shown_as` and `tampered` are what the reports say of the submission (a pull
    request's checkout), `pass_mark` the percentage --fail-under asks for, `source` the
    folder the submission's files were copied from (the artefacts describe it: its commit,
    the commands that replay the grading). A batch job passes the artefacts hook and the
    worker image it keeps for all its submissions, and whether its workers get a spare
    (`run.grade`).
    Returns the result and the images score.md shows."""
    from autograder.grading.run import SUITES, grade, select_topics
    from autograder.isolation.image import image_config, start_image

    own_image, own_artefacts = image is None, artefacts is None
    # The worker image first: its start-up (numpy, the preload list) overlaps everything below.
    image = image or start_image(image_config(unit, "hidden" in SUITES[options.suite], options.trusted))
    try:
        artefacts = artefacts or Artefacts(unit, select_topics(unit, options.topics, options.tests), options.suite)
        try:
            result = grade(unit, submission, options, started, image=image, observer=artefacts, spare=spare)
            result.submission = shown_as or result.submission
            result.tampered = tampered
            result.pass_mark = pass_mark
            images = artefacts.write(out, result, source or submission, command)
        finally:
            if own_artefacts:
                artefacts.close()
    finally:
        if own_image:
            image.close()
    reports.write_all(out, result, images, hidden_detail)
    return result, images


def cmd_grade(args) -> int:
    started = time.perf_counter()
    unit = assignment.load(args.assignment)
    submission = args.submission if args.submission is not None else Path(unit.stubs)
    if not submission.is_dir():
        print(f"autograder: submission folder {submission} does not exist", file=sys.stderr)
        return EXIT_GRADER
    from autograder.intake import link_in_given_path

    if link := link_in_given_path(submission):
        print(f"autograder: {link} is a link: the grader follows no link to the module files; "
              "grade the folder itself", file=sys.stderr)
        return EXIT_GRADER
    from autograder.grading.run import Options

    options = Options(args.suite, tuple(args.topics or ()) or None, args.seed, args.trust_submission, args.lang,
                      tests=tuple(args.tests or ()) or None)
    command = "python -m autograder grade " + " ".join(sys.argv[2:])
    result, _ = grade_and_report(unit, submission, args.out, options, command, started, pass_mark=args.fail_under)
    if args.quiet:
        print(f"{result.earned:g} / {result.possible:g}")
    else:
        from autograder.reports import terminal as terminal_report

        print(terminal_report.table(result, args.out))
        if result.sandbox_info.get("mode") == "none":
            print(f"note: the code ran without isolation ({terminal(result.sandbox_info.get('reason', ''))}): "
                  "only limits on time, memory and processes applied")
    return pass_mark_status(result)


def pass_mark_status(result) -> int:
    """Say whether the score reached the pass mark (if one was given), and the exit status for it."""
    if result.pass_mark is None:
        return EXIT_OK
    print(terminal(pass_mark_note(result)) + (_(" (--fail-under: exit status 1)") if result.below_pass_mark else ""))
    return EXIT_BELOW if result.below_pass_mark else EXIT_OK


GRADER_ADDRESS_SPACE = 4 << 30


def limit_own_memory() -> None:
    """A memory limit on the grader itself: a reply it cannot refuse in time must not take
    the machine down with it. Workers set their own, lower limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > GRADER_ADDRESS_SPACE:
        resource.setrlimit(resource.RLIMIT_AS, (GRADER_ADDRESS_SPACE, hard))


def stop_on_sigterm() -> None:
    """SIGTERM (batch's time limit) ends grading like Ctrl-C: pytest stops, and the
    Sandbox's `with` block kills the worker on the way out."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    limit_own_memory()
    stop_on_sigterm()
    from autograder.grading.rubric import RubricError
    from autograder.grading.score import GraderError

    try:
        if args.command == "grade":          # the others' modules are imported only for them
            return cmd_grade(args)
        name = args.command.replace("-", "_")          # new-unit -> autograder.new_unit.cmd_new_unit
        command = importlib.import_module(f"autograder.{name}")
        return getattr(command, f"cmd_{name}")(args)
    except (GraderError, RubricError, assignment.UnitError) as exc:
        print(f"autograder: the grader could not run: {terminal(str(exc))}", file=sys.stderr)
        return EXIT_GRADER
    except Exception:  # noqa: BLE001 - anything unexpected is the grader's fault: exit 2
        traceback.print_exc()
        return EXIT_GRADER


if __name__ == "__main__":
    sys.exit(main())
