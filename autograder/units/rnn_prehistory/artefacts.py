"""This unit's extra report artefacts: reports/evidence.yaml and reports/fault_injection.png.

The engine creates `Artefacts(unit, topics, suite)` before grading and calls
`write(out_dir, result, submission, command)` after it. When the run reached the
fault-injection lab, its hidden suite left a `LabRecord` (lab/record.py) in the run's
`report_extras`; from it:

    write_evidence(out_dir, record, signals, submission, command, grading_seed, tampered) -> Path
    write_fault_plot(out_dir, record) -> Path | None

`signals` maps the seven metric keys to whether the grading confirmed them. The figure
(one panel per signal) is drawn by fault_figure.py.

The evidence file is seed 000's `learn-llm.evidence.v1` learner template (TEMPLATE below,
copied verbatim from the "Evidence" section of that page) with every placeholder replaced
by this run's values: the commit of the submission, the date, a sanitised environment
string (versions and platform only: no paths, no host name), the seed of the student's
run_fault_injection, the commands, each metric's expected and actual value, the
artifacts, and the signals that did not hold. A run without the hidden suite (the public
tests) checks no signal: its known failures are the values the student's own run got wrong,
and a note that the signals were not verified. A pull request's evidence also
lists the protected files the submission changed (`tampered`, an addition to the template).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import yaml

from autograder.i18n import N_, _
from autograder.reports.files import atomic_write
from autograder.unit.rubric import SafeLoader
from autograder.units.rnn_prehistory.fault_figure import render_fault_plot
from autograder.units.rnn_prehistory.lab import record as lab_record
from autograder.units.rnn_prehistory.lab.record import LabRecord
from autograder.units.rnn_prehistory.sequence_figure import evidence_notes, render_sequence_plot

TOPIC = "fault_injection"
EVIDENCE_FILE = "evidence.yaml"
PLOT_FILE = "fault_injection.png"
SEQUENCE_PLOT_FILE = "sequence_models.png"     # causality and the inference bill (sequence_figure.py)

# Seed 000, "Evidence": the learner's submission template (placeholders are <...>).
TEMPLATE = """\
schema: learn-llm.evidence.v1
module: sequence-models-prehistory
commit: <learner-commit-sha>
verified_at: <iso-date>
environment: <sanitized-python-device>
seed: 42
commands:
  - python <your-rnn-prehistory-script>.py   # 本页三级实验 + 两处故障注入
metrics:
  - name: near_one_product_stays_bounded
    expected: true
    actual: <recorded-value>
  - name: rho_below_one_gradient_decays
    expected: true
    actual: <recorded-value>
  - name: rho_above_one_gradient_explodes
    expected: true
    actual: <recorded-value>
  - name: rho_one_tanh_saturation_still_decays
    expected: true
    actual: <recorded-value>
  - name: clipping_caps_norm_keeps_training_alive
    expected: true
    actual: <recorded-value>
  - name: clipping_does_not_rescue_vanishing
    expected: true
    actual: <recorded-value>
  - name: bptt_matches_finite_difference
    expected: relative-error-under-1e-6
    actual: <recorded-value>
artifacts:
  - <your-rnn-prehistory-script>.py
cost:
  gross_usd: 0
  credit_usd: 0
licenses:
  - source: Stanford CS230 VIP cheatsheet (Amidi & Amidi, 2018)
    license: link-only-attribution
  - source: Ernest K. Ryu, RL of LLMs (Spring 2025), Chapter 2
    license: link-only-attribution
known_failures:
  - none
