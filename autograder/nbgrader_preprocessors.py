"""The course's changes to nbgrader's own pipelines (the course's nbgrader_config.py adds them).

Only the instructor's installation imports this module (it needs nbgrader); the notebooks'
kernels import autograder/notebook.py instead.

- `generate_assignment`: `ReleaseTheStubs` gives each answer cell the text of the student
  release's stub (nbgrader's own clearing would leave a module-level `raise
  NotImplementedError()` where a solution-only helper was, so the module would not import).
- `autograde`, before the notebook runs: `KeepOneCellPerId` drops copies of a course cell
  without stopping the class; `OverwriteCellsQuietly` warns about a locked cell only when
  the student changed it, and a cell copied from another notebook (an id this notebook does
  not have) becomes the student's own; `OnlyAnswerCellsRun` lets no student code run in
  the kernel; `GradingSettings` tells the test cells the submission's seed and the
  instructor's `hidden_detail`.
- `autograde` and `generate_feedback`: `StudentTextAsText` shows a student's Markdown and
  raw cells as text, never as HTML.
- `generate_feedback`: `WrappedFeedback` wraps the grader's messages and hints.
"""

from __future__ import annotations

import re
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells
from traitlets import Bool, Enum, List

from autograder.grading.seed import modules_seed
from autograder.notebook import GRADING_KEY, REMOVED, STUB_KEY, answer_body, answer_module, modules_in
from autograder.reports.detail import HIDDEN_DETAIL
from autograder.unit.load import load_unit

# Output (the grader's messages and hints) wraps instead of scrolling out of sight.
WRAP_OUTPUT_CSS = """div.output_area pre, div.output_subarea pre {
  white-space: pre-wrap !important; overflow-wrap: anywhere; overflow-x: visible !important;
}"""


class ReleaseTheStubs(NbGraderPreprocessor):
    """After ClearSolutions: an answer cell becomes the released text kept in its metadata,
    which scripts/make_nbgrader.py made with the very transformation of `make stubs`."""

    def preprocess_cell(self, cell, resources, index):
        released = cell.metadata.pop(STUB_KEY, None)
        if released is not None and answer_module(cell) is not None:
            cell.source = released
        return cell, resources


class KeepOneCellPerId(NbGraderPreprocessor):
    """nbgrader's DeduplicateIds, without stopping the class.

    A cell copied and pasted in Jupyter keeps its nbgrader metadata, so two cells share a
    grade_id. DeduplicateIds keeps the last and empties the others' metadata to `{}`, which
    CheckCellMetadata then takes for an outdated schema: `nbgrader autograde` raises
    SchemaTooOldError and grades no one after that student. Here a copy loses its nbgrader
    metadata entirely and so becomes one of the student's own cells (which do not run); the
    last cell with the id is graded as usual. So does nbgrader metadata without an id (no
    course cell lacks one), and a schema version the student changed is put back, as
    OverwriteCells puts back the rest of a course cell: a schema nbgrader does not know
    would stop the class too (SchemaTooOldError, SchemaTooNewError)."""

    def preprocess(self, nb, resources):
        seen = set()
        for cell in reversed(nb.cells):
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            if not isinstance(meta, dict) or "grade_id" not in meta:
                del cell.metadata["nbgrader"]       # made up by the student: no course cell lacks an id
            elif meta["grade_id"] in seen:
                self.log.warning("Cell with id '%s' exists multiple times: the copy is not graded", meta["grade_id"])
                del cell.metadata["nbgrader"]
            else:
                seen.add(meta["grade_id"])
                meta["schema_version"] = MetadataValidator.schema_version
        return nb, resources


class OverwriteCellsQuietly(OverwriteCells):
    """nbgrader's OverwriteCells without the false tamper warning of every hidden test cell.

    The gradebook keeps a locked cell's checksum from before ClearHiddenTests, so a hidden
    test cell exactly as released never matches it and nbgrader warns "Attribute 'checksum'
    ... has changed!" for every hidden cell of every student (jupyter/nbgrader#1961). A cell
    whose source is the released form of the gradebook's is put back to the gradebook's
    source before the check; any other change still warns and is overwritten."""

    def preprocess_cell(self, cell, resources, index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                # A cell copied from another notebook: nbgrader drops only its id, and the
                # id-less metadata left then fails CheckCellMetadata, which scores the whole
                # submission 0. It becomes one of the student's own cells instead.
                self.log.warning("Cell with id '%s' is no cell of %s (copied from another notebook?): not graded",
                                 grade_id, self.notebook_id)
                del cell.metadata["nbgrader"]
                return cell, resources
            if source_cell.locked and cell.source == released(source_cell.source):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, index)


