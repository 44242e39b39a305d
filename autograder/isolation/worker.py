"""The worker: the only process that imports or runs student code.

Started by `autograder.isolation.pipe` as `python -I -m autograder.isolation.worker
--config JSON ...`. It loads everything it will ever need (numpy and the standard-library
modules of the unit's preload list, the unit's helper objects), then locks itself in:

- namespaces (`jail`): its own PID, mount, network, IPC and UTS namespaces (inside an
  unprivileged user namespace when the grader is not root), a size-limited tmpfs as its
  whole file system holding only the submission's files, and no privileges (a uid of its
  own as root; no capabilities otherwise); where no namespace can be made, it refuses
  unless the grader says the code is trusted;
- resource limits: address space, file size, CPU time, no new processes;
- a scrubbed environment (set by the grader) and stdout/stderr going to a pipe the
  grader drains.

Then it answers requests, one JSON frame at a time, on two inherited pipes. Replies are
plain data (`autograder.isolation.wire`); objects that must stay here (caches) are
returned as handles. Correct stand-ins and test functions never come here: the worker gets
proxies that call back to the grader (`autograder.isolation.callbacks`). This module must
never import the hidden suites, the rubric, the reference or a stand-in.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import importlib
import json
import os
import resource
import signal
import sys
import traceback
import warnings

import numpy as np

from autograder import units
from autograder.isolation import callbacks, follow, jail, registry, wire

_handles: dict[int, object] = {}
_generation = 0


def _read_submission(folder: str) -> dict[str, bytes]:
    """The grader's copy of the submission (regular files it chose by name)."""
    files = {}
    for name in sorted(os.listdir(folder)):
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            files[name] = fh.read()
    return files


def _lock_in(root: str, config: dict, keep_fds: tuple[int, ...]) -> tuple[dict, str]:
    """Isolate this process (see `jail`) and apply the limits; return what was applied and
    the folder the submission is imported from. Refuses (SystemExit after telling the
    grader) when isolation is required and unavailable."""
    limits = config.get("limits", {})
    soft_as = _vm_size() + int(limits.get("memory_mb", 1024)) * 1024 * 1024   # /proc is gone afterwards
    try:
        if config.get("force_unavailable"):
            raise jail.Unavailable("AUTOGRADER_NO_NAMESPACES is set in the grader's environment")
        applied = jail.enter(os.path.join(root, "jail"), _read_submission(os.path.join(root, "submission")),
                             int(limits.get("disk_mb", 64)), keep_fds)
        submission = "/submission"
    except jail.Unavailable as exc:
        if config.get("isolation") == "required":
            wire.write_frame(keep_fds[1], json.dumps({"ready": False, "error": str(exc)}).encode())
            raise SystemExit(3) from None
        applied = {"mode": "none", "reason": str(exc), "pid_namespace": False, "network_isolated": False,
                   "private_root": False, "uid_dropped": False, "capabilities_dropped": False}
        submission = os.path.join(root, "submission")
    cpu_s = int(limits.get("cpu_s", 600))
    resource.setrlimit(resource.RLIMIT_AS, (soft_as, soft_as))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))   # no fork, no threads
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a too-large write raises, not kills
    return applied, submission


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 512 << 20


def _helper_object(name, state):
    return registry.build(name, state)


def _resolve(value):
    """Replace handles in call arguments by the objects they stand for."""
    if isinstance(value, wire.Handle):
        if value.generation != _generation or value.id not in _handles:
            raise LookupError("this cache came from an earlier worker that has since been restarted")
        return _handles[value.id]
    if isinstance(value, tuple):
        return tuple(_resolve(v) for v in value)
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    return value


def _keep(obj) -> wire.Handle:
    key = len(_handles) + 1
    _handles[key] = obj
    return wire.Handle(_generation, key)