"""


def template() -> dict:
    return yaml.load(TEMPLATE, Loader=SafeLoader)


NOT_A_CHECKOUT = "not-a-git-checkout"
UNCOMMITTED = " with uncommitted changes"
MAX_MODULE_BYTES = 16 << 20


def _git(submission: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(submission), *args], capture_output=True, text=True, timeout=10,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"})
    except (OSError, subprocess.SubprocessError):
        return None


def _own_git_dir(submission: Path) -> Path | None:
    """The .git folder of the checkout holding `submission`, or None. A `.git` file (a worktree's
    or submodule's `gitdir:` link) or a .git folder that shares another's refs (`commondir`) is
    not read: it can point at any repository on the machine, the instructor's included."""
    for folder in (Path(submission).resolve(), *Path(submission).resolve().parents):
        entry = folder / ".git"
        if entry.is_symlink() or entry.is_file():
            return None
        if entry.is_dir():
            return None if (entry / "commondir").exists() else entry
    return None


def submission_commit(submission: Path) -> str:
    """HEAD of the git checkout holding the submission ("<sha> with uncommitted changes" when a
    graded module file differs from HEAD's or is not in it), else "not-a-git-checkout"."""
    git_dir = _own_git_dir(submission)
    if git_dir is None:
        return NOT_A_CHECKOUT
    proc = _git(submission, "--git-dir", str(git_dir), "--work-tree", str(git_dir.parent), "rev-parse", "HEAD")
    sha = proc.stdout.strip() if proc else ""
    if not (proc and proc.returncode == 0 and len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha)):
        return NOT_A_CHECKOUT
    committed = _committed_blobs(submission, git_dir)
    now = _module_blobs(submission, "sha256" if len(sha) == 64 else "sha1")
    return sha if committed == now else sha + UNCOMMITTED


def _committed_blobs(submission: Path, git_dir: Path) -> dict[str, str] | None:
    """{name: blob id} of the folder's *.py in HEAD. Read from the object store, never through
    `git status`: a submitted folder may carry its own .git, whose configuration (fsmonitor,
    filters) git runs as commands on the work tree."""
    proc = _git(submission, "--git-dir", str(git_dir), "--work-tree", str(git_dir.parent), "ls-tree", "-z", "HEAD",
                "--", ".")
    if proc is None or proc.returncode != 0:
        return None
    entries = (line.split("\t", 1) for line in proc.stdout.split("\0") if "\t" in line)
    return {name: meta.split()[2] for meta, name in entries
            if name.endswith(".py") and "/" not in name and meta.split()[1] == "blob"}


def _module_blobs(submission: Path, algorithm: str) -> dict[str, str]:
    """{name: blob id} of the folder's *.py as they are now (git's blob hash of their bytes)."""
    blobs = {}
    for path in sorted(Path(submission).glob("*.py")):
        if path.is_symlink() or not path.is_file():
            continue
        if path.stat().st_size > MAX_MODULE_BYTES:      # no module is this big: count it as changed, unread
            blobs[path.name] = "too-large"
            continue
        data = path.read_bytes()
        blobs[path.name] = hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()
    return blobs


def sanitised_environment() -> str:
    """e.g. "python-3.11.7 numpy-2.4.6 linux-x86_64 cpu": versions and platform, nothing else."""
    system = platform.system().lower() or "unknown"
    machine = platform.machine().lower() or "unknown"
    return f"python-{platform.python_version()} numpy-{np.__version__} {system}-{machine} cpu"


def sanitise_command(command: str, cwd: Path | None = None) -> str:
    """The command with absolute paths made relative to the working folder (or cut to their
    last component when outside it), so no machine path lands in the evidence."""
    cwd = Path(cwd or os.getcwd())
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out = []
    for word in words:
        if word.startswith(("/", "~")):
            path = Path(os.path.expanduser(word))
            try:
                word = os.path.relpath(path, cwd) if path.is_relative_to(cwd) else path.name or "."
            except ValueError:
                word = path.name or "."
        out.append(word)
    return shlex.join(out)


