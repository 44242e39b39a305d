"""Appended to bptt.py: _PARAMS["text"] (Markdown, HTML, escape sequences, control characters)
as an exception's message and class name (rel_error), and printed to stdout and stderr
before a crash (numerical_gradient)."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import os
import sys


class _Nasty(Exception):
    pass

_Nasty.__name__ = _Nasty.__qualname__ = _PARAMS["text"].replace("\x00", "")   # a class name cannot hold NUL

def rel_error(a, b):
    raise _Nasty(_PARAMS["text"])

def numerical_gradient(f, x, h=1e-6):
    print(_PARAMS["text"], flush=True)            # the crash message quotes the worker's last output
    sys.stderr.write(_PARAMS["text"])
    sys.stderr.flush()
    os._exit(1)
