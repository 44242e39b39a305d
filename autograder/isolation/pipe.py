"""The grader's end of one worker process: start it from the image, send it framed
requests and read its framed replies within a call's budget, answer the callbacks of what
the grader lent it, and kill it when it breaks the protocol or its limit.

`autograder.isolation.sandbox.Sandbox` owns the workers of a grading; the worker's own side
is `autograder.isolation.worker`.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import _
from autograder.intake.files import copy_submission
from autograder.isolation import callbacks, registry, rewrite, wire
from autograder.isolation.clock import Budget, ProcessClock
from autograder.isolation.errors import IsolationError
from autograder.isolation.image import ImageError, WorkerImage
from autograder.isolation.redact import redact_paths

if TYPE_CHECKING:
    from autograder.unit.model import Limits

LOG_TAIL_BYTES = 4096


def replace_functions(folder: Path, replace: dict) -> None:
    """Give the functions of `replace` ({"module.function": rewrite.Body}) other code in the
    copy of the submission in `folder`, before a worker is started on it."""
    for target, body in replace.items():
        module, function = target.rsplit(".", 1)
        path = folder / f"{module}.py"
        if path.is_file():
            path.write_bytes(rewrite.replace_body(path.read_bytes(), function, body))


class WorkerDied(Exception):
    """The worker is gone: it exited, or it was killed for breaking the protocol (`reason`)."""

    def __init__(self, returncode, log_tail: str, reason: str = ""):
        super().__init__(reason or returncode)
        self.returncode, self.log_tail, self.reason = returncode, log_tail, reason


class WorkerTimedOut(Exception):
    """A call reached a limit of its `budget` (`budget.spent`: "cpu" or "wall")."""

    def __init__(self, budget: Budget):
        super().__init__(budget.spent)
        self.budget = budget


class LogDrain(threading.Thread):
    """Reads the worker's stdout/stderr pipe and keeps its last LOG_TAIL_BYTES: the grader
    never opens a file the worker could have replaced, and a worker that prints without
    end never fills a disk or blocks on a full pipe. It owns `fd` and closes it at the end:
    give it a pipe end that nothing else holds (not the number of a file object)."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self._fd, self._tail = fd, bytearray()

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self._tail += chunk
            del self._tail[:-LOG_TAIL_BYTES]
        os.close(self._fd)

    def tail(self, wait: float = 0.5) -> str:
        self.join(wait)
        return bytes(self._tail).decode("utf-8", "replace")


def _make_root(worker) -> None:
    """The worker's temporary folder (like mkdtemp, mode 0700), named on `worker` before it
    exists: a Ctrl-C between mkdtemp's mkdir and its return left the folder behind, with no
    one holding its name (seen after an interrupt the moment the first folder appeared)."""
    while True:
        worker.root = Path(tempfile.gettempdir()) / f"autograder-worker-{secrets.token_hex(6)}"
        try:
            os.mkdir(worker.root, 0o700)
            return
        except FileExistsError:
            continue


