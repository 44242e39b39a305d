"""Grader side of the worker: start it, call into student code with a deadline, replace
it when it dies, and turn every failure into an exception whose message tells the
student what to fix.

Tests never see the worker directly: they get a `StudentModule` proxy per topic module
(`bptt.rnn_forward(x, h0, Wx, Wh, b)`), which looks like the student's module.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import N_, _
from autograder.intake.files import copy_submission
from autograder.isolation import callbacks, registry, rewrite, wire
from autograder.isolation.clock import Budget, ProcessClock
from autograder.isolation.image import ImageError, WorkerImage, image_config, start_image
from autograder.isolation.redact import Redactor, redact_paths

if TYPE_CHECKING:
    from autograder.unit.model import Limits, Unit

LOG_TAIL_BYTES = 4096
IMPORTS = "(imports)"          # the budget the imports of a grading share (Sandbox.spent)
IMPORTS_SHARE = 2              # that budget, in import limits


# ---------------------------------------------------------------------------- problems
class StudentProblem(Exception):
    """Student code failed in a way that costs the current test. `outcome` goes in the report."""

    outcome = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class StudentCodeError(StudentProblem):
    def __init__(self, message: str, exc_type: str = "", where: str = "", traceback: str = ""):
        super().__init__(message)
        self.exc_type, self.where, self.traceback = exc_type, where, traceback


class NotImplementedYet(StudentCodeError):
    """The function still raises the stub's NotImplementedError; `function` names it."""

    def __init__(self, message: str, function: str, where: str = ""):
        super().__init__(message, "NotImplementedError", where)
        self.function = function


class StudentImportError(StudentProblem):
    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status  # topic status: not_implemented | error | timeout | crashed


class StudentTimeout(StudentProblem):
    """A call reached a limit (isolation/clock.py): `limit` is "cpu" (it was `seconds` on a
    CPU: a loop that never ends, or far too much work), "blocked" (it slept or waited that
    long), "wall" (the machine was too busy to run it at all: `seconds` of wall clock), or
    "topic" / "submission" (the calls of the topic's tests, or of the whole grading, have
    spent their budget of `seconds` between them)."""

    outcome = "timeout"
    TEXTS = {
        "cpu": N_("{what} used {seconds} s of CPU time without returning (an infinite loop, or far too much work "
                  "per call)"),
        "blocked": N_("{what} slept or waited for {seconds} s without returning (time.sleep, input(), a lock: "
                      "nothing the exercise needs)"),
        "wall": N_("{what} did not return within {seconds} s of wall-clock time: the machine was too busy to run "
                   "it (grade again when it is less loaded)"),
        "topic": N_("{what} was stopped: the calls of this topic's tests have used {seconds} s of CPU time and "
                    "sleep between them, all this topic may use (make each call faster)"),
        "submission": N_("{what} was stopped: the calls of this grading have used {seconds} s of CPU time and "
                         "sleep between them, all one grading may use (make each call faster)"),
        "imports": N_("{what} was stopped: importing the submission's modules has taken {seconds} s of CPU time "
                      "and sleep in all, all the imports may take (move slow work out of module level)"),
    }

    def __init__(self, what: str, limit: str, seconds: float):
        self.limit, self.seconds = limit, seconds
        super().__init__(_(self.TEXTS[limit]).format(what=what, seconds=f"{seconds:g}"))

    def again(self, what: str) -> StudentTimeout:
        """The same limit, for a later call of the function: it is not run again."""
        later = StudentTimeout.__new__(StudentTimeout)
        later.limit, later.seconds = self.limit, self.seconds
        StudentProblem.__init__(later, _("{what} was not run again: an earlier call reached its limit ({first})")
                                .format(what=what, first=self.message))
        return later


class StudentCrash(StudentProblem):
    pass


class IsolationError(RuntimeError):
    """The worker could not be started or locked in: the grader cannot run (exit 2)."""


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


