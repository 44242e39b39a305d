"""`python -m autograder batch ROOT`: grade a class, one entry of ROOT per student.

ROOT holds submissions as instructors receive them (autograder/intake/submissions.py: folders, one
nested level, wrapper folders, repository clones, archives); what is not a submission gets
a row that says why. Each student's reports go to OUT/students/<name>/, apart from the
class files (class.csv, class.md, ...) whatever the student is called. A rerun skips a
submission whose report was written by the same grader version with the same seed (unless
--force), so an interrupted class resumes where it stopped.

The coordinator (this process, `run`) hands submissions one at a time to `--jobs`
job processes and writes class.csv. A job (`python -m autograder.commands.batch CONFIG`,
see `job_main`) imports the grader once, starts one worker image and the unit's artefacts
hook, then grades submission after submission through the pipeline, each in fresh workers
forked from its image, and answers one JSON line per submission.

A submission that outlives `--timeout` costs its job: the coordinator stops that job
(SIGTERM, then SIGKILL; its image and workers go with it), records `timeout`, and a new
job takes the next submission. A job that dies costs only the submission it held.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path

from autograder import i18n
from autograder.errors import GraderError
from autograder.grading.run import SUITES, Options, select_topics
from autograder.grading.seed import submission_seed
from autograder.intake import submissions
from autograder.intake.manifest import read_manifest, tampered_files
from autograder.isolation.clock import Budget, TreeClock
from autograder.isolation.image import image_config, start_image
from autograder.pipeline import (
    EXIT_GRADER,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ArtefactsHook,
    grade_and_report,
    limit_own_memory,
    stop_on_sigterm,
)
from autograder.reports import class_report, similarity
from autograder.reports.class_csv import write_class_csv
from autograder.reports.class_report import student_folder
from autograder.reports.text import csv_cell, one_line
from autograder.unit.load import load_unit
from autograder.version import grader_version

STOP_GRACE_S = 5.0
WALL_FACTOR = 4        # a submission's wall-clock backstop: 4 times its CPU limit (--timeout)


class JobTimedOut(Exception):
    pass


class JobDied(Exception):
    pass


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
            self.proc = subprocess.Popen([sys.executable, "-m", "autograder.commands.batch", json.dumps(config)],
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


class Progress:
    """done/total, rate, failures and time left: one line redrawn on a terminal; in a CI log
    (not a terminal), quiet: a line per tenth of the class and one per submission that could
    not be graded, never a carriage return."""

    STEPS = 10          # lines a CI log gets for a whole class, failures aside

    def __init__(self, total: int, stream=None, clock=time.monotonic):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.clock = clock
        self.started = clock()
        self._lock = threading.Lock()

    def tick(self, row: dict) -> None:
        with self._lock:
            self.done += 1
            failed = row["status"] in ("grader_error", "timeout", "not_a_submission")
            self.failed += failed
            elapsed = max(self.clock() - self.started, 1e-9)
            rate = self.done / elapsed
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            counted = f"{self.done}/{self.total}"
            summary = f"{rate:.2f}/s, {self.failed} failed, about {_duration(left)} left"
            if self.tty:
                self.stream.write(f"\r{counted} graded, {summary}   ")
                if self.done == self.total:
                    self.stream.write("\n")
            else:
                step = self.total / self.STEPS
                milestone = self.done == self.total or int(self.done / step) > int((self.done - 1) / step)
                if failed:
                    self.stream.write(f"{csv_cell(row['submission'])}: {row['status']}: "
                                      f"{one_line(str(row.get('detail', '')), 200)}\n")
                if milestone or failed:
                    self.stream.write(f"[{counted}] graded, {summary}\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def run(args) -> int:
    k, n = (int(x) for x in args.shard.split("/"))
    if not (1 <= k <= n):
        print("autograder: --shard must be K/N with 1 <= K <= N", file=sys.stderr)
        return EXIT_GRADER
    started = time.time()
    unit = load_unit(args.assignment)
    plan = read_plan(args.plan, unit) if args.plan else {}
    version = grader_version(unit.path)
    scratch = Path(tempfile.mkdtemp(prefix="autograder-intake-"))
    rows: dict[int, dict] = {}
    mine: list = []
    manifest = read_manifest(args.manifest) if getattr(args, "manifest", None) else None
    interrupted = False
    try:
        mine = submissions.find(args.root, {t.module for t in unit.topics}, scratch)[k - 1::n]
        config = {"assignment": str(unit.path), "suite": args.suite, "topics": args.topics or None,
                  "seed": args.seed, "lang": args.lang, "planned": bool(plan)}
        progress = Progress(len(mine))
        tasks: queue.Queue = queue.Queue()
        for i, entry in enumerate(mine):
            if entry.status != "ok":
                rows[i] = dict(_blank_row(entry.name), status=entry.status, detail=entry.detail)
            elif not getattr(args, "force", False) and (row := previous_row(unit, entry, args, version)):
                rows[i] = row
            else:
                if entry.folder is not None and not entry.folder.is_relative_to(entry.source):  # archives, notebooks
                    keep_unpacked(entry, student_folder(args.out, entry.name) / UNPACKED)
                tasks.put((i, entry, plan.get(entry.name)))
                continue
            progress.tick(rows[i])

        def work(job_config: dict) -> None:
            job = None
            while True:
                try:
                    i, entry, topics = tasks.get_nowait()
                except queue.Empty:
                    break
                job = job or Job(job_config)
                rows[i], healthy = grade_in_job(job, entry, student_folder(args.out, entry.name), args.timeout,
                                                topics)
                progress.tick(rows[i])
                if not healthy:
                    job.stop()
                    job = None
            if job is not None:
                job.stop()

        jobs = max(1, min(args.jobs, tasks.qsize()))
        threads = [threading.Thread(target=work, args=(job_config,), daemon=True)
                   for job_config in job_configs(config, jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # What no job fingerprinted in this run (a submission not regraded, timed out, or whose
        # job died), before the scratch folder goes: an archive's files may still be there.
        for i, entry in enumerate(mine):
            prints = student_folder(args.out, entry.name) / similarity.FILE
            if entry.status == "ok" and i in rows and entry.folder is not None and not _newer(prints, started):
                similarity.write_fingerprints(prints.parent, entry.folder, unit.modules, _given(unit))
    except KeyboardInterrupt:
        # Ctrl-C: no class file of part of the class (an earlier one would be stale: removed);
        # what was graded stays in the students' folders, where a rerun resumes from.
        interrupted = True
        shutil.rmtree(scratch, ignore_errors=True)
        for stale in args.out.glob("class*.*") if args.out.is_dir() else ():
            stale.unlink()
        print(f"autograder: interrupted after {len(rows)} of {len(mine)} submission(s); no class file was written. "
              "Run the same command again to resume.", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:          # the class file is written whatever happened to the submissions (but Ctrl-C)
        if not interrupted:
            if manifest is not None:
                for i, entry in enumerate(mine):
                    if i in rows and entry.status == "ok":
                        rows[i]["tampered"] = tamper_flags(entry, manifest, unit.stubs, unit.modules)
            done = [rows[i] for i in sorted(rows)]
            name = write_class_csv(args.out, unit, done, k, n, version)
            shutil.rmtree(scratch, ignore_errors=True)
    if n == 1:                      # a shard's report would be a third of the class: `merge` writes it
        similar = similarity.write(args.out, args.out / class_report.STUDENTS, [r["submission"] for r in done])
        class_report.write(args.out, unit, done, version, similar, args.lang)
    print(f"{len(done)} submission(s) -> {args.out / name}")
    return EXIT_GRADER if any(r["status"] == "grader_error" for r in done) else EXIT_OK


def _newer(path: Path, than: float) -> bool:
    try:
        return path.stat().st_mtime >= than
    except OSError:
        return False


UNPACKED = "unpacked"       # an archive's module files, kept beside its reports


def keep_unpacked(entry, folder: Path) -> None:
    """Grade an archive's module files from beside its reports, where they stay after the
    run: the evidence file's command then replays the grading as written."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(entry.folder, folder)
    entry.folder = folder


