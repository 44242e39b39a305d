"""Grader-side callables: functions that student code may call but never hold.

A correct stand-in patched in for one of the student's functions (`StudentFunction.patched(
{"bptt.rnn_forward": RNNForward()})`) or a test function passed to student code (the f of
`numerical_gradient`) must not be in the worker: student code could find it there (sys.modules,
gc, frames, module globals) and alias it, or read the solution it carries. So it stays in the
grader. The request carries {"$cb": token} in its place, the worker puts a `Proxy` there, and
a call of the proxy is a callback on the reply pipe:

    worker -> grader   {"id": request, "callback": token, "args": [...], "kwargs": {...}}
    grader -> worker   {"op": "return", "ok": true, "result": ...}
                       {"op": "return", "ok": false, "type": "ValueError", "message": ...}

While it runs the callable, the grader may call what the student passed to it (the student's
f given to a stand-in numerical_gradient, a language model): arguments that are not plain
data cross as {"$ref": id}, kept in the worker, and calling one is the same exchange the other
way round:

    grader -> worker   {"op": "invoke", "ref": id, "args": [...], "kwargs": {...}}
    worker -> grader   {"id": request, "returned": true, "ok": ..., "result" | "type", "message"}

Either side may call back while it waits for an answer (the student's f calls a patched
stand-in). Everything crosses as plain data, like every reply. A callable may change its
array arguments in place (a numerical gradient probes x[i] + h, and the student's f may read
x from its closure rather than from its argument): the grader's `invoke` and `return` frames
carry "sync": [[argument, its value now], ...] for each array argument of the callback that
changed, and the worker writes them into the student's arrays before it goes on. Proxies and refs belong to
one request: when it ends they are revoked, and a kept proxy raises.

This module holds the worker's side (`WorkerSide`); the grader's is in `pipe.Worker`.
"""

from __future__ import annotations

import builtins
from typing import Any

from autograder.isolation import wire

REVOKED = ("this function was lent to your code by the grader for one call only (a stand-in or a test "
           "function); it cannot be kept and called later")


# What a lent callable may be handed in one callback: LENT_FACTOR times the numbers the
# call's own arguments hold, and LENT_MIN at least. Its work (in the grader's process, on the
# grader's memory) then stays of the size of the test's own inputs: student code cannot make
# a stand-in compute on inputs it chose to be huge.
LENT_FACTOR, LENT_MIN = 16, 100_000