def _number(value):
    """A YAML-friendly metric value: bools stay bools, floats stay floats (non-finite as text)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, str):
        try:
            v = float(value)       # "inf"/"nan" stored as text by the suite
            return value if not math.isfinite(v) else v
        except ValueError:
            return value
    return str(value)


def metric_actual(lab: LabRecord, key: str):
    """What the student's run_fault_injection measured for one metric (the returned bool;
    the relative error itself for bptt_matches_finite_difference)."""
    returned = lab.returned
    if not isinstance(returned, dict):
        reason = lab.returned_error or "run_fault_injection did not return a dict"
        return f"not-measured: {str(reason).splitlines()[0][:160]}"
    field = "bptt_rel_error" if key == "bptt_matches_finite_difference" else key
    if field not in returned:
        return f"not-measured: run_fault_injection returned no {field}"
    return _number(returned[field])


def evidence_commands(command: str, submission: Path, lab_seed: int, grading_seed: int | None = None,
                      cwd: Path | None = None) -> list[str]:
    """The template's `commands`, each runnable as written from the folder the grader ran in:
    the grading itself (with its seed, so it replays to the same score) and the lab alone."""
    python = replay_python(cwd)
    words = shlex.split(sanitise_command(command, cwd))
    if words[:1] == ["python"]:
        words[0] = python
    if grading_seed is not None and "--seed" not in words:
        words += ["--seed", str(int(grading_seed))]
    folder = shlex.split(sanitise_command(shlex.quote(str(submission)), cwd))[0]
    lab = (f"import sys; sys.path.insert(0, {json.dumps(folder)}); import fault_injection; "
           f"print(fault_injection.run_fault_injection({int(lab_seed)}))")
    return [shlex.join(words), shlex.join([python, "-c", lab])]


def replay_python(cwd: Path | None = None) -> str:
    """The interpreter a replay command names: the one grading, relative to the working folder
    when it is in it (the student repository's .venv/bin/python: the command then runs as
    written from there, the venv activated or not); else "python" (an interpreter elsewhere
    is a machine path, and whoever replays has their own)."""
    cwd = Path(cwd or os.getcwd())
    executable = Path(sys.executable)          # not resolved: a venv's python is a link to the base one
    try:
        if executable.is_absolute() and executable.is_relative_to(cwd) and executable.is_file():
            return os.path.relpath(executable, cwd)
    except (ValueError, OSError):
        pass
    return "python"


def meets_expectation(expected, actual) -> bool:
    """Whether a metric's value is what the template expects, by the student's own run."""
    if expected == "relative-error-under-1e-6":
        return isinstance(actual, float) and 0 <= actual < 1e-6
    return actual is expected


UNVERIFIED = "not-verified: this run had no hidden tests; the instructor's grading checks each signal"


def known_failures(metrics: list[dict], signals: dict) -> list[str]:
    """The metrics the grading did not confirm; in a run that checked none (public tests
    only), the ones the student's own values already miss, and a note that the rest are unverified."""
    if signals:
        return [m["name"] for m in metrics if not signals.get(m["name"], False)] or ["none"]
    return [m["name"] for m in metrics if not meets_expectation(m["expected"], m["actual"])] + [UNVERIFIED]


def build_evidence(lab: LabRecord, signals: dict, submission: Path, command: str,
                   today: _dt.date | None = None, grading_seed: int | None = None,
                   tampered: list[str] | None = None) -> dict:
    doc = template()
    seed = lab.seed
    doc["commit"] = submission_commit(Path(submission))
    doc["verified_at"] = (today or _dt.date.today()).isoformat()
    doc["environment"] = sanitised_environment()
    doc["seed"] = int(seed) if isinstance(seed, (int, np.integer)) else doc["seed"]
    doc["commands"] = evidence_commands(command, Path(submission), doc["seed"], grading_seed)
    for metric in doc["metrics"]:
        metric["actual"] = metric_actual(lab, metric["name"])
    doc["artifacts"] = ["fault_injection.py", f"reports/{PLOT_FILE}", "reports/score.json", f"reports/{EVIDENCE_FILE}"]
    doc["known_failures"] = known_failures(doc["metrics"], signals or {})
    if tampered is not None:
        doc["tampered"] = list(tampered)
    return doc