def released(source: str) -> str:
    """A cell's source as generate_assignment releases it: without its hidden tests."""
    cell = NotebookNode(source=source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class OnlyAnswerCellsRun(NbGraderPreprocessor):
    """Before `nbgrader autograde` executes a notebook: answer cells become `%%writefile`
    of their module again, test and setup cells stay (nbgrader restored them from the
    gradebook), and any other code cell is emptied."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        meta = cell.metadata.get("nbgrader", {})
        module = answer_module(cell)
        if module is not None and module.isidentifier():
            cell.source = f"%%writefile {module}.py\n" + answer_body(cell.source)
        elif module is not None or not (meta.get("grade") or meta.get("locked")):
            cell.source = REMOVED
        return cell, resources


class GradingSettings(NbGraderPreprocessor):
    """autograde, before the notebook runs: its metadata tells its test cells (grade_cell)
    what to grade with.

    - `seed`: the seed `python -m autograder grade` derives from the whole submission's
      modules. Each notebook's kernel sees only the notebooks autograded before it, so the
      seed it derived from those drew other hidden inputs than `grade` (other numbers in
      the messages, and for code that is right on some inputs only, another score).
    - `hidden_detail`: what the feedback shows of a failing hidden test, the levels of
      `pr --hidden-detail` (reports.detail): "hints" (message and hint, the default, as
      `grade` reports), "tests" (the message), "total" (how many of the topic's hidden
      tests failed). The score is the same at every level."""

    hidden_detail = Enum(HIDDEN_DETAIL, default_value="hints", help="what the feedback shows of a failing hidden "
                         "test: hints, tests (no hint) or total (only how many failed)").tag(config=True)

    def preprocess(self, nb, resources):
        # The notebook as submitted: its folder holds the whole submission's notebooks.
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        sources = {m: text.encode("utf-8") for m, text in modules_in(folder).items()}
        nb.metadata[GRADING_KEY] = {"seed": modules_seed(load_unit(), sources), "hidden_detail": self.hidden_detail}
        return nb, resources


class StudentTextAsText(Preprocessor):
    """autograde and generate_feedback: a Markdown or raw cell the student wrote is shown as
    the text they typed, never as HTML. nbgrader's feedback template renders Markdown without
    sanitising it (a student's `<script>` or `<img onerror=...>` ran in the page) and a raw
    cell as it is; the course's own text cells are the locked ones, put back from the
    gradebook by autograde."""

    enabled = Bool(True).tag(config=True)       # nbconvert's preprocessors are off by default

    def preprocess_cell(self, cell, resources, index):
        course_cell = bool((cell.metadata.get("nbgrader") or {}).get("locked"))
        if cell.cell_type in ("markdown", "raw") and not course_cell:
            if cell.cell_type == "raw" or not as_text(cell.source):
                cell.source = as_text_block(cell.source)
            cell.cell_type = "markdown"
            cell.metadata.pop("raw_mimetype", None)
            cell.metadata.pop("format", None)
            cell.pop("attachments", None)
        return cell, resources


def as_text_block(text: str) -> str:
    """Markdown showing `text` as typed: a fenced block, its fence longer than any run of
    backticks in it (so nothing in it can close the block early)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def as_text(source: str) -> bool:
    """Whether Markdown `source` is already one such block (autograde made it one before
    generate_feedback sees it: it is not wrapped twice)."""
    match = re.fullmatch(r"(`{3,})text\n(.*)\n\1", source, flags=re.DOTALL)
    return match is not None and as_text_block(match.group(2)) == source


class ClearHiddenTestsInFeedback(ClearHiddenTests):
    """ClearHiddenTests in generate_feedback, accepting nbconvert's HTML setting of
    `display_data_priority` (nbgrader's preprocessors redeclare it without `config=True`,
    so traitlets warned "Config option `display_data_priority` not recognized")."""

    display_data_priority = List(ClearHiddenTests.class_traits()["display_data_priority"].default()).tag(config=True)


class WrappedFeedback(Preprocessor):
    """generate_feedback, after CSSHTMLHeaderPreprocessor: long output lines wrap (nbconvert's
    style keeps each on one line in a box that scrolls sideways, cutting the message off)."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        resources.setdefault("inlining", {}).setdefault("css", []).append(WRAP_OUTPUT_CSS)
        return nb, resources
