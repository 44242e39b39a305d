"""Appended to bptt.py: rel_error writes a reply frame with a wrong request id every second,
forever; numerical_gradient does so for 21 s, then returns the right answer."""

from bptt import numerical_gradient
from payloads.worker_pipe import _request_id, _write_frame

# isort: split
# ---- appended to the student's module ----
import json
import time


def _wrong_frames(seconds):
    started, rid = time.monotonic(), _request_id()
    while time.monotonic() - started < seconds:
        time.sleep(1)
        for wrong in (rid + 1, rid - 1, 10 ** 9):
            _write_frame(json.dumps({"id": wrong, "ok": True, "result": 0.0, "mutated": []}).encode())

_honest_numerical_gradient = numerical_gradient

def rel_error(a, b):
    _wrong_frames(float("inf"))

def numerical_gradient(f, x, h=1e-6):
    _wrong_frames(21)
    return _honest_numerical_gradient(f, x, h)
