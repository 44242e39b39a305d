"""What a call into student code has spent, as the kernel counts it.

A call's limit counts the time the process running student code spends on a CPU, and the
time it spends blocked (asleep, waiting), but not the time it waits for a core: on a busy
machine (a class regraded on every core, a shared CI runner, a student's laptop) a correct
call waits for a core as long as the machine's load makes it, and the same submission must
get the same score there as on an idle machine. The grader reads these times from the
kernel (`/proc/<pid>/schedstat`: nanoseconds on a CPU, nanoseconds runnable but waiting for
one), never from the worker, whose code is the student's:

    blocked = wall clock - on a CPU - waiting for a CPU - the grader's own time answering
              the call's callbacks (the worker waits for those: not the student's time)

A wall-clock backstop several times the limit ends a call on a machine so overloaded that
neither clock reaches its limit.

    clock = ProcessClock.of_worker(worker_pid)      # None where the kernel cannot tell
    budget = Budget(cpu_s=5, wall_s=60, clock=clock, blocked_s=5)  # at the start of one call
    budget.excuse(seconds)   # the grader worked for the call (a callback) this long
    budget.wait_s()          # how long to wait for the reply before looking again; 0: spent
    budget.spent             # "cpu", "blocked" or "wall" once a limit was reached

Where no clock can be had (no /proc: macOS), the CPU limit is applied to the wall clock
less the excused time, as if the call had had a core to itself the whole time.
"""

from __future__ import annotations

import os
import time

# A look at most this often: the kernel updates a running process's times at its tick
# (1-10 ms), so looking more often learns nothing.
MIN_WAIT_S = 0.01


class ProcessClock:
    """The scheduler's times of one process, in seconds, read from the kernel on every ask."""

    def __init__(self, pid: int):
        self.pid = pid
        self._fd = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)

    @classmethod
    def of_worker(cls, pid: int) -> ProcessClock | None:
        """The clock of the process that runs student code: the worker started as `pid`
        forks it (through its namespace's init) and waits; student code can start no
        process, so it is the one descendant with no child. None without /proc."""
        try:
            while True:
                with open(f"/proc/{pid}/task/{pid}/children") as fh:
                    children = fh.read().split()
                if not children:
                    return cls(pid)
                pid = int(children[-1])
        except (OSError, ValueError):
            return None

    def times(self) -> tuple[float, float] | None:
        """(seconds on a CPU, seconds runnable but waiting for a CPU) so far; None once the
        process is gone."""
        try:
            on_cpu, waiting = os.pread(self._fd, 64, 0).split()[:2]
            return int(on_cpu) / 1e9, int(waiting) / 1e9
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class TreeClock:
    """The CPU time of a process and all its descendants (alive, or ended and reaped by one of
    them), from /proc/<pid>/stat: a batch job grading a submission, its worker image and the
    workers it forks. `times()` as ProcessClock's, without the waiting time (0)."""

    TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __init__(self, pid: int):
        self.pid = pid

    def times(self) -> tuple[float, float] | None:
        total, todo, seen = 0, [self.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15])      # utime stime cutime cstime
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        todo += [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                if pid == self.pid:
                    return None
        return total / self.TICK, 0.0


class Budget:
    """The limits of one call: `cpu_s` on a CPU, `blocked_s` blocked (None: not limited),
    `wall_s` of wall clock."""

    def __init__(self, cpu_s: float, wall_s: float, clock: ProcessClock | TreeClock | None,
                 blocked_s: float | None = None):
        self.cpu_s, self.wall_s, self.clock, self.blocked_s = cpu_s, max(wall_s, cpu_s), clock, blocked_s
        self.started = time.monotonic()
        self._start = clock.times() if clock is not None else None
        self.excused = 0.0
        # One process's clocks never run faster than the wall clock; a tree's may (a process per
        # core): it is looked at once a second at least.
        self._longest_wait = cpu_s if clock is None or isinstance(clock, ProcessClock) else 1.0
        self._next_look = self.started + min(cpu_s, self._longest_wait)
        self.spent: str | None = None             # "cpu", "blocked" or "wall", once a limit is reached
        self.cpu = self.blocked = 0.0             # what the call had used at the last look

    def excuse(self, seconds: float) -> None:
        """The worker waited `seconds` for the grader (a callback being answered). At most the
        call's CPU limit is excused in all: a call that keeps the grader busy for longer (a
        lent stand-in called over and over) spends its own budget on the rest."""
        accepted = max(0.0, min(seconds, self.cpu_s - self.excused))
        self.excused += accepted
        self._next_look += accepted

    def look(self) -> float:
        """Update `cpu` and `blocked`; return the wall-clock seconds since the start."""
        wall = time.monotonic() - self.started
        now = self.clock.times() if self.clock is not None and self._start is not None else None
        if now is None or self._start is None:
            self.cpu, self.blocked = wall - self.excused, 0.0
        else:
            self.cpu = now[0] - self._start[0]
            self.blocked = wall - self.cpu - (now[1] - self._start[1]) - self.excused
        return wall

    def wait_s(self) -> float:
        """How long to wait for the reply before looking at the clock again; 0 once a limit is
        reached (then `spent` says which). Reads the clock only when a limit could have been
        reached: a call that returns in time reads it once, at its start."""
        if self.spent:
            return 0.0
        if time.monotonic() < self._next_look:
            return self._next_look - time.monotonic()
        wall = self.look()
        left = {"cpu": self.cpu_s - self.cpu}
        if self.blocked_s is not None:
            left["blocked"] = self.blocked_s - self.blocked
        left["wall"] = self.wall_s - wall
        # In this order: where the student's clocks and the backstop are both spent at one
        # look (a short allowance, the end of a topic's budget, looked at late on a busy
        # machine), what the student's code spent says why, not the machine's load.
        spent = [limit for limit, seconds in left.items() if seconds <= 0]
        if spent:
            self.spent = spent[0]
            return 0.0
        wait = max(min(*left.values(), self._longest_wait), MIN_WAIT_S)
        self._next_look = time.monotonic() + wait
        return wait
