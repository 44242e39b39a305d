"""Appended to bptt.py: rel_error writes 1.2 GB to /work and to /tmp (file _PARAMS["name"]),
and raises with how much each took, the error that stopped it and the seconds."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import errno
import os
import time


def _fill(folder, limit):
    written, error, started = 0, "none", time.monotonic()
    chunk = b"x" * (1 << 20)
    try:
        with open(os.path.join(folder, _PARAMS["name"]), "ab", buffering=0) as fh:
            while written < limit:
                written += fh.write(chunk)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno, str(exc.errno))
    return f"{folder}:{written >> 20}:{error}:{time.monotonic() - started:.1f}"

def rel_error(a, b):
    raise RuntimeError("DISK " + " ".join(_fill(folder, 1200 << 20) for folder in ("/work", "/tmp")))