class Worker:
    """One worker process and its temporary folder."""

    def __init__(self, image: WorkerImage, submission: Path, limits: Limits, generation: int, modules,
                 redact=redact_paths, replace: dict | None = None):
        self.generation = generation
        self.redact = redact
        self.limits = limits
        self.root = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        try:
            self._start(image, submission, modules, replace, generation)
        except BaseException:
            # Ctrl-C (or a failure) before the caller holds this worker, who would close it:
            # nothing of it stays behind.
            if getattr(self, "proc", None) is not None:
                self.kill()
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


def describe_exit(returncode) -> str:
    if isinstance(returncode, int) and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = {"SIGSEGV": _(" (a segmentation fault)"),
                "SIGKILL": _(" (killed, often for exceeding the memory or CPU limit)"),
                "SIGXCPU": _(" (the CPU-time limit)")}.get(name, "")
        return _("was killed by {signal}{hint}").format(signal=name, hint=hint)
    return _("exited with status {status} (does your code call sys.exit, os._exit or quit?)").format(status=returncode)


class Sandbox:
    """All calls of one grading run into one submission; replaces the worker when it dies.

    A context manager: `with Sandbox(unit, submission) as sandbox:` starts the worker at
    once (its start-up overlaps whatever the grader does next) and closes it at the end.
    """

    def __init__(self, unit: Unit, submission: Path, hidden: bool = True, trusted: bool = False,
                 image: WorkerImage | None = None, spare: bool = True):
        self.unit = unit
        self.submission = Path(submission).resolve()
        self.limits: Limits = unit.limits
        config = image_config(unit, hidden, trusted)
        if image is not None and image.config != config:
            raise ValueError("the worker image was made for another unit, suite or trust level")
        # A batch job lends its image to every submission; a single grading makes its own.
        self._own_image = image is None
        self.image = image or start_image(config)
        # "main" runs the tests' calls; "spare" runs calls submitted to the background
        # (`submit`), so that long independent runs overlap the tests on a second core. Without
        # a spare (`spare=False`: a batch job, where the other job has the other core), those
        # calls wait for their result to be asked and run on the main worker: one worker less
        # to start per submission.
        self.spare = spare
        self._workers: dict[str, Worker | None] = {"main": None, "spare": None}
        self._replace: dict[str, dict] = {}     # slot -> the rewrite its (fresh) worker was made with
        self._generation = 0
        self._lock = threading.Lock()
        self._background: ThreadPoolExecutor | None = None
        self.import_status: dict = {}     # module -> (status, message)
        self.timed_out: dict[str, StudentTimeout] = {}   # "module.function" -> its first call's timeout
        # What the student's calls have spent (CPU and sleep, isolation/clock.py), per topic: the
        # topic whose test is running (`charged_to`, set by the grading's pytest plugin), else
        # the called module's. Each topic, and the whole grading, has a budget (`Limits`).
        self.charged_to: str | None = None
        self.spent: dict[str, float] = {}
        self.sandbox_info: dict | None = None
        self.restarts = 0
        self.failure: IsolationError | None = None
        # What the worker sends (messages, tracebacks, results a check may quote) and its last
        # output never name the grader's folders (see `redact`): every report is built from them.
        self.redact = Redactor({unit.path: "<unit>", self.submission: "<submission>"})

    def worker(self, slot: str = "main") -> Worker:
        worker = self._workers[slot]
        if worker is None or worker.proc.poll() is not None:
            if worker is not None:
                worker.close()
            with self._lock:
                self._generation += 1
                generation = self._generation
            worker = self._workers[slot] = Worker(self.image, self.submission, self.limits, generation,
                                                  self.unit.modules, self.redact, self._replace.get(slot))
        return worker

    def _discard(self, slot: str) -> None:
        worker, self._workers[slot] = self._workers[slot], None
        if worker is not None:
            worker.close()
        self.restarts += 1

    def __enter__(self) -> Sandbox:
        self.worker()
        return self

    def start(self) -> dict:
        """Wait until the worker is ready; what isolation it applied (IsolationError if none
        could be had where it is required)."""
        self.sandbox_info = self.worker().wait_ready()
        return self.sandbox_info

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for slot, worker in list(self._workers.items()):
            if worker is not None and slot != "main":
                worker.kill()            # a background call still running ends now
        if self._background is not None:
            self._background.shutdown(wait=True, cancel_futures=True)
        for slot, worker in list(self._workers.items()):
            if worker is not None:
                worker.close()
                self._workers[slot] = None
        if self._own_image:
            self.image.close()

    def _request(self, message: dict, cpu_s: float, what: str, topic: str) -> dict:
        return next(self._requests(message, 1, cpu_s, what, topic))

    def _allowance(self, topic: str, cpu_s: float) -> tuple[float, str | None]:
        """The seconds the next call may spend, and the budget that shortens it below `cpu_s`
        ("topic", "submission" or "imports"), or None. The imports of a grading share one
        budget of IMPORTS_SHARE import limits (IMPORTS): an import that hangs in every module
        costs two import limits, not nine, and one module that hangs leaves the others one
        whole import limit of their own."""
        with self._lock:
            if topic == IMPORTS:
                left = {"imports": self._budget_seconds("imports") - self.spent.get(IMPORTS, 0.0)}
            else:
                left = {"topic": self.limits.topic_s - self.spent.get(topic, 0.0),
                        "submission": self.limits.submission_s - sum(self.spent.values())}
        shortest = min(left, key=lambda k: left[k])
        return (left[shortest], shortest) if left[shortest] < cpu_s else (cpu_s, None)

    def _budget_seconds(self, name: str) -> float:
        return {"topic": self.limits.topic_s, "submission": self.limits.submission_s,
                "imports": IMPORTS_SHARE * self.limits.import_cpu_s}[name]

    def _charge(self, topic: str, budget: Budget) -> None:
        budget.look()
        with self._lock:
            self.spent[topic] = self.spent.get(topic, 0.0) + budget.cpu + max(budget.blocked, 0.0)

    def _requests(self, message: dict, count: int, cpu_s: float, what: str, topic: str, slot: str = "main"):
        allowed, budget_name = self._allowance(topic, cpu_s)
        if allowed <= 0:
            assert budget_name is not None              # only a budget can leave nothing
            raise StudentTimeout(what, budget_name, self._budget_seconds(budget_name))

        def allowance() -> float:                       # each reply of a map: what is left then
            nonlocal budget_name
            seconds, budget_name = self._allowance(topic, cpu_s)
            return max(seconds, 0.0)

        worker = self.worker(slot)
        replies = worker.requests(message, count, allowance)
        while True:
            try:
                reply = next(replies)
            except StopIteration:
                return
            except IsolationError as exc:
                self.failure = exc       # a replacement worker could not start: the run is void
                raise
            except WorkerTimedOut as timed_out:
                budget = timed_out.budget
                self._charge(topic, budget)
                self._discard(slot)
                if budget_name and budget.spent in ("cpu", "blocked"):
                    raise StudentTimeout(what, budget_name, self._budget_seconds(budget_name)) from None
                seconds = budget.wall_s if budget.spent == "wall" else cpu_s
                raise StudentTimeout(what, budget.spent or "cpu", seconds) from None
            except WorkerDied as died:
                self._discard(slot)
                output = self.redact(died.log_tail).strip()
                detail = _("; its last output:\n{output}").format(output=output[-800:]) if output else ""
                how = died.reason or describe_exit(died.returncode)
                raise StudentCrash(_("the process running your code {how} during {what}{detail}").format(
                    how=how, what=what, detail=detail)) from None
            self.sandbox_info = worker.sandbox_info
            self._charge(topic, worker.budget)
            yield reply

    # ------------------------------------------------------------------ imports
    def probe(self, module: str) -> tuple[str, str]:
        """Import a student module; return (topic status, message). 'graded' means it imported."""
        if module in self.import_status:
            return self.import_status[module]
        file = f"{module}.py"
        try:
            reply = self._request({"op": "probe", "module": module}, self.limits.import_cpu_s,
                                  _("the import of {file}").format(file=file), IMPORTS)
        except StudentTimeout as exc:
            status = ("timeout", _("{problem}: move slow work out of module level in {file}").format(
                problem=exc.message, file=file))
        except StudentCrash as exc:
            status = ("crashed", _("{problem}: check the module-level code of {file}").format(
                problem=exc.message, file=file))
        else:
            if reply["ok"]:
                status = ("graded", "")
            elif reply["kind"] == "missing":
                status = ("not_implemented", _("{file} is missing from the submission: copy the stub {stub} and "
                                               "fill in its TODOs").format(file=file, stub=self.unit.stub_path(module)))
            else:
                where = _(" at {where}").format(where=reply["where"]) if reply.get("where") else ""
                allowed = (_(" (exercises may import only numpy and the Python standard library)")
                           if reply["type"] == "ModuleNotFoundError" else "")
                status = ("error", _("{file} does not import: {error}{where}{allowed}; fix this first (run "
                                     "`python -c \"import {module}\"` in the submission folder)").format(
                    file=file, error=f"{reply['type']}: {reply['message']}", where=where, allowed=allowed,
                    module=module))
        self.import_status[module] = status
        return status

    def _topic_of(self, module: str) -> str:
        topic = self.unit.modules.get(module)
        return topic.id if topic is not None else module

    # -------------------------------------------------------------------- calls
    def call(self, module: str, function: str, args: tuple, kwargs: dict, patches: dict | None = None,
             follow: tuple | None = None):
        """(result, names of the arguments it modified, notes) of one call into student code;
        notes: "aliased" (arguments the result hands back) and "warnings" (raised during the call);
        with `follow` = (function, argument, result), "followed" (see isolation/follow.py)."""
        return self.call_many(module, function, [(args, kwargs)], patches, follow=follow)[0]

    def call_replaced(self, module: str, function: str, args: tuple, replace: dict, patches: dict | None = None,
                      topic: str | None = None):
        """`call` in a worker of its own, started for this call from a copy of the submission
        in which the functions named in `replace` ({"module.function": rewrite.Body}) run
        other code: the student's own def makes them (see isolation/rewrite.py), so the call
        cannot tell its module from the one the other calls see. The worker ends with the call."""
        with self._lock:
            self._generation += 1
            slot = f"replaced-{self._generation}"
        self._replace[slot], self._workers[slot] = replace, None
        try:
            return self.call_many(module, function, [(args, {})], patches, slot, topic)[0]
        finally:
            worker = self._workers.pop(slot, None)
            self._replace.pop(slot, None)
            if worker is not None:
                worker.close()

    def submit(self, module: str, function: str, args: tuple, patches: dict | None = None,
               replace: dict | None = None) -> Pending:
        """One call run in the background on a second worker (forked from the same image,
        holding the same submission), or without a spare on the main worker when its result
        is first asked: its `result()` is what `call` would return, or raises what it would
        raise. Calls submitted together run one after another."""
        topic = self.charged_to                        # the test that submitted it pays for it
        if replace:
            run = lambda: self.call_replaced(module, function, args, replace, patches, topic)  # noqa: E731
        else:
            run = lambda: self.call_many(module, function, [(args, {})], patches, "spare", topic)[0]  # noqa: E731
        if not self.spare:
            return Pending(run if replace else
                           lambda: self.call_many(module, function, [(args, {})], patches, "main", topic)[0])
        self.probe(module)               # here: the main worker serves this thread only
        if self._background is None:
            self._background = ThreadPoolExecutor(1, thread_name_prefix="autograder-spare")
        running = self._background.submit(run)
        return Pending(running.result)

    def call_many(self, module: str, function: str, calls: list, patches: dict | None = None,
                  slot: str = "main", topic: str | None = None, follow: tuple | None = None) -> list:
        """The same function on each (args, kwargs) of `calls`, in one exchange with the
        worker (a test that makes hundreds of calls pays the process boundary once); the
        first failing call raises, as in a loop of single calls. Each call has the call
        time limit. The calls spend `topic`'s budget (default: the topic being graded)."""
        topic = topic or self.charged_to or self._topic_of(module)
        what = f"{module}.{function}()"
        status, message = self.probe(module)
        if status != "graded":
            raise StudentImportError(message, status)
        if what in self.timed_out:
            raise self.timed_out[what].again(what)
        lent = {target: callbacks.Lent(value) if callable(value) else value
                for target, value in (patches or {}).items()}
        request = {"op": "map", "module": module, "function": function,
                   "calls": [{"args": list(args), "kwargs": kwargs} for args, kwargs in calls],
                   "keep": list(self.unit.kept_outputs(module, function)), "patches": lent}
        if follow:
            request["follow"] = list(follow)
        try:    # every reply is read before any is judged: none may be left in the pipe
            replies = list(self._requests(request, len(calls), self.limits.call_cpu_s, what, topic, slot))
        except StudentTimeout as timeout:
            if timeout.limit not in ("topic", "submission"):    # a spent budget is no fault of this function's
                self.timed_out[what] = timeout
            raise
        return [self._result(module, function, reply) for reply in replies]

    def _result(self, module: str, function: str, reply: dict):
        try:
            if not reply.get("ok"):
                raise self._problem(module, function, reply)
            notes = reply.get("notes") or {}
            return reply["result"], list(map(str, reply.get("mutated", []))), \
                {"aliased": list(map(str, notes.get("aliased", []))), "warnings": list(map(str, notes.get("warnings", []))),
                 "followed": [None if v is None else bool(v) for v in notes.get("followed", [])]}
        except (wire.WireError, KeyError, TypeError, ValueError, RecursionError) as exc:
            raise StudentCodeError(_("{function}() sent back data the grader cannot read ({error}); return numpy "
                                     "arrays, numbers, tuples, lists or dicts").format(
                function=f"{module}.{function}", error=exc)) from None

    def _problem(self, module: str, function: str, reply: dict) -> StudentProblem:
        kind, etype, msg = reply["kind"], reply["type"], reply["message"]
        where = reply.get("where", "")
        at = _(" (at {where})").format(where=where) if where else ""
        if kind == "exception" and etype == "NotImplementedError":
            # "where" is "file.py:line in function": the stub that raised may be another
            # module's, called by this function (the lab calls bptt.py).
            file, _sep, raiser = where.partition(" in ")
            file = file.rsplit(":", 1)[0]
            if file.endswith(".py") and file != f"{module}.py" and raiser:
                stub = f"{file[:-3]}.{raiser}"
                return NotImplementedYet(_("{function} calls {stub}, which is not implemented yet: fill in the TODO "
                                           "in {file} (at {where})").format(function=f"{module}.{function}",
                                                                            stub=stub, file=file, where=where),
                                         stub, where)
            return NotImplementedYet(_("{function} is not implemented yet: fill in the TODO in {file}{at}").format(
                function=f"{module}.{function}", file=f"{module}.py", at=at), f"{module}.{function}", where)
        if kind == "missing_function":
            return StudentCodeError(_("{file} does not define {function}(): restore it from the stub {stub}").format(
                file=f"{module}.py", function=function, stub=self.unit.stub_path(module)), etype)
        if kind == "import":
            return StudentImportError(_("{file} failed while importing: {error}{at}").format(
                file=f"{module}.py", error=f"{etype}: {msg}", at=at), "error")
        if kind == "bad_value":
            return StudentCodeError(_("{problem}: return numpy arrays, numbers, tuples, lists or dicts").format(
                problem=msg), etype)
        if kind == "stale":
            return StudentCrash(f"{module}.{function}: {msg}")
        return StudentCodeError(_("{function} raised {error}{at}").format(
            function=f"{module}.{function}", error=f"{etype}: {msg}", at=at), etype, where,
                                reply.get("traceback", ""))


