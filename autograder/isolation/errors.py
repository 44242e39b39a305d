"""What goes wrong when the grader calls into student code, as exceptions whose message
tells the student what to fix (`StudentProblem` and its kinds), and the one that means the
grader itself cannot run (`IsolationError`).

Raised by `autograder.isolation.sandbox` (and the pipe client under it), caught by the
grading's pytest plugin and by hidden suites that expect a student's error.
"""

from __future__ import annotations

from autograder.i18n import N_, _


class StudentProblem(Exception):
    """Student code failed in a way that costs the current test. `outcome` goes in the report."""

    outcome = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class StudentCodeError(StudentProblem):
    def __init__(self, message: str, exc_type: str = "", where: str = "", traceback: str = ""):
        super().__init__(message)
        self.exc_type, self.where, self.traceback = exc_type, where, traceback


class NotImplementedYet(StudentCodeError):
    """The function still raises the stub's NotImplementedError; `function` names it."""

    def __init__(self, message: str, function: str, where: str = ""):
        super().__init__(message, "NotImplementedError", where)
        self.function = function


class StudentImportError(StudentProblem):
    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status  # topic status: not_implemented | error | timeout | crashed


class StudentTimeout(StudentProblem):
    """A call reached a limit (isolation/clock.py): `limit` is "cpu" (it was `seconds` on a
    CPU: a loop that never ends, or far too much work), "blocked" (it slept or waited that
    long), "wall" (the machine was too busy to run it at all: `seconds` of wall clock), or
    "topic" / "submission" (the calls of the topic's tests, or of the whole grading, have
    spent their budget of `seconds` between them)."""

    outcome = "timeout"
    TEXTS = {
        "cpu": N_("{what} used {seconds} s of CPU time without returning (an infinite loop, or far too much work "
                  "per call)"),
        "blocked": N_("{what} slept or waited for {seconds} s without returning (time.sleep, input(), a lock: "
                      "nothing the exercise needs)"),
        "wall": N_("{what} did not return within {seconds} s of wall-clock time: the machine was too busy to run "
                   "it (grade again when it is less loaded)"),
        "topic": N_("{what} was stopped: the calls of this topic's tests have used {seconds} s of CPU time and "
                    "sleep between them, all this topic may use (make each call faster)"),
        "submission": N_("{what} was stopped: the calls of this grading have used {seconds} s of CPU time and "
                         "sleep between them, all one grading may use (make each call faster)"),
        "imports": N_("{what} was stopped: importing the submission's modules has taken {seconds} s of CPU time "
                      "and sleep in all, all the imports may take (move slow work out of module level)"),
    }

    def __init__(self, what: str, limit: str, seconds: float):
        self.limit, self.seconds = limit, seconds
        super().__init__(_(self.TEXTS[limit]).format(what=what, seconds=f"{seconds:g}"))

    def again(self, what: str) -> StudentTimeout:
        """The same limit, for a later call of the function: it is not run again."""
        later = StudentTimeout.__new__(StudentTimeout)
        later.limit, later.seconds = self.limit, self.seconds
        StudentProblem.__init__(later, _("{what} was not run again: an earlier call reached its limit ({first})")
                                .format(what=what, first=self.message))
        return later


class StudentCrash(StudentProblem):
    pass


class IsolationError(RuntimeError):
    """The worker could not be started or locked in: the grader cannot run (exit 2)."""
