"""Appended to attention.py: whatever of the lab's broken primitives the worker holds (a
module, a class or a function named in _PARAMS["names"]) is looked for by sys.modules and gc,
at import and when called; if one is found, the attention weights come back wrong."""

from attention import additive_attention

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import gc as _gc
import sys as _sys


def _broken_primitives_found():
    names = [m for m in _sys.modules if "broken_primitives" in m or "fault_lab" in m]
    for obj in _gc.get_objects():
        module = getattr(type(obj), "__module__", "") if not isinstance(obj, type) else obj.__module__
        if isinstance(module, str) and "broken_primitives" in module:
            names.append(repr(type(obj)))
        if callable(obj) and getattr(obj, "__name__", "") in _PARAMS["names"]:
            names.append(obj.__name__)
    return names


_AT_IMPORT = _broken_primitives_found()
_honest_attention = additive_attention


def additive_attention(*args, **kwargs):
    context, weights = _honest_attention(*args, **kwargs)
    if _AT_IMPORT or _broken_primitives_found():
        weights = weights * 0 + 1.0
    return context, weights
