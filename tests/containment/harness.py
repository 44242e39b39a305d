"""The containment harness: hostile submissions graded for real, in the two ways the grader is started.

- "root": the grader runs as the current user, root (CI runs the tests as root), over
  this checkout with the dev venv; these cases are part of `make sweep`;
- "unprivileged": the grader runs as `nobody` (via runuser) over a copy of the checkout
  owned by nobody, with a venv nobody can execute; when the tests do not run as root, it
  runs as the current user over that copy.

A case (the `case` fixture of conftest.py) builds a submission from the reference with a
payload added (payloads/<name>.py, through `payload`), grades one or two topics besides the
attacked one, and checks, besides what the case is about, what must hold after any grading
(`Case.grade` and the `case` fixture):

- the grader exits 0 in a sane time, and every report parses and is inert (no raw HTML,
  no headings or table rows the grader did not write, no control characters);
- no report (nor the grader's terminal output) holds the grader's secret (GRADER_SECRET
  in its environment), a code line of a hidden suite or of the reference's solutions;
- the checkout (and its copy), the venvs and the dev venv's site-packages are unchanged;
- no process of the run is left (worker, jailed uid >= 2000000000, anything naming the
  case's folder).

A failing case is a containment hole: fix the engine, never the test.

A payload (payloads/<name>.py) is the code a case appends to one of the student's modules,
kept as a file that ruff checks like any other. It reads, in order: a docstring (what it
does, which module it goes into); what it takes from elsewhere, which is not appended: names
of that module (`from bptt import numerical_gradient`), shared pieces (`from
payloads.worker_pipe import _write_frame`, whose code `payload` puts first) and `_PARAMS:
dict = {}` when the test passes values at run time; the marker line APPENDED (after
`# isort: split` when imports follow, so that ruff's import sorting keeps the two apart);
then the code. `payload(name, **params)` returns the text to append, `_PARAMS = params` first.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import html
import importlib.util
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from helpers import REPO, SOLUTIONS, STUBS, UNIT, make_submission

AS_ROOT = os.geteuid() == 0
UID_BASE = 2_000_000_000                  # jailed uids (autograder.isolation.jail.UID_BASE)
SEED = ("--seed", "1")
SANE_S = 60                               # a grading run of two or three topics takes seconds
UNIT_REL = Path("autograder") / "units" / "rnn_prehistory"
PUBLIC_REL = Path("assignments") / "rnn_prehistory" / "tests"
SOLUTIONS_REL = Path("solutions") / "rnn_prehistory"

# Tests of bptt that call these functions (the only tests a hostile version can cost).
CALLS_REL_ERROR = {"public::test_rel_error_formula", "hidden::test_rel_error_matches_formula"}
CALLS_NUMERICAL_GRADIENT = {"public::test_numerical_gradient_of_a_cubic",
                            "hidden::test_numerical_gradient_matches_analytic"}


# ------------------------------------------------------------------ what must never leak
def _distinctive_hidden_line() -> str:
    """A long code line of the bptt hidden suite: no string literal (failure messages do
    reach reports), not an import, and not in the public tests."""
    public = (STUBS / "tests" / "test_bptt.py").read_text()
    lines = [s.strip() for s in UNIT.test_file("bptt", "hidden").read_text().splitlines()]
    lines = [s for s in lines if s and not s.startswith(("#", "from ", "import ")) and not s.endswith((",", "("))
             and '"' not in s and "'" not in s and s not in public]
    return max(lines, key=len)


def _distinctive_solution_lines() -> list[str]:
    """Per module, the longest code line of its solution blocks that the stub does not have."""
    found = []
    for module in sorted(SOLUTIONS.glob("*.py")):
        stub = (STUBS / module.name).read_text()
        blocks = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", module.read_text(), re.S)
        code = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
        code = [c for c in code if len(c) > 30 and '"' not in c and "'" not in c and c not in stub]
        if code:
            found.append(max(code, key=len))
    return found


HIDDEN_LINE = _distinctive_hidden_line()
SOLUTION_LINES = _distinctive_solution_lines()
NEVER_IN_REPORTS = [HIDDEN_LINE, *SOLUTION_LINES]


def flat(text: str) -> str:
    """Report text with the escaping of every format undone (HTML/XML entities, Markdown and
    JSON backslashes) and whitespace collapsed, so an escaped leak is still found."""
    return " ".join(html.unescape(text).replace("\\", "").split())


# -------------------------------------------------------------------- running the grader
@dataclass
class Run:
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    maxrss_kb: int          # peak resident memory of the run's biggest process (wait4)
    killed: bool            # we had to kill it: it outlived its time limit
    cpu_s: float = 0.0      # CPU time of the whole process tree (the launcher reaps every descendant)

    def within(self, seconds: float) -> bool:
        """Whether the run was sane in time: at most `seconds` of CPU for the whole tree (what
        the machine's load cannot change) and three times that of wall clock (the load can
        slow a run down, but not without end). grade and batch kill a run only past that bound
        (plus 30 s), not at `seconds + 30` of wall clock, which a loaded machine reaches first."""
        return not self.killed and self.cpu_s < seconds and self.elapsed < 3 * seconds


# wait4's peak memory of a process counts the pages it started with, and a forked child starts
# with its parent's: a child of this test process (hundreds of MB once torch or in-process
# gradings have run in it) would report the test process's size. So a small launcher forks
# the command, and writes its exit status and peak where the harness reads them.
# The launcher is also the tree's subreaper: a descendant whose parent ends before it (a worker
# the worker image killed) is reaped by it, so the CPU time of every process of the run counts.
LAUNCHER = """
import ctypes, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)            # PR_SET_CHILD_SUBREAPER
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
until = time.monotonic() + 2                        # orphans ending now (a killed worker)
while time.monotonic() < until:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.01)
    except ChildProcessError:
        break