def _mutation_checker():
    """(snapshot, changed): copies of the arrays inside the arguments before a call, and the
    names of the arguments whose arrays changed after it.

    Student code runs in this process and could patch whatever these functions look up at
    call time (numpy.array_equal, this module's globals, builtins). So they look up
    nothing: the builtins and the type-level, C-implemented methods they use (which no
    Python code can replace) are bound here, once, before any student code is imported.
    """
    ndarray, tobytes, isinstance_, list_, tuple_, dict_ = np.ndarray, np.ndarray.tobytes, isinstance, list, tuple, dict
    dict_values, zip_, any_ = dict.values, zip, any

    def snapshot(value):
        if isinstance_(value, ndarray):
            return [(value, value.shape, value.dtype.str, tobytes(value))]
        if isinstance_(value, (list_, tuple_)):
            return [entry for v in value for entry in snapshot(v)]
        if isinstance_(value, dict_):
            return [entry for v in dict_values(value) for entry in snapshot(v)]
        return []

    def changed(names, snaps):
        return [name for name, snap in zip_(names, snaps)
                if any_(a.shape != shape or a.dtype.str != dtype or tobytes(a) != data
                        for a, shape, dtype, data in snap)]

    return snapshot, changed


_snapshot, _changed = _mutation_checker()


_submission = "/submission"


def _is_student(filename: str) -> bool:
    return filename.startswith(_submission + os.sep)


def _where(tb) -> str:
    """The innermost frame of the student's code, as 'bptt.py:42 in rnn_forward': frames of
    the grader's helpers (a language model, a test function) are not the student's line."""
    frames = [f for f in traceback.extract_tb(tb) if _is_student(f.filename)]
    if not frames:
        return ""
    f = frames[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}"


_ISOLATION = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _student_frames(tb) -> str:
    # Not this package's frames (the request loop, a callback's proxy): they are not the student's.
    frames = [f for f in traceback.extract_tb(tb) if not f.filename.startswith(_ISOLATION)]
    text = "".join(traceback.format_list(frames[-6:]))
    return text[-4000:]


def _error(kind: str, exc: BaseException, tb=None) -> dict:
    tb = tb if tb is not None else exc.__traceback__
    reply = {"ok": False, "kind": kind, "type": type(exc).__name__, "message": str(exc)[:2000],
             "where": _where(tb), "traceback": _student_frames(tb)}
    if isinstance(exc, SyntaxError):
        reply["where"] = f"{os.path.basename(exc.filename or '?')}:{exc.lineno}"
    return reply


def handle_probe(req: dict) -> dict:
    module = req["module"]
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return {"ok": False, "kind": "missing", "type": "ModuleNotFoundError", "message": str(exc)}
        return _error("import", exc)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and friends are the student's too
        return _error("import", exc)
    return {"ok": True, "result": None}


def handle_map(req: dict):
    """The same function ({"module", "function", "keep", "patches"}) called on each entry
    of req["calls"] ({"args", "kwargs"}; a single call is a map of one), one reply per
    call, in order; the first failing call is the last one made (as a loop of
    single calls would stop there). Patches stay applied across the calls."""
    try:
        mod = importlib.import_module(req["module"])
    except BaseException as exc:  # noqa: BLE001
        yield _error("import", exc)
        return
    fn = getattr(mod, req["function"], None)
    if not callable(fn):
        yield {"ok": False, "kind": "missing_function", "type": "AttributeError",
               "message": f"{req['module']}.py does not define {req['function']}()"}
        return
    saved = []
    for target, replacement in req.get("patches", {}).items():
        mod_name, attr = target.rsplit(".", 1)
        patched_mod = importlib.import_module(mod_name)
        saved.append((patched_mod, attr, getattr(patched_mod, attr, _MISSING)))
        setattr(patched_mod, attr, replacement)
    try:
        keep = set(req.get("keep", ()))
        watched = req.get("follow")         # [function of the module, argument, result]: see isolation/follow.py
        for call in req["calls"]:
            watch = follow.Follow(getattr(mod, str(watched[0]), None), int(watched[1]), int(watched[2])) \
                if watched else None
            reply = _call(fn, req["function"], call, keep, watch)
            yield reply
            if not reply["ok"]:
                return
    finally:
        for patched_mod, attr, original in reversed(saved):
            if original is _MISSING:
                delattr(patched_mod, attr)
            else:
                setattr(patched_mod, attr, original)


_MISSING = object()


def _argument_names(fn, count: int) -> list[str]:
    """The student's own names of the first `count` positional parameters ("dnext_c"),
    for messages; the position where a name cannot be had."""
    try:
        code = fn.__code__
        names = list(code.co_varnames[:code.co_argcount])
    except BaseException:  # noqa: BLE001 - a callable object, or one that hides its code
        names = []
    return [str(names[i]) if i < len(names) else f"#{i}" for i in range(count)]


