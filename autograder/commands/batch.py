"""`python -m autograder batch ROOT`: grade a class, one entry of ROOT per student.

ROOT holds submissions as instructors receive them (autograder/intake/submissions.py: folders, one
nested level, wrapper folders, repository clones, archives); what is not a submission gets
a row that says why. Each student's reports go to OUT/students/<name>/, apart from the
class files (class.csv, class.md, ...) whatever the student is called. A rerun skips a
submission whose report was written by the same grader version with the same seed (unless
--force), so an interrupted class resumes where it stopped.

The coordinator (this process, `run`) hands submissions one at a time to `--jobs` job
processes (`autograder.commands.batch_pool`: the pool and its line protocol), turns each
answer into a class.csv row (`grade_in_job`: a submission over `--timeout` is recorded as
`timeout`, one whose job died as `grader_error`) and writes class.csv.
"""

from __future__ import annotations

import json
import queue
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder import i18n
from autograder.commands.batch_pool import WALL_FACTOR, Job, JobDied, JobTimedOut, given, job_configs
from autograder.errors import GraderError
from autograder.grading.score import TopicStatus
from autograder.grading.seed import submission_seed
from autograder.intake import submissions
from autograder.intake.manifest import read_manifest, tampered_files
from autograder.intake.submissions import EntryStatus
from autograder.pipeline import EXIT_GRADER, EXIT_INTERRUPTED, EXIT_OK
from autograder.reports import class_report, similarity
from autograder.reports.class_csv import write_class_csv
from autograder.reports.class_report import student_folder
from autograder.reports.submission_status import FAILED, SubmissionStatus
from autograder.reports.text import csv_cell, one_line
from autograder.unit.load import load_unit
from autograder.version import grader_version


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
            failed = row["status"] in FAILED
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
    unit = load_unit(args.unit)
    plan = read_plan(args.plan, unit) if args.plan else {}
    version = grader_version(unit.path)
    scratch = Path(tempfile.mkdtemp(prefix="autograder-intake-"))
    rows: dict[int, dict] = {}
    mine: list = []
    manifest = read_manifest(args.manifest) if getattr(args, "manifest", None) else None
    interrupted = False
    try:
        mine = submissions.find(args.root, {t.module for t in unit.topics}, scratch)[k - 1::n]
        config = {"unit": str(unit.path), "suite": args.suite, "topics": args.topics or None,
                  "seed": args.seed, "lang": args.lang, "planned": bool(plan)}
        progress = Progress(len(mine))
        tasks: queue.Queue = queue.Queue()
        for i, entry in enumerate(mine):
            if entry.status != EntryStatus.OK:
                rows[i] = dict(_blank_row(entry.name), status=SubmissionStatus(entry.status), detail=entry.detail)
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
            if entry.status == EntryStatus.OK and i in rows and entry.folder is not None and not _newer(prints, started):
                similarity.write_fingerprints(prints.parent, entry.folder, unit.modules, given(unit))
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
                    if i in rows and entry.status == EntryStatus.OK:
                        rows[i]["tampered"] = tamper_flags(entry, manifest, unit.stubs, unit.modules)
            done = [rows[i] for i in sorted(rows)]
            name = write_class_csv(args.out, unit, done, k, n, version)
            shutil.rmtree(scratch, ignore_errors=True)
    if n == 1:                      # a shard's report would be a third of the class: `merge` writes it
        similar = similarity.write(args.out, args.out / class_report.STUDENTS, [r["submission"] for r in done])
        class_report.write(args.out, unit, done, version, similar, args.lang)
    print(f"{len(done)} submission(s) -> {args.out / name}")
    return EXIT_GRADER if any(r["status"] == SubmissionStatus.GRADER_ERROR for r in done) else EXIT_OK


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
    return {"submission": name, "folder": folder, "earned": "", "possible": "", "status": SubmissionStatus.GRADER_ERROR,
            "seed": "",
            "detail": ""}


def _row_from(entry, summary: dict) -> dict:
    """A class.csv row from a grading's summary (topic -> earned and status)."""
    topics = summary["topics"]
    statuses = {t["status"] for t in topics.values()}
    status = SubmissionStatus.NOT_IMPLEMENTED if statuses == {TopicStatus.NOT_IMPLEMENTED} else SubmissionStatus.GRADED
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
    topics = {t.id for t in unit.topics}

    def known(selector) -> bool:
        return isinstance(selector, str) and (selector in topics or unit.rubric.find_test(selector) is not None)

    if not isinstance(plan, dict) or not all(isinstance(v, list) and v and all(map(known, v)) for v in plan.values()):
        raise GraderError(f"the plan {path} must map submission folder names to non-empty lists of topic ids "
                          f"(the unit has {sorted(t.id for t in unit.topics)}) or rubric tests "
                          "(topic::public::test_name, topic::hidden::test_name)")
    return plan


def grade_in_job(job: Job, entry, out: Path, timeout: float, topics: list[str] | None = None) -> tuple[dict, bool]:
    """(class.csv row, whether the job can take another submission)."""
    row = _blank_row(entry.name, entry.shown_as)
    try:
        reply = job.grade({"submission": str(entry.folder), "out": str(out), "topics": topics,
                           "shown_as": entry.shown_as}, timeout)
    except JobTimedOut as timed_out:
        limit = f"{timeout:g} s of CPU time" if str(timed_out) == "cpu" else f"{WALL_FACTOR * timeout:g} s"
        return dict(row, status=SubmissionStatus.OVER_TIME_LIMIT, detail=f"grading took longer than {limit}"), False
    except JobDied as died:
        return dict(row, detail=f"the grading process stopped: {died}"), False
    if reply.get("status") != SubmissionStatus.GRADED:
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