tree = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as result:
    result.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss} {tree.ru_utime + tree.ru_stime}")
"""


def run_measured(cmd, cwd, env, timeout: float, logs: Path) -> Run:
    """Run `cmd` in its own session; wait4 gives the peak memory of it and every process it
    waited for (the grader, and through it its workers)."""
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / str(time.monotonic_ns())
    out_path, err_path, result_path = stem.with_suffix(".out"), stem.with_suffix(".err"), stem.with_suffix(".rc")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-I", "-c", LAUNCHER, str(result_path), *map(str, cmd)], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout:
                killed = True
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        elapsed = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)      # reaped here, not by Popen
    returncode, maxrss_kb = proc.returncode, usage.ru_maxrss   # the launcher's, where it was killed
    cpu_s = usage.ru_utime + usage.ru_stime
    if result_path.is_file():
        code, peak, tree = result_path.read_text().split()
        returncode, maxrss_kb, cpu_s = int(code), int(peak), float(tree)
    return Run(cmd, returncode, out_path.read_bytes().decode("utf-8", "replace"),
               err_path.read_bytes().decode("utf-8", "replace"), elapsed, maxrss_kb, killed, cpu_s)


@dataclass
class Grader:
    """How one mode starts `python -m autograder` (or any python): as whom, with which python, over which
    checkout."""

    mode: str
    python: str
    checkout: Path
    prefix: list            # e.g. runuser -u nobody --
    owner: tuple | None     # (uid, gid) that must own what the grader reads or writes; None: as we are
    env: CopiedEnv

    def own(self, path: Path) -> None:
        if self.owner is None:
            return
        for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
            os.lchown(p, *self.owner)

    def command(self, python_args: list, extra_env: dict) -> tuple[list, dict]:
        """`python <python_args>` as this mode starts it: the command and its environment."""
        if self.mode == "root":
            return [self.python, *python_args], {**os.environ, **extra_env}
        # A clean environment: what a grader started by a teaching assistant would have.
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra_env}
        return [*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()), self.python, *python_args], None

    def run_python(self, python_args, extra_env: dict, timeout: float, logs: Path) -> Run:
        cmd, env = self.command([str(a) for a in python_args], extra_env)
        return run_measured(cmd, self.checkout, env, timeout, logs)

    def run(self, args, extra_env: dict, timeout: float, logs: Path) -> Run:
        """`python -m autograder <args>`."""
        return self.run_python(["-m", "autograder", *args], extra_env, timeout, logs)

    # Paths a hostile submission may aim at: the real checkout and the copy.
    def everywhere(self, rel: Path) -> list[str]:
        return [str(REPO / rel), str(self.env.checkout / rel)]


# ------------------------------------------------------- the unprivileged environment
@dataclass
class CopiedEnv:
    base: Path
    checkout: Path          # the copy of the repository
    venv: Path
    python: str             # the venv's python
    site_packages: Path     # the venv's (holds only our two .pth files)


# ----------------------------------------------------------- snapshots: files, processes
def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_state(root: Path, skip_pycache: bool = False, content: bool = True) -> dict:
    """Every entry under `root` (links not followed): kind, mode and content hash (or size
    and mtime with content=False)."""
    state = {}
    for folder, dirs, files in os.walk(root):
        if skip_pycache:
            dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in dirs + files:
            path = Path(folder) / name
            st = os.lstat(path)
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                state[rel] = ("file", stat.S_IMODE(st.st_mode), _sha(path) if content else (st.st_size, st.st_mtime_ns))
            else:
                state[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return state


def _site_of(package: str) -> Path:
    return Path(importlib.util.find_spec(package).origin).resolve().parents[1]


# Packages the grader and the worker load (a full walk of the dev venv's 20k files costs 0.5 s).
DEV_PACKAGES = ("numpy", "pytest", "_pytest", "pluggy", "yaml", "matplotlib")
DEV_SITE = _site_of("numpy")            # the dev venv's site-packages
DEPENDENCY_SITES = sorted({_site_of(p) for p in DEV_PACKAGES})


def files_state(env: CopiedEnv) -> dict:
    """Everything a submission might try to change."""
    state = {"copy": tree_state(env.checkout), "grader venv": tree_state(env.venv)}
    for rel in ("autograder", "assignments", "solutions"):       # this checkout; bytecode is the grader's own
        state[f"checkout {rel}"] = tree_state(REPO / rel, skip_pycache=True)
    top = {}
    for entry in os.scandir(DEV_SITE):
        st = entry.stat(follow_symlinks=False)
        top[entry.name] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    state["dev site-packages"] = top
    for name in DEV_PACKAGES[:-1]:
        state[f"{name} package"] = tree_state(_site_of(name) / name, skip_pycache=True, content=False)
    state["dev venv bin"] = tree_state(Path(sys.prefix) / "bin", content=False)
    return state


def state_changes(before: dict, after: dict) -> list[str]:
    changes = []
    for area in before:
        b, a = before[area], after[area]
        changes += [f"{area}: {rel} {'added' if rel not in b else 'removed' if rel not in a else 'changed'}"
                    for rel in sorted(set(b) | set(a)) if b.get(rel) != a.get(rel)]
    return changes


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    uid: int
    start: str
    cmdline: str


def processes() -> dict[int, Proc]:
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            status = Path(f"/proc/{entry.name}/status").read_text()
            start = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            continue
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        ppid = int(re.search(r"^PPid:\s+(\d+)", status, re.M).group(1))
        found[int(entry.name)] = Proc(int(entry.name), ppid, uid, start, cmdline)
    return found


def leftover_processes(before: set, case_dir: str) -> list[Proc]:
    """Processes started since `before` that belong to this case: a worker, a jailed uid,
    or anything naming the case's folder (the grader's TMPDIR, so every worker's --root is
    in it). Another grader's processes (someone else's run on this machine) are not ours."""
    procs = processes()
    left = []
    for p in procs.values():
        if (p.pid, p.start) in before or p.pid == os.getpid():
            continue
        lineage, q = [], p
        while q is not None and q.pid > 1 and len(lineage) < 64:
            lineage.append(q)
            q = procs.get(q.ppid)
        ours = any(case_dir in a.cmdline for a in lineage)
        foreign = any("autograder" in a.cmdline and case_dir not in a.cmdline for a in lineage)
        suspicious = "autograder.isolation.worker" in p.cmdline or p.uid >= UID_BASE or case_dir in p.cmdline
        if suspicious and (ours or not foreign):
            left.append(p)
    return left


# ------------------------------------------------------------------------- report checks
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")           # all but tab and newline
TEXT_REPORTS = (".md", ".json", ".xml", ".csv", ".yaml", ".txt")


def _json_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _json_strings(k)
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def check_markdown(text: str) -> None:
    """score.md renders as Markdown: no HTML, and no heading or table row of the student's."""
    # A tag, a closing tag, a comment or an autolink (`y_<t)` in a hint is no tag).
    tags = re.findall(r"<(?:[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|/[A-Za-z]|!|[A-Za-z][A-Za-z0-9+.-]*:).{0,40}", text)
    assert not tags, f"raw HTML in score.md: {tags}"
    assert not re.search(r"(?i)<(img|script)", text), "raw HTML in score.md"
    topics = "|".join(re.escape(t.id) for t in UNIT.topics)
    own_headings = re.compile(rf"(## Autograder: |### `({topics})` \(|### {re.escape(UNIT.signals_title)}$"
                              rf"|### {re.escape(UNIT.oral_exam.title)}$)")
    for line in text.splitlines():
        if re.match(r" {0,3}#", line):
            assert own_headings.match(line), f"score.md has a heading the grader did not write: {line!r}"
        if re.match(r" {0,3}\|", line):
            # The grader's tables: topics, signals, oral-exam questions (numbered rows of the unit's own text).
            assert re.match(rf"\| (topic|signal|#|\d+|`({topics})`|`[a-z_0-9]+`) \||\|---", line), \
                f"score.md has a table row the grader did not write: {line!r}"
    assert not re.search(r"\]\(\s*https?:", text), "score.md has a link the grader did not write"