def _call(fn, name: str, call: dict, keep: set, watch=None, _snapshot=_snapshot, _changed=_changed,
          _setprofile=follow.setprofile) -> dict:
    try:
        args = _resolve(call.get("args", []))
        kwargs = _resolve(call.get("kwargs", {}))
    except LookupError as exc:
        return {"ok": False, "kind": "stale", "type": "LookupError", "message": str(exc)}
    snaps = [_snapshot(a) for a in args] + [_snapshot(v) for v in kwargs.values()]
    names = _argument_names(fn, len(args)) + list(kwargs)
    try:
        with warnings.catch_warnings(record=True) as caught:   # a docstring may rule warnings out
            warnings.simplefilter("always")
            if watch is not None:
                _setprofile(watch.hook)
            try:
                result = fn(*args, **kwargs)
            finally:
                if watch is not None:
                    _setprofile(None)
    except BaseException as exc:  # noqa: BLE001
        return _error("exception", exc)
    mutated = _changed(names, snaps)
    shown = tuple(v for i, v in enumerate(result) if i not in keep) if keep and isinstance(result, tuple) else result
    notes = {"aliased": _aliased(shown, names, list(args) + list(kwargs.values())),
             "warnings": [f"{w.category.__name__}: {w.message}" for w in caught[:3]]}
    if watch is not None:
        notes["followed"] = watch.handed[:10_000]
    if keep and isinstance(result, tuple):
        result = tuple(_keep(v) if i in keep else v for i, v in enumerate(result))
    try:
        payload = wire.to_plain(result)
    except wire.WireError as exc:
        return {"ok": False, "kind": "bad_value", "type": "TypeError",
                "message": f"{name}() returned {exc}, which the grader cannot read"}
    except BaseException as exc:  # noqa: BLE001 - e.g. a __float__ that raises
        return _error("exception", exc)
    return {"ok": True, "result": payload, "mutated": mutated, "notes": notes}


def _aliased(result, names: list, args: list) -> list:
    """The names of the arguments that the result hands back, whole or in part: an argument
    itself, one of its dict values or list items, or an array sharing its memory. (Kept cache
    elements are left out by the caller: a cache may hold its inputs.)"""
    def parts(value, depth=0):
        yield value
        if depth < 2 and isinstance(value, (tuple, list)):
            for v in value:
                yield from parts(v, depth + 1)
        elif depth < 2 and isinstance(value, dict):
            for v in value.values():
                yield from parts(v, depth + 1)

    given = [(name, list(parts(a))) for name, a in zip(names, args)]
    found = []
    for r in parts(result):
        if isinstance(r, (int, float, str, bool, type(None))):
            continue
        for name, pieces in given:
            if name not in found and any(r is p or isinstance(r, np.ndarray) and isinstance(p, np.ndarray)
                                         and np.may_share_memory(r, p) for p in pieces):
                found.append(name)
    return found


def serve(fd_in: int, fd_out: int) -> None:
    handlers = {"probe": handle_probe, "map": handle_map}
    infile = os.fdopen(fd_in, "rb", buffering=0)
    side = callbacks.worker_side
    side.open(infile, fd_out)
    while True:
        header = callbacks.read_exact(infile, 8)
        if header is None:
            return
        req = wire.loads(callbacks.read_exact(infile, int.from_bytes(header, "big")), objects=_helper_object,
                         tags={"$cb": side.proxy})
        side.begin(req["id"])
        try:
            replies = handlers[req["op"]](req)
            for reply in [replies] if isinstance(replies, dict) else replies:
                reply["id"] = req["id"]
                # Replies are already plain structures: frame them without re-tagging.
                wire.write_frame(fd_out, wire.frame(reply))
        finally:
            side.end()       # what the grader lent for this request is revoked


def _preload(config: dict) -> None:
    """Import everything student code may use, and the unit's helper objects, while the
    file system is still visible."""
    for name in config.get("preload", []):
        importlib.import_module(name)
    unit = config.get("unit")
    if unit:
        units.register(unit["path"], unit["name"])
        for name in unit.get("modules", []):
            importlib.import_module(name)


