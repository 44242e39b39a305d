"""The grader could not run: the one family of errors that are the instructor's to fix (a
broken unit folder, rubric or suite, a command line that names nothing to do), never the
student's. Every command catches `GraderError` and exits with status 2 (a batch writes the
row `grader_error`); its kinds keep their names where they are raised:
`autograder.unit.model.UnitError`, `autograder.unit.rubric.RubricError`.

This module imports nothing: every layer of the engine may raise these.
"""

from __future__ import annotations


class GraderError(RuntimeError):
    """The grader itself could not run (exit status 2): a broken suite or rubric, not the student."""
