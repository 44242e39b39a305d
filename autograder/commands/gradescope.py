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

from autograder import i18n, reports
from autograder.errors import GraderError
from autograder.grading.run import Options
from autograder.i18n import _
from autograder.intake import submissions
from autograder.intake.submissions import EntryStatus
from autograder.pipeline import grade_and_report, refusal
from autograder.reports import gradescope_results
from autograder.reports.files import atomic_write
from autograder.unit.load import load_unit


def _explain(results: Path, why: str) -> None:
    atomic_write(results / "results.json", json.dumps(gradescope_results.without_grading(why), indent=2) + "\n")


def run(args) -> int:
    started = time.perf_counter()
    root = Path(args.root)
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    unit = load_unit(args.unit)
    i18n.activate(args.lang, unit.locale_dirs())        # what the student reads when nothing is graded
    entry = submissions.from_upload(root / "submission", {t.module for t in unit.topics})
    if entry.status != EntryStatus.OK:
        print(f"nothing graded: {entry.status}: {entry.detail}")
        files = ", ".join(sorted(t.module + ".py" for t in unit.topics))
        why = _("Nothing was graded: {why}. Upload your module files ({files}), or your repository.").format(
            why=entry.detail, files=files)
        # Every test listed at 0 with the reason, as a graded upload lists them.
        result = refusal(unit, "submission", why, Options(lang=args.lang), started)
        reports.write_all(results / "reports", result)
        shutil.copyfile(results / "reports" / "results.json", results / "results.json")
        return 0
    assert entry.folder is not None               # an OK entry has its module files' folder
    options = Options(lang=args.lang, shown_folder=entry.shown_as or None)
    command = "python -m autograder grade <your folder>"
    try:
        result, _images = grade_and_report(unit, entry.folder, results / "reports", options, command, started)
    except GraderError as exc:  # UnitError and RubricError are GraderErrors too
        print(f"the grader could not run: {exc}")
        _explain(results, _("The autograder could not run on this submission; your instructor can see "
                            "why in the autograder's output."))
        return 0
    shutil.copyfile(results / "reports" / "results.json", results / "results.json")
    print(f"{result.earned:g} / {result.possible:g}")
    return 0
