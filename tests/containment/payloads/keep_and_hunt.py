"""Appended to bptt.py: keep_and_hunt, called with rel_error lent by the grader, keeps it, uses
it and looks for every stand-in by every route; call_kept calls the kept one later."""

import numpy as np
from bptt import rel_error
from payloads.find_stand_in import _stand_in

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
_KEPT = []


def keep_and_hunt():
    """Called with rel_error lent by the grader: keep it, use it, and look for any stand-in."""
    _KEPT.append(rel_error)
    found = {}
    for route in ("sys_modules", "gc", "frames", "helper_globals", "files"):
        _PARAMS["route"] = route
        found[route] = sorted(name for name in _PARAMS["names"] if _stand_in(name) is not None)
    return {"value": rel_error(np.ones(2), np.zeros(2)), "type": type(rel_error).__name__,
            "doc": str(getattr(rel_error, "__doc__", "")), "found": found}


def call_kept():
    return _KEPT[0](np.ones(2), np.zeros(2))
