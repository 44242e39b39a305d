"""`python -m autograder grade [DIR]`: grade one submission folder (default: the unit's
stubs) into a report folder, and print the table of topics (or only the total)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autograder.grading.run import Options
from autograder.intake.submissions import link_in_given_path
from autograder.pipeline import EXIT_GRADER, grade_and_report, pass_mark_status
from autograder.reports import terminal as terminal_report
from autograder.reports.text import terminal
from autograder.unit.load import load_unit


def run(args) -> int:
    started = time.perf_counter()
    unit = load_unit(args.unit)
    submission = args.submission if args.submission is not None else Path(unit.stubs)
    if not submission.is_dir():
        print(f"autograder: submission folder {submission} does not exist", file=sys.stderr)
        return EXIT_GRADER
    if link := link_in_given_path(submission):
        print(f"autograder: {link} is a link: the grader follows no link to the module files; "
              "grade the folder itself", file=sys.stderr)
        return EXIT_GRADER
    options = Options(args.suite, tuple(args.topics or ()) or None, args.seed, args.trust_submission, args.lang,
                      tests=tuple(args.tests or ()) or None)
    command = "python -m autograder grade " + " ".join(sys.argv[2:])
    result, images = grade_and_report(unit, submission, args.out, options, command, started,
                                      pass_mark=args.fail_under)
    if args.quiet:
        print(f"{result.earned:g} / {result.possible:g}")
    else:
        print(terminal_report.table(result, args.out))
        for name, why in images:        # a report file the README promises, not written: why
            if not name:
                print(f"note: {terminal(why)}")
        if result.sandbox_info.get("mode") == "none":
            print(f"note: the code ran without isolation ({terminal(result.sandbox_info.get('reason', ''))}): "
                  "only limits on time, memory and processes applied")
    return pass_mark_status(result)
