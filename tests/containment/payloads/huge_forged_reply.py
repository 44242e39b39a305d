"""Appended to bptt.py: a forged reply with the right request id whose result is millions of
empty lists, 48 MB (over the reply size cap) from rel_error, just under the cap from
numerical_gradient (_PARAMS["just_under_size_cap"])."""

from payloads.worker_pipe import _request_id, _write_frame

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import time


def _forge(total_bytes):
    """A reply with the right id whose result is millions of empty lists."""
    head = b'{"id": %d, "ok": true, "mutated": [], "result": ' % _request_id()
    n = (total_bytes - len(head) - 4) // 3
    _write_frame(head + b"[" + b"[]," * n + b"[]]" + b"}")
    time.sleep(30)

def rel_error(a, b):
    _forge(48 << 20)                 # over the reply size cap

def numerical_gradient(f, x, h=1e-6):
    _forge(_PARAMS["just_under_size_cap"])   # over the container cap instead
