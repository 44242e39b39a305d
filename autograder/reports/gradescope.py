"""reports/results.json in Gradescope's autograder format."""

from __future__ import annotations

import json

from autograder.grading.score import GradeResult
from autograder.i18n import _
from autograder.reports.markdown import seed_note, tamper_note
from autograder.reports.text import plain


def render(result: GradeResult) -> str:
    tests = []
    for t in result.topics:
        for x in t.tests:
            out = "" if x.passed else plain(x.message) + (_("\nHint: {hint}").format(hint=x.hint) if x.hint else "")
            tests.append({"name": f"{t.id} {x.id}", "score": x.earned, "max_score": x.possible,
                          "status": "passed" if x.passed else "failed", "output": out,
                          "visibility": "visible" if x.id.startswith("public::") else "after_published"})
    doc = {"score": result.earned, "max_score": result.possible, "execution_time": result.duration_s,
           "output": plain("\n".join(filter(None, [tamper_note(result), seed_note(result)]))), "tests": tests}
    return json.dumps(doc, indent=2) + "\n"