def check_reports(out: Path, run: Run, secret: str) -> None:
    """What holds for every report folder, whatever the submission did."""
    leaks = [("the grader's secret", secret)] + [("hidden/solution code", line) for line in NEVER_IN_REPORTS]
    sources = {"stdout": run.stdout, "stderr": run.stderr}
    for path in sorted(out.rglob("*")):
        st = os.lstat(path)
        assert stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode), f"{path} in the reports is not a plain file"
        if stat.S_ISREG(st.st_mode):
            data = path.read_bytes()
            assert secret.encode() not in data, f"the grader's secret is in {path}"
            sources[str(path.relative_to(out))] = data.decode("utf-8", "replace")
    for name, text in sources.items():
        for what, needle in leaks:
            assert flat(needle) not in flat(text), f"{what} in {name}: {needle!r}"
    for name, text in sources.items():
        if name.endswith(TEXT_REPORTS) or name == "stdout":
            if name.endswith(".csv"):
                text = text.replace("\r\n", "\n")         # the csv module ends rows in CRLF
            bad = CONTROL.findall(text)
            assert not bad, f"control characters {sorted(set(bad))!r} in {name}"
    for junit in out.rglob("junit.xml"):
        ET.parse(junit)
    for md in out.rglob("score.md"):
        check_markdown(md.read_text())
    for report in out.rglob("score.json"):           # machine-readable: the raw message, JSON-escaped
        json.loads(report.read_text())
    for report in out.rglob("results.json"):         # Gradescope shows these strings to the student
        doc = json.loads(report.read_text())
        for s in _json_strings(doc):
            assert not CONTROL.search(s), f"control characters in a string of {report}: {s[:200]!r}"
        for s in [doc.get("output", "")] + [t["output"] for t in doc.get("tests", [])]:   # rendered as Markdown
            check_markdown(s)
    for table in (p for p in out.rglob("*.csv") if p.is_file()):      # a student may be called class.csv
        for row in csv.reader(table.read_text().splitlines()):
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), f"{table}: formula cell {cell!r}"