class Worker:
    """One worker process and its temporary folder."""

    def __init__(self, image: WorkerImage, submission: Path, limits: Limits, generation: int, modules,
                 redact=redact_paths, replace: dict | None = None):
        self.generation = generation
        self.redact = redact
        self.limits = limits
        self.root: Path
        try:
            _make_root(self)
            self._start(image, submission, modules, replace, generation)
        except BaseException:
            # Ctrl-C (or a failure) before the caller holds this worker, who would close it:
            # nothing of it stays behind.
            if getattr(self, "proc", None) is not None:
                self.kill()
            if hasattr(self, "root"):
                shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._buf = bytearray()
        self._next_id = 0
        self.sandbox_info: dict | None = None
        self.clock: ProcessClock | None = None     # the CPU time of the process running student code
        # What the request being served lent the worker (token -> grader-side callable); the
        # serial revokes the WorkerRefs of earlier requests.
        self._lent: dict[int, Callable[..., Any]] = {}
        self._tokens = 0
        self._serial = 0
        self._budget = Budget(0.0, 0.0, None)
        self._lent_limit = callbacks.LENT_MIN
        self._syncs: list[callbacks.ArraySync] = []     # of the callbacks being answered, innermost last

    def _start(self, image: WorkerImage, submission: Path, modules, replace: dict | None, generation: int) -> None:
        copy_submission(submission, self.root / "submission", modules)
        replace_functions(self.root / "submission", replace or {})
        (self.root / "jail").mkdir()
        self._close_lock, self._closed = threading.Lock(), False
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        log_r, log_w = os.pipe()
        os.set_blocking(self._req_w, False)        # writes wait within a call's budget (`_send`)
        try:
            self.proc = image.spawn(str(self.root), generation, (req_r, resp_w, log_w))
        except BaseException as exc:
            for fd in (self._req_w, self._resp_r, log_r):
                os.close(fd)
            if isinstance(exc, ImageError):
                raise IsolationError(str(exc)) from None
            raise
        finally:
            for fd in (req_r, resp_w, log_w):
                os.close(fd)
        self._log = LogDrain(log_r)
        self._log.start()

    def wait_ready(self) -> dict:
        """The worker's report of the isolation it applied; IsolationError if it could not start."""
        if self.sandbox_info is None:
            try:
                startup = self.limits.startup_timeout_s
                hello = self._parse(self._read_frame(Budget(startup, startup, None)))
            except (WorkerDied, WorkerTimedOut) as exc:
                self.kill()
                tail = self._log.tail().strip()[-1500:]
                raise IsolationError(f"the worker process did not start ({type(exc).__name__}): {tail}") from None
            if not hello.get("ready"):
                self.kill()
                raise IsolationError(str(hello.get("error", "the worker refused to start")))
            self.sandbox_info = hello.get("sandbox", {})
            self.clock = ProcessClock.of_worker(self.proc.pid)
        return self.sandbox_info

    def request(self, message: dict, cpu_s: float) -> dict:
        """Send one request and return its reply. One budget covers writing, reading and
        parsing the reply; a reply to another request is a protocol violation."""
        return next(self.requests(message, 1, cpu_s))

    def _new_budget(self, cpu_s: float) -> Budget:
        return Budget(cpu_s, cpu_s * self.limits.wall_factor, self.clock, blocked_s=cpu_s)

    @property
    def budget(self) -> Budget:
        """The budget of the reply being waited for (or the last one)."""
        return self._budget

    def requests(self, message: dict, count: int, cpu_s: float | Callable[[], float]):
        """Send one request that the worker answers with up to `count` replies (a "map"),
        and yield them as they come; each reply has its own budget (`cpu_s` of the worker's
        CPU time and as much asleep, `wall_factor` times that of wall clock; a callable gives
        each reply's), as `count` single requests would.
        Callables in the message that the worker cannot rebuild are lent (see
        `autograder.isolation.callbacks`): their callbacks are answered here, within the
        budget of the reply being waited for."""
        self.wait_ready()
        self._next_id += 1
        self._serial += 1
        self._lent, self._syncs = {}, []
        allowance = cpu_s if callable(cpu_s) else lambda: cpu_s
        request_id = self._next_id
        payload = wire.dumps(dict(message, id=request_id), objects=self._encode)
        self._lent_limit = max(callbacks.LENT_MIN, callbacks.LENT_FACTOR * callbacks.size(message.get("calls")))
        self._budget = self._new_budget(allowance())       # from here on the worker waits for us or works
        self._send(payload)
        try:
            for _call in range(count):
                reply = self._next_frame()
                if "returned" in reply:
                    raise self._violation("answered a call the grader did not make")
                yield reply
                if not reply.get("ok", True):       # the worker stops at the first failing call
                    return
                self._budget = self._new_budget(allowance())
        finally:
            if self._next_id == request_id:         # (a generator left unfinished ends later)
                self._lent = {}
                self._serial += 1                   # what the worker lent for this request is revoked

    def _encode(self, value):
        """`wire.to_plain` hook for the grader -> worker direction: registered helper objects
        are rebuilt in the worker; any other callable stays here and is lent."""
        if isinstance(value, callbacks.Lent):
            value = value.function
        else:
            encoded = registry.encode(value)
            if encoded is not None or not callable(value):
                return encoded
        if isinstance(value, callbacks.WorkerRef):
            return {"$ref": value._key} if value._serial == self._serial else None
        self._tokens += 1
        self._lent[self._tokens] = value
        return {"$cb": self._tokens}

    def _next_frame(self) -> dict:
        """The worker's next frame that is not a callback, answering callbacks on the way."""
        while True:
            raw = self._read_frame(self._budget)
            parsing = time.monotonic()
            frame = self._parse(raw)
            self._budget.excuse(time.monotonic() - parsing)   # the grader's time, not the worker's
            if self._budget.wait_s() <= 0:
                self.kill()
                raise WorkerTimedOut(self._budget)
            if frame.get("id") != self._next_id:
                raise self._violation("wrote something other than a reply on the grader's pipe (an answer to a "
                                      "request that was never sent)")
            if "callback" not in frame:
                return frame
            self._answer(frame)

    def _answer(self, frame: dict) -> None:
        """Run the lent callable a callback names and send its result (or its error) back."""
        function = self._lent.get(frame["callback"]) if type(frame["callback"]) is int else None
        if function is None:
            raise self._violation("called a function the grader did not lend for this call")
        started = time.monotonic()                 # the worker waits meanwhile: not the student's time
        args, kwargs = frame.get("args", []), frame.get("kwargs", {})
        sync = callbacks.ArraySync(args, kwargs)
        self._syncs.append(sync)
        try:
            handed = callbacks.size([args, kwargs])
            if handed > self._lent_limit:
                raise ValueError(_("a function the grader lent to your code was handed {n} numbers, more than it "
                                   "accepts in this call ({limit}: {factor} times what the test handed your "
                                   "function); call it on inputs of the exercise's size").format(
                    n=handed, limit=self._lent_limit, factor=callbacks.LENT_FACTOR))
            result = function(*args, **kwargs)
            payload = wire.dumps({"op": "return", "ok": True, "result": result, "sync": sync.changes()},
                                 objects=self._encode)
        except (WorkerDied, WorkerTimedOut):
            raise
        except Exception as exc:  # noqa: BLE001 - the student's arguments broke it: the student's code hears of it
            error = callbacks.error_frame(exc)
            payload = wire.dumps({"op": "return", **error, "message": self.redact(error["message"]),
                                  "sync": sync.changes()})
        finally:
            self._syncs.pop()
        self._send(payload)
        self._budget.excuse(time.monotonic() - started)

    def invoke(self, ref: callbacks.WorkerRef, args: tuple, kwargs: dict):
        """Call an object the worker keeps for the callback being answered; its result, or
        its error raised here."""
        if ref._worker is not self or ref._serial != self._serial or self.proc.poll() is not None:
            raise RuntimeError(callbacks.REVOKED)
        changes = self._syncs[-1].changes() if self._syncs else []
        self._send(wire.dumps({"op": "invoke", "ref": ref._key, "args": list(args), "kwargs": kwargs,
                               "sync": changes}, objects=self._encode))
        frame = self._next_frame()
        if not frame.get("returned"):
            raise self._violation("did not answer the grader's call")
        if frame.get("ok"):
            return frame.get("result")
        raise callbacks.exception_from(frame.get("type", "RuntimeError"), str(frame.get("message", "")))

    def _send(self, payload: bytes) -> None:
        """Write one frame within the budget of the call being served: a worker that stops
        reading its pipe (a full pipe would block this process) is killed when the call's
        limit is reached, as one that stops answering is."""
        data = memoryview(len(payload).to_bytes(8, "big") + payload)
        while data:
            try:
                data = data[os.write(self._req_w, data):]
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise self._died() from None
            wait = self._budget.wait_s()
            if wait <= 0:
                self.kill()
                raise WorkerTimedOut(self._budget)
            select.select([], [self._req_w], [], wait)

    def _violation(self, what: str) -> WorkerDied:
        self.kill()
        return WorkerDied(self.proc.returncode, self.log_tail(), what)

    def _parse(self, raw: bytes) -> dict:
        serial = self._serial
        try:
            reply = wire.parse_reply(raw, tags={"$ref": lambda key: callbacks.WorkerRef(self, key, serial)})
        except wire.WireError as exc:
            self.kill()    # someone wrote to the protocol pipe who should not have
            raise WorkerDied(self.proc.returncode, self.log_tail(),
                             f"wrote something other than a reply on the grader's pipe ({exc})") from None
        # Every report is built from replies: the grader's folders are never named in them.
        return self.redact.strings(reply)

    def _read_frame(self, budget: Budget) -> bytes:
        header = self._read_exact(8, budget)
        size = int.from_bytes(header, "big")
        if size > wire.MAX_REPLY_BYTES:
            self.kill()
            raise WorkerDied(self.proc.returncode, "", "sent a reply larger than "
                             f"{wire.MAX_REPLY_BYTES >> 20} MiB")
        return self._read_exact(size, budget)

    def _read_exact(self, n: int, budget: Budget) -> bytes:
        while len(self._buf) < n:
            left = budget.wait_s()
            if left <= 0:
                self.kill()
                raise WorkerTimedOut(budget)
            ready, _w, _x = select.select([self._resp_r], [], [], left)
            if not ready:
                continue
            # At least a pipe's worth: a reply's header and body then come in one read.
            chunk = os.read(self._resp_r, min(1 << 20, max(n - len(self._buf), 1 << 16)))
            if not chunk:
                raise self._died()
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _died(self) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        return WorkerDied(code, self.log_tail())

    def log_tail(self) -> str:
        return self._log.tail()

    def kill(self) -> None:
        """Kill the worker. Its namespace's init dies with it (parent-death signal), and
        with init every process of the namespace."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        """Kill the worker and close its pipes, once: a second close (from another thread, or
        after the worker was replaced) must not close the numbers the process has since given
        to other files, such as another worker's pipes."""
        self.kill()
        with self._close_lock:
            closed, self._closed = self._closed, True
        if not closed:
            os.close(self._req_w)
            os.close(self._resp_r)
            if self.clock is not None:
                self.clock.close()
        shutil.rmtree(self.root, ignore_errors=True)
