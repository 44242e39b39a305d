"""Grade a pull request on CI with the instructor's trusted grader:

    python -m autograder pr CHECKOUT --manifest protected-files.sha256 --out reports
        [--hidden-detail total|tests|hints] [--fail-under PCT]

This package, the unit's rubric, hidden suites and reference come from the instructor's
grader bundle, never from the pull request. From the pull request's checkout only the
module files (`<stubs>/<module>.py`, regular files, never through a link) are taken. Every
protected file of the checkout (public tests, engine, Makefile, workflows: the bundle's
manifest) is compared with the instructor's hash; a difference marks the submission
`tampered` in every report, and the score is the one the original files give.

On GitHub it also writes the job summary ($GITHUB_STEP_SUMMARY), the body of the
pull-request comment (`<out>/comment.md`, with a marker so one comment is updated per
push), and outputs for the workflow ($GITHUB_OUTPUT: score, possible, pr).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from autograder import reports
from autograder.grading.run import Options
from autograder.i18n import _
from autograder.intake.files import copy_submission
from autograder.intake.manifest import read_manifest, tampered_files
from autograder.intake.submissions import linked_module_file, links_on_the_way
from autograder.pipeline import grade_and_report, pass_mark_status, refusal
from autograder.reports import markdown
from autograder.unit.load import load_unit

COMMENT_MARKER = "<!-- autograder:score -->"


def github_event(path: str | None) -> dict:
    try:
        return json.loads(Path(path).read_text()) if path else {}
    except (OSError, ValueError):
        return {}


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def run(args) -> int:
    started = time.perf_counter()
    unit = load_unit(args.unit)
    checkout = args.checkout.resolve()
    tampered = tampered_files(checkout, read_manifest(args.manifest),
                              {f"{unit.stubs}/{module}.py" for module in unit.modules})
    options = Options("all", None, args.seed, lang=args.lang)
    linked = linked_module_file(checkout / unit.stubs, unit.modules)
    if link := links_on_the_way(checkout, Path(unit.stubs)) or (linked and f"{unit.stubs}/{linked}"):
        # Refused, and said so in every report of the path: a score of 0, the reason on every test.
        reason = _("{link} is a link in the pull request: the grader follows no link to the module files; commit "
                   "the files themselves there").format(link=link)
        print(f"refused: {reason}", file=sys.stderr)
        result = refusal(unit, str(args.checkout), reason, options, started, tampered, args.fail_under)
        args.out.mkdir(parents=True, exist_ok=True)
        reports.write_all(args.out, result, (), args.hidden_detail)
        _publish(args, result, ())
        return pass_mark_status(result)
    with tempfile.TemporaryDirectory(prefix="autograder-pr-") as tmp:
        submission = Path(tmp) / "submission"
        copy_submission(checkout / unit.stubs, submission, unit.modules)
        # The evidence describes the pull request's own module folder: its commit, and a command that replays it.
        command = "python -m autograder pr " + " ".join(sys.argv[2:])
        result, images = grade_and_report(unit, submission, args.out, options,
                                          command, started, shown_as=str(args.checkout), tampered=tampered,
                                          hidden_detail=args.hidden_detail, pass_mark=args.fail_under,
                                          source=checkout / unit.stubs)
    _publish(args, result, images)
    return pass_mark_status(result)


def _publish(args, result, images) -> None:
    """The job summary, the comment's body and the workflow's outputs."""
    # The job summary and the comment cannot show the figure: it is in the uploaded reports.
    summary = markdown.render(result, (), args.hidden_detail)
    if any(name for name, _caption in images):
        summary += "\nThe figure and every report are in this run's `reports` artifact.\n"
    reports.atomic_write(args.out / "comment.md", f"{COMMENT_MARKER}\n{summary}")
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), summary)
    number = (github_event(os.environ.get("GITHUB_EVENT_PATH")).get("pull_request") or {}).get("number", "")
    _append(os.environ.get("GITHUB_OUTPUT"),
            f"score={result.earned:g}\npossible={result.possible:g}\npr={number}\n"
            f"tampered={'true' if result.tampered else 'false'}\n")
    print(f"{result.earned:g} / {result.possible:g}" + (" (tampered)" if result.tampered else ""))