def write_evidence(out_dir: Path, lab: LabRecord, signals: dict, submission: Path, command: str,
                   grading_seed: int | None = None, tampered: list[str] | None = None,
                   notes: Sequence[str] = ()) -> Path:
    """Write <out_dir>/evidence.yaml (learn-llm.evidence.v1, filled) and return its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = build_evidence(lab, signals, Path(submission), command, grading_seed=grading_seed, tampered=tampered)
    text = ("# learn-llm.evidence.v1, filled in by the autograder from this grading run\n"
            "# (the course notes' evidence template; actual = what your run_fault_injection measured).\n")
    text += yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    if notes:      # the template has no field for them: comments keep the document the template's
        text += "# Also measured in this grading (oral-exam questions 7 and 10):\n"
        text += "".join(f"#   {line}\n" for line in notes)
    path = out_dir / EVIDENCE_FILE
    atomic_write(path, text)
    return path


# ----------------------------------------------------------------------------- figure
def write_fault_plot(out_dir: Path, lab: LabRecord) -> Path | None:
    """Write <out_dir>/fault_injection.png (see fault_figure.py); None when there is nothing to draw."""
    png = render_fault_plot(lab)
    if png is None:
        return None
    path = Path(out_dir) / PLOT_FILE
    atomic_write(path, png)
    return path


def absent_lab_files(result) -> str | None:
    """Why evidence.yaml and fault_injection.png are not in this grading's reports (the
    student's README promises both), or None when the lab's topic was not graded."""
    topic = next((t for t in result.topics if t.id == TOPIC), None)
    if topic is None:
        return None
    if topic.status == "not_implemented":
        why = _("run_fault_injection in fault_injection.py is not implemented yet")
    else:
        # a public test's message: every level of --hidden-detail shows those
        failed = next((x for x in topic.tests if not x.passed and x.message and not x.id.hidden), None)
        reason = topic.message or (failed.message if failed is not None else "")
        why = _("run_fault_injection did not return its dict in this grading ({reason})").format(
            reason=lab_record.whole_sentences(reason, 300) or topic.status)
    return _("{evidence} and {figure} were not written: they record what run_fault_injection returns, and "
             "{why}. They appear once it returns its dict.").format(evidence=EVIDENCE_FILE, figure=PLOT_FILE,
                                                                    why=why)


class Artefacts:
    """The engine's hook. The lab's topic is graded first; when it is over (`topic_done`),
    the figure is drawn in a thread while the other topics are graded (the grader mostly
    waits for the worker then), and `write` collects it after grading."""

    FILES = (EVIDENCE_FILE, PLOT_FILE, SEQUENCE_PLOT_FILE)
    FIRST_TOPICS = (TOPIC,)

    def __init__(self, unit, topics: list[str], suite: str):
        self._drawing: tuple[LabRecord, Future] | None = None     # the record drawn, and its PNG to come
        self._pool: ThreadPoolExecutor | None = None

    def topic_done(self, topic: str, report_extras: dict) -> None:
        if topic == TOPIC and lab_record.EXTRAS_KEY in report_extras:
            self._pool = self._pool or ThreadPoolExecutor(1, thread_name_prefix="autograder-figure")
            lab = lab_record.of(report_extras)
            self._drawing = (lab, self._pool.submit(render_fault_plot, lab))

    def write(self, out_dir: Path, result, submission: Path, command: str) -> list[tuple[Path | None, str | None]]:
        """(path, caption for score.md or None) of every file written, and (None, why) for a
        promised file not written."""
        written: list[tuple[Path | None, str | None]] = []
        try:
            png = render_sequence_plot(result.report_extras)
            if png is not None:
                atomic_write(Path(out_dir) / SEQUENCE_PLOT_FILE, png)
                written.append((Path(out_dir) / SEQUENCE_PLOT_FILE,
                                N_("who reads whom (dependency matrices) and the bytes each decoder holds as T grows")))
        except Exception as exc:  # noqa: BLE001 - a missing figure must not cost the score report
            print(f"autograder: warning: no {SEQUENCE_PLOT_FILE}: {exc}", file=sys.stderr)
        drawing, self._drawing = self._drawing, None
        if lab_record.EXTRAS_KEY not in result.report_extras:
            why = absent_lab_files(result)
            return written + ([(None, why)] if why else [])
        lab = lab_record.of(result.report_extras)
        written.insert(0, (write_evidence(out_dir, lab, result.signals, submission, command, result.seed,
                                          result.tampered, evidence_notes(result.report_extras)), None))
        png = None
        try:
            # a batch job's previous grading may have stopped before its `write`: its drawing is not this one
            png = drawing[1].result() if drawing is not None and drawing[0] is lab else render_fault_plot(lab)
            figure = None
            if png is not None:
                figure = Path(out_dir) / PLOT_FILE
                atomic_write(figure, png)
        except Exception as exc:  # noqa: BLE001 - a missing figure must not cost the score report
            print(f"autograder: warning: no figure: {exc}", file=sys.stderr)
            figure = None
            written.append((None, _("{file} was not drawn: drawing it failed ({error}).").format(
                file=PLOT_FILE, error=lab_record.whole_sentences(exc, 200))))
        if figure:
            written.append((figure, "the seven signals of the fault-injection lab, one panel each"))
        elif png is None and not any(path is None for path, _why in written):
            written.append((None, _("{file} was not drawn: this grading has no curve of the lab and no dict from "
                                    "run_fault_injection to draw.").format(file=PLOT_FILE)))
        return written

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
