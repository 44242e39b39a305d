"""A shared piece: find one of the grader's correct stand-ins (a class of its oracles module)
by one route, _PARAMS["route"]: sys.modules, gc, the frames' locals and globals, the globals
of the helpers passed in, or the oracles file read from disk; `_alias` makes a function
that calls what was found. The search runs at call time, so that the frames route sees
the grader's request loop and whatever it holds."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import gc as _gc
import os as _os
import sys as _sys
import types as _types


def _deep(value, name, seen, depth):
    """A class called `name` (or an object of one) reachable from `value`."""
    if depth < 0 or id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, type):
        if value.__name__ == name:
            return value
        return _deep(vars(value), name, seen, depth - 1)
    if type(value).__name__ == name:
        return value
    if isinstance(value, _types.ModuleType):
        if not value.__name__.startswith("autograder"):     # the grader's secrets live in its own modules
            return None
        value = vars(value)
    if isinstance(value, _types.FunctionType):
        return (_deep(value.__globals__, name, seen, depth - 1)
                or _deep([c.cell_contents for c in value.__closure__ or () if c.cell_contents is not None],
                         name, seen, depth - 1))
    if isinstance(value, dict):
        items = list(value.values()) + list(value.keys())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        items = list(vars(value).values()) + [type(value)]
    else:
        return None
    for item in items:
        found = _deep(item, name, seen, depth - 1)
        if found is not None:
            return found
    return None


_FOUND = {}


def _stand_in(name):
    route = _PARAMS["route"]
    if (route, name) not in _FOUND:
        _FOUND[route, name] = _search(route, name)
    found = _FOUND[route, name]
    return found() if isinstance(found, type) else found


def _search(route, name):
    found = None
    if route == "sys_modules":
        found = getattr(_sys.modules.get(_PARAMS["module"]), name, None)
    elif route == "gc":
        _gc.unfreeze()              # what the worker image froze is not listed by get_objects()
        found = next((o for o in _gc.get_objects() if getattr(type(o), "__name__", "") == name
                      or (isinstance(o, type) and o.__name__ == name)), None)
    elif route == "frames":
        frame, seen = _sys._getframe(), set()
        while frame is not None and found is None:
            found = _deep(frame.f_locals, name, seen, 5) or _deep(frame.f_globals, name, seen, 5)
            frame = frame.f_back
    elif route == "helper_globals":
        seen = set()
        for module in list(_sys.modules):
            if ".helpers." in module:
                found = found or _deep(_sys.modules[module], name, seen, 5)
    elif route == "files":
        roots = list(_PARAMS["roots"]) + [p for m in list(_sys.modules.values()) for p in getattr(m, "__path__", [])]
        for root in roots:
            try:
                with open(_os.path.join(root, "oracles.py")) as fh:
                    namespace = {"__name__": "stolen"}
                    exec(fh.read(), namespace)
                found = namespace.get(name)
                break
            except Exception:
                pass
    return found


def _alias(name):
    def function(*args, **kwargs):
        stand_in = _stand_in(name)
        if stand_in is None:
            raise NotImplementedError("no stand-in found")
        return stand_in(*args, **kwargs)
    return function