def run_worker(root: str, generation: int, config: dict, fd_in: int, fd_out: int) -> None:
    """Lock this (pre-loaded) process in and serve requests until the grader hangs up."""
    global _generation, _submission
    _generation = generation
    applied, _submission = _lock_in(root, config, (fd_in, fd_out))
    sys.path[:] = [_submission] + [p for p in sys.path if p and applied["mode"] == "none"]
    sys.dont_write_bytecode = True
    wire.write_frame(fd_out, json.dumps({"ready": True, "sandbox": applied}).encode())
    serve(fd_in, fd_out)


# ------------------------------------------------------------------------ the image
def image(fd_control: int, config: dict) -> None:
    """The pre-loaded worker image: load what every worker needs once, then fork one
    worker per request on the control socket (see `autograder.isolation.image`).

    Requests (one JSON datagram each, pipes attached as SCM_RIGHTS):
      {"op": "spawn", "root": ..., "generation": N} + (fd_in, fd_out, log) -> {"pid": P}
      {"op": "poll", "pid": P} -> {"status": wait status, or null while P runs}
    This process never imports or runs student code; it holds nothing a worker may not see.
    When the grader hangs up, it kills every worker it forked and exits.
    """
    _preload(config)
    preloaded = set(sys.modules)
    import socket  # the image's own: a worker must not find it imported (see _forked_worker)

    # What is loaded now is shared with every worker until one writes to it: frozen, the
    # cyclic collector of a worker never walks (and so never copies) those pages.
    gc.freeze()

    control = socket.socket(fileno=fd_control)
    children: set[int] = set()
    try:
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(control, 1 << 16, 3)
            except OSError:
                break
            if not data:
                break
            req = json.loads(data)
            if req["op"] == "spawn":
                pid = os.fork()
                if pid == 0:
                    _forked_worker(control, req, fds, config, preloaded)
                for fd in fds:
                    os.close(fd)
                children.add(pid)
                reply: dict[str, int | None] = {"pid": pid}
            else:
                pid = int(req["pid"])
                try:
                    done, status = os.waitpid(pid, os.WNOHANG) if pid in children else (pid, 1 << 8)
                except ChildProcessError:
                    done, status = pid, 1 << 8
                if done:
                    children.discard(pid)
                reply = {"status": status if done else None}
            control.sendall(json.dumps(reply).encode())
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    # The grader waits for this process to end (WorkerImage.close): skip the interpreter's
    # teardown of numpy and the preloaded modules (~0.1 s), which holds nothing to save.
    sys.stderr.flush()
    os._exit(0)


def _forked_worker(control, req: dict, fds: list[int], config: dict, preloaded: set[str]) -> None:
    """In the child of the image: become a worker of its own session, holding only its
    three pipes and the modules a worker started from scratch would hold, and never return."""
    code = 1
    try:
        control.close()
        for name in set(sys.modules) - preloaded:
            del sys.modules[name]
        os.setsid()
        fd_in, fd_out, log = fds
        os.dup2(log, 1)
        os.dup2(log, 2)
        keep = {0, 1, 2, fd_in, fd_out}
        for name in os.listdir("/proc/self/fd"):
            if int(name) not in keep:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        jail._prctl(jail.PR_SET_PDEATHSIG, signal.SIGKILL)     # dies with the image
        os.chdir(req["root"])
        # The command line of a worker started on its own (what attack tests assume is known).
        sys.argv[1:] = ["--fd-in", str(fd_in), "--fd-out", str(fd_out), "--root", req["root"],
                        "--generation", str(req["generation"])]
        run_worker(req["root"], int(req["generation"]), config, fd_in, fd_out)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the grader reads the traceback from the log pipe
        traceback.print_exc()
    finally:
        os._exit(code)


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fd-in", type=int)
    p.add_argument("--fd-out", type=int)
    p.add_argument("--fd-control", type=int, help="run as the pre-loaded image that forks workers")
    p.add_argument("--root", help="temporary folder holding submission/ and jail/")
    p.add_argument("--generation", type=int, default=0)
    p.add_argument("--config", default="{}", help="JSON: preload list, the unit's helper modules, limits, isolation")
    args = p.parse_args(argv)
    config = json.loads(args.config)
    faulthandler.enable()  # a segfault leaves a traceback in the log the grader reads
    if args.fd_control is not None:
        image(args.fd_control, config)
        return
    _preload(config)
    run_worker(args.root, args.generation, config, args.fd_in, args.fd_out)


if __name__ == "__main__":
    main()