def size(value, depth: int = 0) -> int:
    """The numbers and entries plain data holds: an array's elements, a list's items (each
    counted, and what they hold)."""
    if hasattr(value, "size") and hasattr(value, "dtype"):
        return int(value.size)
    if depth > 50:
        return 1
    if isinstance(value, (list, tuple)):
        return len(value) + sum(size(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) + sum(size(v, depth + 1) for v in value.values())
    if isinstance(value, (str, bytes)):
        return len(value) // 8 + 1
    return 1


def exception_from(type_name: str, message: str) -> Exception:
    """The exception that `type_name` names, when it is a built-in one (ValueError, ...);
    otherwise a RuntimeError that names it."""
    cls = getattr(builtins, str(type_name), None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - a built-in whose constructor wants other arguments
            pass
    return RuntimeError(f"{type_name}: {message}")


def error_frame(exc: BaseException) -> dict:
    return {"ok": False, "type": type(exc).__name__, "message": str(exc)[:2000]}


class Proxy:
    """What the worker holds in place of a grader-side callable: a token, nothing else."""

    __slots__ = ("_token",)

    def __init__(self, token: int):
        self._token = token

    def __call__(self, *args, **kwargs):
        return worker_side.call(self._token, args, kwargs)

    def __repr__(self) -> str:
        return "<function lent by the grader>"


class WorkerSide:
    """The worker's end of the callbacks of the request being served."""

    def __init__(self):
        self._infile = self._fd_out = None
        self._request = None            # id of the request being served; None between requests
        self._tokens: set[int] = set()  # the grader-side callables this request lent
        self._refs: dict[int, object] = {}
        self._pending: list[tuple[list, dict]] = []    # arguments of the callbacks waiting for the grader
        # Bound now, before any student code runs in this process (see worker._mutation_checker).
        self._read_frame, self._write_frame, self._to_plain, self._frame = (_read_frame, wire.write_frame,
                                                                            wire.to_plain, wire.frame)

    def open(self, infile, fd_out: int) -> None:
        self._infile, self._fd_out = infile, fd_out

    # ------------------------------------------------------------ a request's life
    def proxy(self, token: int) -> Proxy:
        """Decoder of {"$cb": token} in a request."""
        self._tokens.add(token)
        return Proxy(token)

    def ref(self, key: int):
        """Decoder of {"$ref": id} in a frame from the grader: the object the id was given to."""
        if key not in self._refs:
            raise wire.WireError("unknown $ref")
        return self._refs[key]

    def begin(self, request_id) -> None:
        self._request = request_id

    def end(self) -> None:
        """Revoke everything the request lent or kept."""
        self._request = None
        self._tokens.clear()
        self._refs.clear()

    # ------------------------------------------------------------------ exchanges
    def _keep(self, value):
        key = len(self._refs) + 1
        self._refs[key] = value
        return {"$ref": key}

    def _plain(self, value):
        return self._to_plain(value, objects=self._keep)

    def _send(self, frame: dict) -> None:
        self._write_frame(self._fd_out, self._frame(dict(frame, id=self._request)))

    def call(self, token: int, args: tuple, kwargs: dict):
        """Run the grader-side callable `token` on these arguments and return its result."""
        if self._request is None or token not in self._tokens:
            raise RuntimeError(REVOKED)
        self._send({"callback": token, "args": self._plain(list(args)), "kwargs": self._plain(dict(kwargs))})
        self._pending.append((list(args), dict(kwargs)))
        try:
            return self._wait()
        finally:
            self._pending.pop()

    def _wait(self):
        """Serve the grader's invocations of refs until it returns the callback's result."""
        while True:
            frame = self._read_frame(self._infile, tags={"$ref": self.ref, "$cb": self.proxy})
            if frame is None:
                raise SystemExit(0)            # the grader hung up
            self._sync(frame.get("sync", ()))
            if frame.get("op") == "return":
                if frame.get("ok"):
                    return frame.get("result")
                raise exception_from(frame.get("type", "RuntimeError"), str(frame.get("message", "")))
            if frame.get("op") != "invoke":
                raise RuntimeError("the grader sent an unexpected frame during a callback")
            self._send(dict(self._invoke(frame), returned=True))

    def _sync(self, changes) -> None:
        """Write what the grader's callable changed in its array arguments into the student's arrays."""
        args, kwargs = self._pending[-1]
        for key, value in changes:
            target: Any = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
            try:
                target[...] = value
            except Exception:  # noqa: BLE001 - not an array the student can see changed (a copy, read-only)
                pass

    def _invoke(self, frame: dict) -> dict:
        target = self._refs.get(frame.get("ref", 0))
        if not callable(target):
            return {"ok": False, "type": "TypeError", "message": "the grader called an object that is not callable"}
        try:
            result = target(*frame.get("args", []), **frame.get("kwargs", {}))
            return {"ok": True, "result": self._plain(result)}
        except BaseException as exc:  # noqa: BLE001 - the student's function failed: the grader hears of it
            return error_frame(exc)


def _read_frame(infile, tags=None):
    header = read_exact(infile, 8)
    if header is None:
        return None
    body = read_exact(infile, int.from_bytes(header, "big"))
    return None if body is None else wire.loads(body, tags=tags)


def read_exact(fh, n: int):
    chunks, got = [], 0
    while got < n:
        chunk = fh.read(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


worker_side = WorkerSide()


# ------------------------------------------------------------------ the grader's side
class Lent:
    """Marks a value sent to the worker as a grader-side callable even where it could be
    rebuilt in the worker (a registered helper object given as a patch)."""

    __slots__ = ("function",)

    def __init__(self, function):
        self.function = function


class ArraySync:
    """The grader's side of "sync": the array arguments of one callback, as last sent."""

    def __init__(self, args: list, kwargs: dict):
        import numpy as np

        self._arrays = [(key, value, value.tobytes()) for key, value in [*enumerate(args), *kwargs.items()]
                        if type(value) is np.ndarray]

    def changes(self) -> list:
        out = []
        for i, (key, value, sent) in enumerate(self._arrays):
            now = value.tobytes()
            if now != sent:
                out.append([key, value])
                self._arrays[i] = (key, value, now)
        return out


class WorkerRef:
    """In the grader, an object the worker keeps during a callback (what the student passed
    to a grader-side callable); calling it runs it in the worker."""

    __slots__ = ("_worker", "_key", "_serial")

    def __init__(self, worker, key: int, serial: int):
        self._worker, self._key, self._serial = worker, key, serial

    def __call__(self, *args, **kwargs):
        return self._worker.invoke(self, args, kwargs)

    def __repr__(self) -> str:
        return "<object in the student's process>"