# ----------------------------------------------------------------- scores and submissions
def topic(score: dict, tid: str) -> dict:
    return next(t for t in score["topics"] if t["id"] == tid)


def results_of(score: dict, tid: str) -> dict:
    return {t["id"]: t for t in topic(score, tid)["tests"]}


def points(tid: str, test_ids=None) -> float:
    return sum(t.points for t in UNIT.rubric.topic(tid).tests if test_ids is None or str(t.id) in test_ids)


def expect_full_marks(score: dict, *tids) -> None:
    for tid in tids:
        t = topic(score, tid)
        lost = [(x["id"], x["message"][:300]) for x in t["tests"] if x["outcome"] != "passed"]
        assert t["earned"] == points(tid), f"{tid}, which the attack does not target, lost points: {lost}"


def expect_at_most(score: dict, tid: str, honest: float) -> None:
    assert topic(score, tid)["earned"] <= honest, f"{tid} earned {topic(score, tid)['earned']} > {honest} (forged)"


def junit_times(out: Path, tid: str) -> dict[str, float]:
    suite = next(s for s in ET.parse(out / "junit.xml").getroot() if s.get("name") == tid)
    return {case.get("name"): float(case.get("time")) for case in suite.iter("testcase")}


PAYLOADS = Path(__file__).parent / "payloads"
APPENDED = "# ---- appended to the student's module ----\n"


def payload_code(name: str) -> str:
    """What payloads/<name>.py appends to a module: the code below its marker line, after the
    code of the shared pieces it imports (`from payloads.<piece> import ...`). Above the marker
    the file only declares what it takes from elsewhere (the module it is appended to, the
    pieces, `_PARAMS`), for its reader and for ruff; none of that is appended."""
    declared, marker, code = (PAYLOADS / f"{name}.py").read_text().partition(APPENDED)
    assert marker, f"payloads/{name}.py has no line {APPENDED.strip()!r}"
    pieces = [node.module.removeprefix("payloads.") for node in ast.parse(declared).body
              if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("payloads.")]
    return "".join(payload_code(piece) for piece in pieces) + code


