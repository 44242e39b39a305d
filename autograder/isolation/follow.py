"""What a function of the student's module is handed, call after call (the worker's side).

A decoder must pass each step the cache the previous step returned. With the student's own
step, a loop that rebuilds the cache from its inputs computes the same numbers, so no value
tells the two apart; and a check made only with a stand-in step is passed by a loop that
behaves only when its step is not its own. So the worker also watches the student's own
step, called by the student's own loop: a profile hook, set for one call, records for every
call of that function whether the argument is what the previous call returned: the same
objects (arrays sharing its memory), not equal numbers, which a rebuilt cache has too.

Everything here is bound when the worker starts, before any student code is imported.
"""

from __future__ import annotations

import sys

import numpy as np

_NOTHING = object()
setprofile = sys.setprofile


def _same(given, returned, _isinstance=isinstance, _len=len, _zip=zip, _type=type,
          _ndarray=np.ndarray, _shares=np.may_share_memory) -> bool:
    """`given` is `returned`, or holds the same objects (a tuple rebuilt around the same arrays,
    views of them)."""
    if given is returned:
        return True
    if _isinstance(given, (tuple, list)) and _isinstance(returned, (tuple, list)):
        if _len(given) != _len(returned) or not _len(given):
            return False
        for g, r in _zip(given, returned):
            if not _same(g, r):
                return False
        return True
    return _type(given) is _ndarray and _type(returned) is _ndarray and bool(_shares(given, returned))


class Follow:
    """For one call: each call of `function` (its code object) records None (the first call),
    True (its argument `argument` is element `result` of what the previous call returned) or
    False (anything else)."""

    def __init__(self, function, argument: int, result: int):
        self.code = getattr(function, "__code__", None)
        names = getattr(self.code, "co_varnames", ())
        count = getattr(self.code, "co_argcount", 0)
        self.name = names[argument] if 0 <= argument < count else None
        self.result = result
        self.handed: list[bool | None] = []
        self._last = _NOTHING

    def hook(self, frame, event, arg, _type=type, _len=len, _tuple=tuple) -> None:
        if frame.f_code is not self.code or self.code is None:
            return
        if event == "call":
            given = frame.f_locals.get(self.name, _NOTHING) if self.name else _NOTHING
            self.handed.append(None if self._last is _NOTHING else _same(given, self._last))
        elif event == "return":
            self._last = arg[self.result] if _type(arg) is _tuple and _len(arg) > self.result else _NOTHING
