"""A pre-loaded worker image: one process that has imported numpy, the preload list and
the unit's helper objects, and forks a fresh worker for every submission (and every
replacement after a crash or a timeout).

Starting a worker from scratch costs a Python start and those imports (~0.25 s of CPU);
forking the image costs a few milliseconds. The image itself never imports or runs
student code, and it is started before the grader imports anything secret, from a
configuration that names no submission: what a forked worker inherits is what a worker
started from scratch would have loaded anyway.

    image = WorkerImage(config)            # one per grading run, or per batch job
    process = image.spawn(root, generation, (fd_in, fd_out, log))
    process.poll(); process.wait(timeout); process.kill()
    image.close()                          # kills whatever it forked

The image's side of the protocol is `autograder.isolation.worker.image`. This module
imports no numpy: the grader starts the image before it imports anything heavy.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:          # for the annotations only: this module loads nothing heavy (see above)
    from autograder.unit.model import Unit

# Variables a worker may inherit: the OpenBLAS ones work around wrong results on some CPUs.
PASSED_THROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def scrubbed_env() -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/work", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
    env.update({k: os.environ[k] for k in PASSED_THROUGH_ENV if k in os.environ})
    return env


def image_config(unit: Unit, hidden: bool, trusted: bool) -> dict:
    """What a worker image (and every worker forked from it) is made from: the unit, the
    suites it serves and how strictly it must be isolated; never a submission."""
    limits = unit.limits
    # Untrusted code next to hidden suites must be isolated; public-only runs (a
    # student's own machine) and trusted code run with whatever isolation there is.
    return {"preload": list(unit.preload),
            "unit": {"name": unit.name, "path": str(unit.path), "modules": unit.worker_modules(hidden)},
            "limits": {"memory_mb": limits.memory_mb, "cpu_s": limits.cpu_s, "disk_mb": limits.disk_mb},
            "isolation": "required" if hidden and not trusted else "best-effort",
            "force_unavailable": os.environ.get("AUTOGRADER_NO_NAMESPACES") == "1"}


def start_image(config: dict) -> WorkerImage:
    return WorkerImage(config, scrubbed_env(), tempfile.gettempdir())


class ImageError(RuntimeError):
    """The image could not start, or stopped answering."""


class WorkerImage:
    def __init__(self, config: dict, env: dict, cwd: str):
        self.config = config
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._err_r, err_w = os.pipe()
        self.proc = subprocess.Popen(
            # --root: where its workers' folders are made (so a process list shows whose image it is)
            [sys.executable, "-I", "-m", "autograder.isolation.worker", "--fd-control", str(theirs.fileno()),
             "--root", cwd, "--config", json.dumps(config)],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_w,
            env=env, cwd=cwd, start_new_session=True)
        theirs.close()
        os.close(err_w)
        self._control = ours
        self._lock = threading.Lock()      # a second worker may be spawned from another thread
        self._close_lock, self._closed = threading.Lock(), False

    def _ask(self, request: dict, fds: tuple[int, ...] = ()) -> dict:
        with self._lock:
            error: OSError | None
            try:
                socket.send_fds(self._control, [json.dumps(request).encode()], list(fds))
                data = self._control.recv(1 << 16)
            except OSError as exc:
                data, error = b"", exc
            else:
                error = None
            if not data:
                raise ImageError(f"the worker image stopped ({error or self._exit_detail()})")
            return json.loads(data)

    def _exit_detail(self) -> str:
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "it does not answer"
        os.set_blocking(self._err_r, False)
        try:
            err = os.read(self._err_r, 1 << 16).decode(errors="replace").strip()
        except OSError:
            err = ""
        return f"exit status {self.proc.returncode}" + (f": {err[-1500:]}" if err else "")

    def spawn(self, root: str, generation: int, fds: tuple[int, int, int]) -> ForkedProcess:
        reply = self._ask({"op": "spawn", "root": root, "generation": generation}, fds)
        return ForkedProcess(self, int(reply["pid"]))

    def close(self) -> None:
        """Stop the image, once: a second close must not close a file number the process has
        since given to another file."""
        with self._close_lock:             # not _lock: a thread may be waiting on the image in _ask
            closed, self._closed = self._closed, True
        if closed:
            return
        try:
            self._control.close()          # the image kills its workers and exits on hang-up
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            os.close(self._err_r)


class ForkedProcess:
    """A worker forked by the image, with the parts of `subprocess.Popen` the sandbox uses:
    `pid`, `returncode`, `poll()`, `wait(timeout)`, `kill()`. The worker leads its own
    session, so killing its process group kills everything it started."""

    def __init__(self, image: WorkerImage, pid: int):
        self.image, self.pid = image, pid
        self.returncode: int | None = None
        self._lock = threading.Lock()    # a background call's thread and the main one may both poll
        # A pidfd turns readable when the process ends: poll() asks the image for the exit
        # status only then (the sandbox polls before every call into student code).
        self._pidfd: int | None
        try:
            self._pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self._pidfd = None

    def poll(self):
        with self._lock:
            if self.returncode is None:
                if self._pidfd is not None and not select.select([self._pidfd], [], [], 0)[0]:
                    return None
                try:
                    status = self.image._ask({"op": "poll", "pid": self.pid})["status"]
                except ImageError:
                    status = signal.SIGKILL          # the image is gone, and its workers with it
                if status is not None:
                    self.returncode = os.waitstatus_to_exitcode(status)
                    if self._pidfd is not None:
                        os.close(self._pidfd)
                        self._pidfd = None
            return self.returncode

    def wait(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.001
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                assert timeout is not None               # a time left implies a timeout
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            with self._lock:     # a copy: another thread's poll may close the pidfd meanwhile
                pidfd = os.dup(self._pidfd) if self._pidfd is not None else None
            if pidfd is not None:          # readable the moment the worker ends
                try:
                    select.select([pidfd], [], [], left)
                finally:
                    os.close(pidfd)
            else:
                time.sleep(delay if left is None else min(delay, left))
                delay = min(delay * 2, 0.05)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
