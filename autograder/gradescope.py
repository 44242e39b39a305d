"""`python -m autograder gradescope [--root /autograder]`: what Gradescope's `run_autograder`
runs for each submission (dist/gradescope.zip, written by `make release`).

Gradescope puts the student's upload in ROOT/submission (the module files, the folder
holding them, or a clone of the student repository: found as `batch` finds them) and
expects ROOT/results/results.json. The grading is the same as `grade`: the same engine,
hidden suites and worker isolation. When there is nothing to grade, or the grader cannot
run, results.json still says why (score 0, the reason in its output) and the full detail
goes to stdout, which Gradescope shows the instructor only.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from autograder import assignment, i18n, intake
from autograder.i18n import _
from autograder.reports import gradescope as results_format
from autograder.reports.files import atomic_write


def _explain(results: Path, why: str) -> None:
    atomic_write(results / "results.json", json.dumps(results_format.without_grading(why), indent=2) + "\n")


def cmd_gradescope(args) -> int:
    from autograder.cli import grade_and_report
    from autograder.grading.rubric import RubricError
    from autograder.grading.run import Options
    from autograder.grading.score import GraderError

    started = time.perf_counter()
    root = Path(args.root)
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    unit = assignment.load(args.assignment)
    i18n.activate(args.lang, unit.path / "locale")        # what the student reads when nothing is graded
    entry = intake.from_upload(root / "submission", {t.module for t in unit.topics})
    if entry.status != "ok":
        print(f"nothing graded: {entry.status}: {entry.detail}")
        files = ", ".join(sorted(t.module + ".py" for t in unit.topics))
        _explain(results, _("Nothing was graded: {why}. Upload your module files ({files}), or your "
                            "repository.").format(why=entry.detail, files=files))
        return 0
    options = Options(lang=args.lang, shown_folder=entry.shown_as or None)
    command = "python -m autograder grade <your folder>"
    try:
        result, _images = grade_and_report(unit, entry.folder, results / "reports", options, command, started)
    except (GraderError, RubricError, assignment.UnitError) as exc:
        print(f"the grader could not run: {exc}")
        _explain(results, _("The autograder could not run on this submission; your instructor can see "
                            "why in the autograder's output."))
        return 0
    shutil.copyfile(results / "reports" / "results.json", results / "results.json")
    print(f"{result.earned:g} / {result.possible:g}")
    return 0


def add_parser(sub) -> None:
    g = sub.add_parser("gradescope", help="grade ROOT/submission into ROOT/results/results.json (Gradescope)")
    g.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's folder (default: /autograder)")
    g.add_argument("--assignment", default=None, metavar="NAME|PATH",
                   help="the unit to grade (default: the only one installed)")
    g.add_argument("--lang", choices=["en", "zh"], default=None,
                   help="language of messages and hints (default: from the locale)")
