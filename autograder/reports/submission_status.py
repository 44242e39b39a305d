"""What became of one submission of a class: class.csv's `status` column, which `batch`
writes, `merge` joins, and the class report and `export` read. Its values are the words
class.csv has always held; the groups below are the only lists of them.

A topic's own status (score.json's, `grading.score.TopicStatus`) is another thing: its
`timeout` is the import of the topic's module over the import limit (and a test's outcome
`timeout`, `grading.score.Outcome`, one call over the limit of a call), where
`OVER_TIME_LIMIT` is the grading of a whole submission over `batch --timeout`.
"""

from __future__ import annotations

from enum import StrEnum

from autograder.intake.submissions import EntryStatus


class SubmissionStatus(StrEnum):
    GRADED = "graded"
    NOT_IMPLEMENTED = "not_implemented"      # graded, and every topic still the stub
    MISSING = EntryStatus.MISSING.value                    # intake's word: nothing handed in
    NOT_A_SUBMISSION = EntryStatus.NOT_A_SUBMISSION.value  # intake's word: nothing the grader may read
    GRADER_ERROR = "grader_error"            # the grader could not run
    # The whole grading took longer than `batch --timeout`. class.csv keeps the word it has
    # always written ("timeout"): instructors' scripts read it.
    OVER_TIME_LIMIT = "timeout"


# The grading ran to its end: the row has a score to send.
GRADED = (SubmissionStatus.GRADED, SubmissionStatus.NOT_IMPLEMENTED)
NOT_GRADED = tuple(s for s in SubmissionStatus if s not in GRADED)
# Something was handed in and could not be graded: what `batch`'s progress counts as failed
# (a missing submission is the student's absence, not a failure to grade).
FAILED = tuple(s for s in NOT_GRADED if s is not SubmissionStatus.MISSING)
