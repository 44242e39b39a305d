"""`batch`'s process pool: the job processes that grade a class, and the line protocol
between them and the coordinator (`autograder.commands.batch`).

A job (`python -m autograder.commands.batch_pool CONFIG`, see `job_main`) imports the grader
once, starts one worker image and the unit's artefacts hook, then grades submission after
submission through the pipeline, each in fresh workers forked from its image. The
coordinator's `Job` writes it one JSON line per submission (`{"submission", "out", "topics",
"shown_as"}`) and reads one JSON line back (`grade_task`'s answer: "graded" with the scores,
or "grader_error" with a detail).

A submission that outlives `--timeout` costs its job: `Job.grade` raises `JobTimedOut`, the
coordinator stops that job (SIGTERM, then SIGKILL; its image and workers go with it) and a
new job takes the next submission. A job that dies (`JobDied`) costs only the submission it
held.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

from autograder.errors import GraderError
from autograder.grading.run import SUITES, Options, select_topics
from autograder.intake import submissions
from autograder.isolation.clock import Budget, TreeClock
from autograder.isolation.image import image_config, start_image
from autograder.pipeline import ArtefactsHook, grade_and_report, limit_own_memory, stop_on_sigterm
from autograder.reports import similarity
from autograder.reports.submission_status import SubmissionStatus
from autograder.unit.load import load_unit
from autograder.unit.test_ids import names_a_test

STOP_GRACE_S = 5.0
WALL_FACTOR = 4        # a submission's wall-clock backstop: 4 times its CPU limit (--timeout)


class JobTimedOut(Exception):
    """The submission a job holds reached its limit: `str(exc)` is "cpu" (--timeout) or "wall"."""


class JobDied(Exception):
    """The job ended (or closed its pipe) before it answered: `str(exc)` is the end of its log."""


class Job:
    """One long-lived grading process (coordinator side)."""

    def __init__(self, config: dict):
        # Imported here for start-up speed: the pipe module loads numpy, and a job process
        # (this module run as a script) must start its worker image before numpy loads.
        from autograder.isolation.pipe import LogDrain

        # The job's stderr is a pipe of our own, not Popen's: its drain closes the read end when
        # the job's output ends, and a file object holding the same number would close it again
        # when collected, when the number may already be another worker's pipe.
        log_r, log_w = os.pipe()
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "autograder.commands.batch_pool", json.dumps(config)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_w,
                                         start_new_session=True)
        except BaseException:
            os.close(log_r)
            raise
        finally:
            os.close(log_w)
        # opened as pipes above, so never None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._log = LogDrain(log_r)
        self._log.start()
        self._buf = b""

    def grade(self, task: dict, timeout: float) -> dict:
        """The job's answer for `task`. `timeout` is CPU time of the job and every process it
        started (its worker image and workers), read from the kernel, so that a busy machine
        does not time a submission out; the wall clock is a backstop of WALL_FACTOR times it."""
        budget = Budget(timeout, WALL_FACTOR * timeout, TreeClock(self.proc.pid))
        try:
            self._stdin.write((json.dumps(task) + "\n").encode())
            self._stdin.flush()
        except OSError:
            raise JobDied(self.tail()) from None
        fd = self._stdout.fileno()
        while b"\n" not in self._buf:
            left = budget.wait_s()
            if left <= 0:
                raise JobTimedOut(budget.spent)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise JobDied(self.tail())
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def tail(self) -> str:
        try:
            self.proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        return self._log.tail().strip()[-300:]

    def stop(self) -> None:
        """SIGTERM (the job stops grading and closes its workers), SIGKILL if that does not end it."""
        try:
            self._stdin.close()
        except OSError:
            pass
        for sig, grace in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, None)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
        self.proc.wait()
        self._stdout.close()


def job_configs(config: dict, jobs: int) -> list[dict]:
    """The configuration of each of `jobs` job processes. Where a core is left over, a job's
    background calls (the lab's runs with a broken primitive) get a spare worker; otherwise
    it would be one more worker to start per submission. With one job per core, each job
    (and every worker it forks) keeps to its own core: a call into the worker and its reply
    then switch processes on one core instead of waking the other, which left a core idle
    ~5 % of the time (measured: `--jobs 2` on two cores grades ~9 % more submissions a second)."""
    pinnable = hasattr(os, "sched_getaffinity")           # Linux; elsewhere no job is pinned
    cpus = sorted(os.sched_getaffinity(0)) if pinnable else list(range(os.cpu_count() or 1))
    return [dict(config, spare=jobs < len(cpus), cpu=cpus[k] if pinnable and jobs == len(cpus) else None)
            for k in range(jobs)]


# ------------------------------------------------------------------------------ a job


def job_main(config: dict) -> None:
    """Grade the submissions named on stdin (one JSON line each), one JSON line back per
    submission. Everything slow is done once: imports, the worker image, the unit's artefacts hook."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                       # a stray print must not corrupt the answers
    if config.get("cpu") is not None:   # before the image starts: its workers keep to the core too
        os.sched_setaffinity(0, {config["cpu"]})
    limit_own_memory()
    stop_on_sigterm()
    unit = load_unit(config["unit"])
    topics = tuple(config["topics"] or ()) or None
    options = Options(config["suite"], topics, config["seed"], trusted=False, lang=config.get("lang"))
    image_for = image_config(unit, hidden="hidden" in SUITES[options.suite], trusted=False)
    image = start_image(image_for)
    # With a plan, any topic may come: the hook is made for all of them.
    artefacts = ArtefactsHook(unit, select_topics(unit, None if config.get("planned") else topics), options.suite)
    try:
        for line in sys.stdin:
            task = json.loads(line)
            if image.proc.poll() is not None:        # never expected; a new image, not a dead class
                image.close()
                image = start_image(image_for)
            answers.write(json.dumps(grade_task(unit, options, task, artefacts, image, config["spare"])) + "\n")
            if not gc.get_freeze_count():
                # After one grading, what is loaded (numpy, pytest, the suites, the reference)
                # lives as long as the job: the cyclic collector need not walk it again in every
                # collection of every later grading (~6 % of the grader's CPU).
                gc.collect()
                gc.freeze()
    except KeyboardInterrupt:          # SIGTERM from the coordinator: the submission ran out of time
        pass
    finally:
        artefacts.close()
        image.close()


_GIVEN: dict[str, similarity.Given] = {}       # unit folder -> what its students were given


def given(unit) -> similarity.Given:
    key = str(unit.path)
    if key not in _GIVEN:
        _GIVEN[key] = similarity.boilerplate(unit, submissions.PACKAGE_ROOT)
    return _GIVEN[key]


def grade_task(unit, options, task: dict, artefacts, image, spare: bool) -> dict:
    sub, out = Path(task["submission"]), Path(task["out"])
    if task.get("topics"):          # a plan's entry: topics, and tests of other topics
        options = replace(options, topics=tuple(t for t in task["topics"] if not names_a_test(t)) or None,
                          tests=tuple(t for t in task["topics"] if names_a_test(t)) or None)
    if task.get("shown_as"):
        options = replace(options, shown_folder=task["shown_as"])
    command = f"python -m autograder grade {sub} --out {out} --unit {unit.name} --suite {options.suite}"
    command += "".join(f" --topic {t}" for t in options.topics or ())
    command += "".join(f" --test {t}" for t in options.tests or ())
    command += f" --seed {options.seed}" if options.seed is not None else ""
    try:
        result, _ = grade_and_report(unit, sub, out, options, command, time.perf_counter(),
                                     artefacts=artefacts, image=image, spare=spare)
    except GraderError as exc:  # UnitError and RubricError are GraderErrors too
        return {"status": SubmissionStatus.GRADER_ERROR, "detail": str(exc)}
    except Exception:  # noqa: BLE001 - the grader's fault; this submission's row says so
        return {"status": SubmissionStatus.GRADER_ERROR, "detail": traceback.format_exc()[-300:]}
    # Fingerprinted here, in parallel across jobs, rather than one by one by the coordinator
    # (which does it for the submissions no job fingerprinted in this run).
    with contextlib.suppress(OSError, ValueError):
        similarity.write_fingerprints(out, sub, unit.modules, given(unit))
    return {"status": SubmissionStatus.GRADED, "earned": result.earned, "possible": result.possible, "seed": result.seed,
            "topics": {t.id: {"earned": t.earned, "status": t.status} for t in result.topics}}


if __name__ == "__main__":
    job_main(json.loads(sys.argv[1]))
