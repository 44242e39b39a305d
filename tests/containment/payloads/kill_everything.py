"""Import time: signal every process it can for 2 s (kill(-1), the parent, every pid and
process group), then itself; refuses to run outside a PID namespace of its own."""

# ---- appended to the student's module ----
import os
import signal
import time


def _kill_everything(seconds):
    me, started = os.getpid(), time.monotonic()
    while time.monotonic() - started < seconds:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
        for action in ([lambda: os.kill(-1, signal.SIGKILL), lambda: os.kill(os.getppid(), signal.SIGKILL)]
                       + [lambda p=p: os.kill(p, signal.SIGKILL) for p in pids + list(range(1, 1 << 15)) if p != me]
                       + [lambda p=p: os.killpg(p, signal.SIGKILL) for p in range(1, 1 << 15) if p != os.getpgid(0)]):
            try:
                action()
            except OSError:
                pass
    os.killpg(0, signal.SIGKILL)
    os.kill(me, signal.SIGKILL)

# The jail gives the worker a PID namespace of its own (init is 1, this process 2). Outside
# one, kill(-1) as root would take the whole machine down with the test run: say so instead.
if os.getpid() > 100:
    raise RuntimeError("MALLORY IS NOT IN A PID NAMESPACE OF ITS OWN")
_kill_everything(2)