class Pending:
    """A result to come: `make()` runs when `result()` is first asked (it may wait for a
    background call), and its value or exception is kept for later asks."""

    def __init__(self, make):
        self._make, self._outcome = make, None

    def result(self):
        if self._outcome is None:
            try:
                self._outcome = (True, self._make())
            except Exception as exc:  # noqa: BLE001 - raised again to whoever asks
                self._outcome = (False, exc)
        ok, value = self._outcome
        if not ok:
            raise value
        return value


class StudentFunction:
    def __init__(self, module: StudentModule, name: str, patches: dict | None = None, replace: dict | None = None,
                 follow: tuple | None = None):
        self._module, self._name, self._patches, self._replace = module, name, patches, replace
        self._follow = follow

    def __call__(self, *args, **kwargs):
        if self._replace:
            result, mutated, notes = self._module._sandbox.call_replaced(self._module._name, self._name, args,
                                                                         self._replace, self._patches)
        else:
            result, mutated, notes = self._module._sandbox.call(self._module._name, self._name, args, kwargs,
                                                                self._patches, self._follow)
        self._module.last_mutated, self._module.last_notes = mutated, notes
        return result

    def submit(self, *args) -> Pending:
        """self(*args), run in the background on a second worker (see `Sandbox.submit`): its
        `result()` is the call's result, or raises what the call raised."""
        call = self._module._sandbox.submit(self._module._name, self._name, args, self._patches, self._replace)
        return Pending(lambda: call.result()[0])

    def map(self, arg_lists) -> list:
        """[f(*args) for args in arg_lists], in one exchange with the worker. The first
        failing call raises, as in that loop."""
        calls: list[tuple[tuple, dict]] = [(tuple(args), {}) for args in arg_lists]
        replies = self._module._sandbox.call_many(self._module._name, self._name, calls, self._patches)
        self._module.last_mutated = list(dict.fromkeys(name for _result, mutated, _notes in replies for name in mutated))
        return [reply[0] for reply in replies]

    def patched(self, patches: dict) -> StudentFunction:
        """The same function, run with module attributes replaced, e.g.
        {"fault_injection.clip_grad_norm": BrokenClip()}: a callable replacement stays in the
        grader and is lent for the call (the worker gets a proxy, revoked when the call
        ends); a plain value (a number, an array) is set as it is."""
        return StudentFunction(self._module, self._name, patches, self._replace)

    def followed(self, function: str, argument: int, result: int) -> StudentFunction:
        """The same function, watching what the module's `function` is handed when this one calls
        it: after a call, last_notes["followed"] says for each call of `function` whether its
        argument `argument` was element `result` of what its previous call returned (the same
        objects; None for the first call). See isolation/follow.py."""
        return StudentFunction(self._module, self._name, self._patches, self._replace, (function, argument, result))

    def replaced(self, replace: dict) -> StudentFunction:
        """The same function, each call in a fresh worker whose module has other code in the
        functions of `replace` ({"module.function": rewrite.Body}; see `Sandbox.call_replaced`)."""
        return StudentFunction(self._module, self._name, self._patches, replace)

    def __repr__(self):
        return f"<student function {self._module._name}.{self._name}>"


class StudentModule:
    """Looks like the student's module; every function call runs in the worker."""

    def __init__(self, sandbox: Sandbox, name: str):
        self._sandbox, self._name = sandbox, name
        self.last_mutated: list[str] = []   # names of the arguments the last call modified
        self.last_notes: dict = {}          # of the last call: "aliased" arguments handed back, "warnings" raised

    def __getattr__(self, name: str) -> StudentFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        return StudentFunction(self, name)

    def __repr__(self):
        return f"<student module {self._name} (in the worker)>"
