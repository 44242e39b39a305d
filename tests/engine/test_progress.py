"""batch's progress: redrawn in place on a terminal (done/total, rate, time left), quiet in a
CI log (a line per tenth of the class and per submission that could not be graded)."""

from __future__ import annotations

import io

from autograder.commands.batch import Progress


class Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run(tty: bool, total: int = 200, failing=(57,)) -> str:
    stream, clock = Stream(tty), Clock()
    progress = Progress(total, stream, clock)
    for k in range(total):
        clock.now += 2.0                                 # one submission every 2 s
        status = "grader_error" if k in failing else "graded"
        progress.tick({"submission": f"s{k}", "status": status, "earned": 1, "possible": 2, "detail": "boom"})
    return stream.getvalue()


def test_a_terminal_gets_one_line_redrawn_with_rate_and_time_left():
    out = run(tty=True)
    frames = out.split("\r")[1:]
    assert len(frames) == 200 and out.endswith("\n") and out.count("\n") == 1
    assert frames[99].strip() == "100/200 graded, 0.50/s, 1 failed, about 3 min left"
    assert frames[-1].strip() == "200/200 graded, 0.50/s, 1 failed, about 0 s left"


def test_a_ci_log_stays_quiet_but_names_what_failed():
    lines = run(tty=False).splitlines()
    assert "\r" not in "".join(lines)
    assert lines.count("s57: grader_error: boom") == 1
    summaries = [line for line in lines if line.startswith("[")]
    assert len(summaries) == 11                             # ten tenths, and the failure's own
    assert summaries[-1] == "[200/200] graded, 0.50/s, 1 failed, about 0 s left"
    assert len(run(tty=False, total=3, failing=()).splitlines()) == 3      # a small class: each one