def _blank_row(name: str, folder: str = "") -> dict:
    return {"submission": name, "folder": folder, "earned": "", "possible": "", "status": "grader_error", "seed": "",
            "detail": ""}


def _row_from(entry, summary: dict) -> dict:
    """A class.csv row from a grading's summary (topic -> earned and status)."""
    topics = summary["topics"]
    statuses = {t["status"] for t in topics.values()}
    status = "not_implemented" if statuses == {"not_implemented"} else "graded"
    row = dict(_blank_row(entry.name, entry.shown_as), earned=summary["earned"], possible=summary["possible"],
               status=status, seed=summary["seed"])
    for topic, t in topics.items():
        row[topic], row[f"{topic}_status"] = t["earned"], t["status"]
    return row


def previous_row(unit, entry, args, version: str) -> dict | None:
    """The row of an earlier run's report of this submission, when the same grader version
    graded the same files (so the same seed) on the same topics in the same language."""
    if getattr(args, "plan", None):         # a plan grades each submission on its own topics: no reuse
        return None
    try:
        score = json.loads((student_folder(args.out, entry.name) / "score.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    seed = args.seed if args.seed is not None else submission_seed(unit, entry.folder)
    wanted = set(args.topics or [t.id for t in unit.topics])
    if (score.get("grader_version") != version or score.get("seed") != seed
            or score.get("lang") != (args.lang or i18n.language_from_environment())
            or {t["id"] for t in score.get("topics", [])} != wanted):
        return None
    summary = {"earned": score["earned"], "possible": score["possible"], "seed": score["seed"],
               "topics": {t["id"]: {"earned": t["earned"], "status": t["status"]} for t in score["topics"]}}
    return dict(_row_from(entry, summary), detail="unchanged since the last run: not regraded")


def read_plan(path: Path, unit) -> dict[str, list[str]]:
    """The --plan file: {submission folder name: [topic id or test, ...]}, checked against the
    unit; a test (`topic::public::name`, `topic::hidden::name`) is graded as `grade --test` grades it."""
    try:
        plan = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise GraderError(f"cannot read the plan {path}: {exc}") from None
    known = {t.id for t in unit.topics} | unit.rubric.test_selectors()
    if not isinstance(plan, dict) or not all(isinstance(v, list) and v and set(v) <= known for v in plan.values()):
        raise GraderError(f"the plan {path} must map submission folder names to non-empty lists of topic ids "
                          f"(the assignment has {sorted(t.id for t in unit.topics)}) or rubric tests "
                          "(topic::public::test_name, topic::hidden::test_name)")
    return plan


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


def grade_in_job(job: Job, entry, out: Path, timeout: float, topics: list[str] | None = None) -> tuple[dict, bool]:
    """(class.csv row, whether the job can take another submission)."""
    row = _blank_row(entry.name, entry.shown_as)
    try:
        reply = job.grade({"submission": str(entry.folder), "out": str(out), "topics": topics,
                           "shown_as": entry.shown_as}, timeout)
    except JobTimedOut as timed_out:
        limit = f"{timeout:g} s of CPU time" if str(timed_out) == "cpu" else f"{WALL_FACTOR * timeout:g} s"
        return dict(row, status="timeout", detail=f"grading took longer than {limit}"), False
    except JobDied as died:
        return dict(row, detail=f"the grading process stopped: {died}"), False
    if reply.get("status") != "graded":
        return dict(row, detail=str(reply.get("detail", ""))[-300:]), True
    return _row_from(entry, reply), True


def tamper_flags(entry, manifest: dict[str, str], stubs: str, modules) -> str:
    """The protected files a repository clone changed, "; "-joined; "" where the entry holds
    no clone (a folder or an archive of module files only: nothing to compare). The clone's
    root is where the module files sit in the stubs' folder (`assignments/<unit>/`)."""
    if entry.folder is None or not entry.source.is_dir():
        return ""
    depth = len(Path(stubs).parts)
    root = entry.folder.parents[depth - 1] if entry.folder.as_posix().endswith("/" + stubs) else entry.source
    if not any((root / name).exists() for name in manifest):
        return ""
    return "; ".join(tampered_files(root, manifest, {f"{stubs}/{module}.py" for module in modules}))


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
    unit = load_unit(config["assignment"])
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


def _given(unit) -> similarity.Given:
    key = str(unit.path)
    if key not in _GIVEN:
        _GIVEN[key] = similarity.boilerplate(unit, submissions.PACKAGE_ROOT)
    return _GIVEN[key]


def grade_task(unit, options, task: dict, artefacts, image, spare: bool) -> dict:
    sub, out = Path(task["submission"]), Path(task["out"])
    if task.get("topics"):          # a plan's entry: topics, and tests of other topics
        options = replace(options, topics=tuple(t for t in task["topics"] if "::" not in t) or None,
                          tests=tuple(t for t in task["topics"] if "::" in t) or None)
    if task.get("shown_as"):
        options = replace(options, shown_folder=task["shown_as"])
    command = f"python -m autograder grade {sub} --out {out} --assignment {unit.name} --suite {options.suite}"
    command += "".join(f" --topic {t}" for t in options.topics or ())
    command += "".join(f" --test {t}" for t in options.tests or ())
    command += f" --seed {options.seed}" if options.seed is not None else ""
    try:
        result, _ = grade_and_report(unit, sub, out, options, command, time.perf_counter(),
                                     artefacts=artefacts, image=image, spare=spare)
    except GraderError as exc:  # UnitError and RubricError are GraderErrors too
        return {"status": "grader_error", "detail": str(exc)}
    except Exception:  # noqa: BLE001 - the grader's fault; this submission's row says so
        return {"status": "grader_error", "detail": traceback.format_exc()[-300:]}
    # Fingerprinted here, in parallel across jobs, rather than one by one by the coordinator
    # (which does it for the submissions no job fingerprinted in this run).
    with contextlib.suppress(OSError, ValueError):
        similarity.write_fingerprints(out, sub, unit.modules, _given(unit))
    return {"status": "graded", "earned": result.earned, "possible": result.possible, "seed": result.seed,
            "topics": {t.id: {"earned": t.earned, "status": t.status} for t in result.topics}}


if __name__ == "__main__":
    job_main(json.loads(sys.argv[1]))