def payload(name: str, /, **params) -> str:
    """payloads/<name>.py as appended to a student's module, `_PARAMS` first: what the test
    tells it at run time (the grader's paths, texts), which a file cannot know in advance."""
    header = f"\n\n# ---- hostile code added by tests/containment/payloads/{name}.py ----\n"
    return f"{header}_PARAMS = {params!r}\n" + payload_code(name)


@dataclass
class GradeRun:
    run: Run
    out: Path
    score: dict = field(default_factory=dict)


class Case:
    """One case's folder (readable and writable by the grader's user), its secret, and the
    grading runs it makes; every run is checked by `check_reports`."""

    def __init__(self, grader: Grader):
        self.grader = grader
        self.dir = Path(tempfile.mkdtemp(prefix="containment-case-"))
        self.dir.chmod(0o755)
        self.tmp = self.dir / "tmp"          # the grader's TMPDIR: its workers' folders, named in their argv
        self.tmp.mkdir()
        self.logs = Path(tempfile.mkdtemp(prefix="containment-logs-"))
        self.secret = "s3cr3t-" + os.urandom(8).hex()
        self.runs = 0
        grader.own(self.dir)

    def submission(self, name: str, base: Path = SOLUTIONS, replace: dict | None = None,
                   append: dict | None = None) -> Path:
        sub = make_submission(self.dir / name, base=base, replace=replace)
        for module, code in (append or {}).items():
            with open(sub / module, "a") as fh:
                fh.write(code)
        self.grader.own(sub)
        return sub

    def out_dir(self) -> Path:
        self.runs += 1
        return self.dir / f"out{self.runs}"

    def run(self, *args, timeout: float, env: dict | None = None) -> Run:
        return self.grader.run(args, {"GRADER_SECRET": self.secret, "TMPDIR": str(self.tmp), **(env or {})},
                               timeout, self.logs)

    def grade(self, sub: Path, *topics: str, extra=(), expect_exit: int = 0, within: float = SANE_S,
              env: dict | None = None, out: Path | None = None) -> GradeRun:
        out = out or self.out_dir()
        run = self.run("grade", sub, "--out", out, *SEED, *(a for t in topics for a in ("--topic", t)), *extra,
                       env=env, timeout=3 * within + 30)
        assert run.within(within), f"grading took {run.elapsed:.1f} s, {run.cpu_s:.1f} s of CPU (limit {within} s)"
        assert run.returncode == expect_exit, f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        graded = GradeRun(run, out)
        if out.exists():
            check_reports(out, run, self.secret)
            if (out / "score.json").exists():
                graded.score = json.loads((out / "score.json").read_text())
        return graded

    def batch(self, root: Path, *args, within: float = SANE_S) -> tuple[Run, Path, dict]:
        out = self.out_dir()
        run = self.run("batch", root, "--out", out, *SEED, *args, timeout=3 * within + 30)
        assert run.within(within), f"batch took {run.elapsed:.1f} s, {run.cpu_s:.1f} s of CPU (limit {within} s)"
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        assert (out / "class.csv").exists(), "batch wrote no class.csv"
        check_reports(out, run, self.secret)
        rows = {r["submission"].lstrip("'"): r for r in csv.DictReader((out / "class.csv").read_text().splitlines())}
        return run, out, rows

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.logs, ignore_errors=True)


def _entry(path: Path):
    """What is at `path`, without following a link: None, ("file", bytes), ("link", target) or (mode, inode)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return ("file", path.read_bytes())
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    return (st.st_mode, st.st_ino)


@contextmanager
def restored(paths):
    """Fail if the block changed any of `paths`, and undo what it can (a new entry is
    removed, a changed file gets its bytes back; what was there before is never removed):
    they belong to whoever runs these tests."""
    saved = {Path(p): _entry(Path(p)) for p in paths}
    try:
        yield
    finally:
        changed = [path for path, before in saved.items() if _entry(path) != before]
        for path in changed:
            try:
                if saved[path] is None:
                    path.unlink()
                elif saved[path][0] == "file" and _entry(path) is not None:
                    path.write_bytes(saved[path][1])
            except OSError:
                pass
        assert not changed, f"the student created or changed files outside its jail: {list(map(str, changed))}"


def hidden_suite_paths(grader: Grader) -> list[str]:
    return grader.everywhere(UNIT_REL / "topics" / "bptt" / "test_hidden.py")
