"""reports/results.json in Gradescope's autograder format
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format").

Every key is one the specification names: the score, the execution time, an overall
output, and one test per rubric entry with its name, score, max_score, status, output and
visibility. Outputs are Markdown (`output_format` and `test_output_format` "md"), each
message one line of inert Markdown (the student's text cannot start a link, an image or
HTML). Public entries are visible at once; hidden ones after the instructor publishes the
grades. What the specification has no key for (the possible total, the seed, the grader
version, the tampered files, the pass mark) goes in `extra_data`.
"""

from __future__ import annotations

import json

from autograder.grading.score import GradeResult
from autograder.i18n import _
from autograder.reports.markdown import pass_mark_note, refusal_note, seed_note, tamper_note
from autograder.reports.text import markdown


def _output(test) -> str:
    if test.passed:
        return ""
    text = markdown(test.message, 2000)
    return text + ("\n\n" + markdown(_("Hint: {hint}").format(hint=test.hint), 1000) if test.hint else "")


def document(result: GradeResult) -> dict:
    tests = [{"name": f"{t.id} {x.id}", "score": x.earned, "max_score": x.possible,
              "status": "passed" if x.passed else "failed", "output": _output(x), "output_format": "md",
              "visibility": "after_published" if x.id.hidden else "visible"}
             for t in result.topics for x in t.tests]
    notes = [markdown(note, 2000) for note in (pass_mark_note(result), tamper_note(result), seed_note(result)) if note]
    if result.refused:                   # already escaped by refusal_note
        notes.insert(0, refusal_note(result))
    extra = {"max_score": result.possible, "seed": result.seed, "grader_version": result.grader_version}
    if result.tampered is not None:
        extra["tampered"] = list(result.tampered)
    if result.pass_mark is not None:
        extra["pass_mark"] = {"percent": result.pass_mark, "reached": not result.below_pass_mark}
    return {"score": result.earned, "execution_time": round(result.duration_s),
            "output": "\n\n".join(notes), "output_format": "md", "test_output_format": "md",
            "stdout_visibility": "hidden", "visibility": "visible",
            "extra_data": extra,
            "tests": tests}


def without_grading(why: str) -> dict:
    """The results.json of a submission that was not graded: score 0 and the reason."""
    return {"score": 0.0, "execution_time": 0, "output": markdown(why, 2000), "output_format": "md",
            "stdout_visibility": "hidden", "visibility": "visible", "tests": []}


def render(result: GradeResult) -> str:
    return json.dumps(document(result), indent=2) + "\n"
