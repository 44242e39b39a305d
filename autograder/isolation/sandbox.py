"""Grader side of a grading's calls into student code: start the worker, call into student
code within the time limits and budgets, replace the worker when it dies, and turn every
failure into an exception whose message tells the student what to fix.

Tests never see the worker directly: they get a `StudentModule` proxy per topic module
(`bptt.rnn_forward(x, h0, Wx, Wh, b)`), which looks like the student's module. The parts:
errors.py (the exceptions), pipe.py (one worker process and its framed pipes), proxies.py
(what a test holds) and this module (`Sandbox`: the workers of one grading, its budgets).
"""

from __future__ import annotations

import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.i18n import _
from autograder.isolation import callbacks, wire
from autograder.isolation.clock import Budget
from autograder.isolation.errors import (
    IsolationError,
    NotImplementedYet,
    StudentCodeError,
    StudentCrash,
    StudentImportError,
    StudentProblem,
    StudentTimeout,
)
from autograder.isolation.image import WorkerImage, image_config, start_image
from autograder.isolation.pipe import LogDrain, Worker, WorkerDied, WorkerTimedOut
from autograder.isolation.proxies import Pending, StudentFunction, StudentModule
from autograder.isolation.redact import Redactor

if TYPE_CHECKING:
    from autograder.unit.model import Limits, Unit

# What the engine, the tests and the hidden suites import from here (the exceptions are
# errors.py's, the proxies proxies.py's, the worker's client pipe.py's).
__all__ = [
    "IMPORTS", "IsolationError", "LogDrain", "NotImplementedYet", "Pending", "Sandbox", "StudentCodeError",
    "StudentCrash", "StudentFunction", "StudentImportError", "StudentModule", "StudentProblem", "StudentTimeout",
    "Worker", "WorkerDied", "WorkerTimedOut", "describe_exit",
]

IMPORTS = "(imports)"          # the budget the imports of a grading share (Sandbox.spent)
IMPORTS_SHARE = 2              # that budget, in import limits


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
            if file.endswith(".py") and raiser and (file != f"{module}.py" or raiser != function):
                # another function raised it, of this module (attribute_error calls
                # sequence_score) or another: name that one, the stub left to do
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
