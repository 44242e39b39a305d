"""Appended to bptt.py (not hostile): record(x) remembers its calls, recorded() returns them."""

# ---- appended to the student's module ----
CALLS = []


def record(x):
    CALLS.append(x)
    if x < 0:
        raise ValueError("negative")
    return x * 2


def recorded():
    return list(CALLS)
