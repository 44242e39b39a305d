"""Containment: hostile submissions, graded for real, in the two ways the grader is started.

- "root": the grader runs as the current user, root (CI runs the tests as root), over
  this checkout with the dev venv; these cases are part of `make sweep`;
- "unprivileged": the grader runs as `nobody` (via runuser) over a copy of the checkout
  owned by nobody, with a venv nobody can execute; when the tests do not run as root, it
  runs as the current user over that copy.

Every case builds a submission from the reference with hostile code added, grades one or
two topics besides the attacked one, and checks, besides what the case is about, what
must hold after any grading (`Case.grade` and the `case` fixture):

- the grader exits 0 in a sane time, and every report parses and is inert (no raw HTML,
  no headings or table rows the grader did not write, no control characters);
- no report (nor the grader's terminal output) holds the grader's secret (GRADER_SECRET
  in its environment), a code line of a hidden suite or of the reference's solutions;
- the checkout (and its copy), the venvs and the dev venv's site-packages are unchanged;
- no process of the run is left (worker, jailed uid >= 2000000000, anything naming the
  case's folder).

A failing case here is a containment hole: fix the engine, never the test.
"""

from __future__ import annotations

import base64
import csv
import errno
import hashlib
import html
import importlib.util
import json
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import HIDDEN_TESTS, REPO, SOLUTIONS, STUBS, UNIT, make_submission

from autograder.isolation import wire

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
    lines = [s.strip() for s in (HIDDEN_TESTS / "test_bptt.py").read_text().splitlines()]
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


def run_measured(cmd, cwd, env, timeout: float, logs: Path) -> Run:
    """Run `cmd` in its own session; wait4 gives the peak memory of it and every process it
    waited for (the grader, and through it its workers)."""
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / str(time.monotonic_ns())
    out_path, err_path = stem.with_suffix(".out"), stem.with_suffix(".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.monotonic()
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, start_new_session=True)
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
    return Run(cmd, proc.returncode, out_path.read_bytes().decode("utf-8", "replace"),
               err_path.read_bytes().decode("utf-8", "replace"), elapsed, usage.ru_maxrss, killed)


@dataclass
class Grader:
    """How one mode starts `python -m autograder`: as whom, with which python, over which checkout."""

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

    def command(self, args, extra_env: dict) -> tuple[list, dict]:
        if self.mode == "root":
            return [self.python, "-m", "autograder", *args], {**os.environ, **extra_env}
        # A clean environment: what a grader started by a teaching assistant would have.
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra_env}
        return [*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                self.python, "-m", "autograder", *args], None

    def run(self, args, extra_env: dict, timeout: float, logs: Path) -> Run:
        cmd, env = self.command([str(a) for a in args], extra_env)
        return run_measured(cmd, self.checkout, env, timeout, logs)

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


def _unavailable(reason: str):
    """A mode this machine cannot run: skipped on a developer's machine, a failure in CI
    (CI=true, as .ci/run is started), where both modes must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (in CI every mode must run)")
    pytest.skip(reason)


def _nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def _as_grader_user(cmd: list) -> list:
    return ["runuser", "-u", "nobody", "--", *cmd] if AS_ROOT else cmd


def _interpreter_for_grader_user() -> str:
    """An interpreter of this major.minor that the grader's user can execute (nobody cannot
    run the dev venv's, which links into /root)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [str(Path(sys._base_executable).resolve()), f"/usr/bin/python{version}",
                  shutil.which(f"python{version}") or ""]
    for python in filter(None, candidates):
        same_version = f"import sys; assert sys.version_info[:2] == {tuple(sys.version_info[:2])}"
        check = subprocess.run(_as_grader_user([python, "-c", same_version]), capture_output=True)
        if check.returncode == 0:
            return python
    _unavailable(f"no python {version} that the grader's user can execute (tried {candidates})")


@pytest.fixture(scope="session")
def copied_env() -> CopiedEnv:
    """The checkout's files (git ls-files, not .venv or .git) copied to /tmp, and a venv
    whose site-packages lists the dev venv's (dependencies) and the copy (autograder), all
    owned by nobody when we are root. Built once; hashed before and after every case."""
    if AS_ROOT and not shutil.which("runuser"):
        _unavailable("runuser (util-linux) is needed to start the grader as nobody")
    base = Path(tempfile.mkdtemp(prefix="containment-env-"))
    base.chmod(0o755)
    checkout, venv = base / "checkout", base / "venv"
    checkout.mkdir()
    names = subprocess.run(["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
                           capture_output=True, check=True).stdout.split(b"\0")
    names = sorted({n for n in names if n and os.path.lexists(REPO / os.fsdecode(n))})
    pack = subprocess.run(["tar", "-C", str(REPO), "--null", "-T", "-", "-cf", "-"], input=b"\0".join(names),
                          capture_output=True, check=True).stdout
    subprocess.run(["tar", "-C", str(checkout), "-xf", "-"], input=pack, check=True)
    python = _interpreter_for_grader_user()
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", purelib], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "checkout.pth").write_text(f"{checkout}\n")                      # import autograder -> the copy
    (site / "dependencies.pth").write_text("".join(f"{p}\n" for p in DEPENDENCY_SITES))   # numpy, pytest, yaml, ...
    if AS_ROOT:
        subprocess.run(["chown", "-R", "nobody:", str(base)], check=True)
    env = CopiedEnv(base, checkout, venv, str(venv / "bin" / "python"), site)
    imports = "import autograder, numpy, pytest, yaml; print(autograder.__file__)"
    probe = subprocess.run(_as_grader_user([env.python, "-c", imports]), capture_output=True, text=True, cwd=base)
    if probe.returncode != 0:
        _unavailable(f"the grader's user cannot import the dev venv's packages: {probe.stderr[-500:]}")
    assert probe.stdout.strip().startswith(str(checkout)), probe.stdout
    yield env
    shutil.rmtree(base, ignore_errors=True)


# Students and assistants grade unprivileged: that mode is part of `make test`. The cases
# graded as root (CI, Gradescope's container) run in `make sweep`, which CI runs after
# `make test`: both modes on every submission, and a `make test` that fits in two minutes.
@pytest.fixture(scope="session", params=[pytest.param("root", marks=pytest.mark.sweep), "unprivileged"])
def grader(request, copied_env) -> Grader:
    if request.param == "root":
        if not AS_ROOT:
            pytest.skip("mode 'root' grades as root: run the tests as root (.ci/run runs `make sweep` as root)")
        return Grader("root", sys.executable, REPO, [], None, copied_env)
    g = Grader("unprivileged", copied_env.python, copied_env.checkout,
               ["runuser", "-u", "nobody", "--"] if AS_ROOT else [], _nobody() if AS_ROOT else None, copied_env)
    # Warm-up: the reference gets full marks, and Python writes the copy's bytecode now,
    # before the first snapshot (the copy must then stay byte-identical).
    out = copied_env.base / "warm-up"
    run = g.run(["grade", copied_env.checkout / SOLUTIONS_REL, "--out", out, *SEED], {}, 300, copied_env.base / "logs")
    if run.returncode == 2 and "could not" in run.stderr:
        _unavailable(f"this machine cannot isolate a grader without privileges: {run.stderr[-400:]}")
    assert run.returncode == 0, run.stderr
    score = json.loads((out / "score.json").read_text())
    assert score["earned"] == score["possible"] == UNIT.rubric.points, run.stdout
    # And batch's own modules (the class report), over a class of one.
    warm_class = copied_env.base / "warm-up-class"
    shutil.copytree(copied_env.checkout / SOLUTIONS_REL, warm_class / "one")
    run = g.run(["batch", warm_class, "--out", copied_env.base / "warm-up-batch", "--topic", "attention", *SEED], {},
                300, copied_env.base / "logs")
    assert run.returncode == 0, run.stderr
    # The other commands' modules (pr, gradescope, merge): each verb imports only its own.
    compiled = subprocess.run(_as_grader_user([copied_env.python, "-m", "compileall", "-q",
                                               str(copied_env.checkout / "autograder")]), capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout[-2000:] + compiled.stderr[-2000:]
    return g


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
    return sum(t.points for t in UNIT.rubric.topic(tid).tests if test_ids is None or t.id in test_ids)


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


def hostile(code: str, **config) -> str:
    """Code appended to a module; `_CFG` holds what the test tells it (paths, texts)."""
    header = "\n\n# ---- hostile code added by tests/test_containment.py ----\n"
    return f"{header}_CFG = {config!r}\n" + textwrap.dedent(code)


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
                       env=env, timeout=within + 30)
        assert not run.killed and run.elapsed < within, f"grading took {run.elapsed:.1f} s (limit {within} s)"
        assert run.returncode == expect_exit, f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        graded = GradeRun(run, out)
        if out.exists():
            check_reports(out, run, self.secret)
            if (out / "score.json").exists():
                graded.score = json.loads((out / "score.json").read_text())
        return graded

    def batch(self, root: Path, *args, within: float = SANE_S) -> tuple[Run, Path, dict]:
        out = self.out_dir()
        run = self.run("batch", root, "--out", out, *SEED, *args, timeout=within + 30)
        assert not run.killed and run.elapsed < within, f"batch took {run.elapsed:.1f} s (limit {within} s)"
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        assert (out / "class.csv").exists(), "batch wrote no class.csv"
        check_reports(out, run, self.secret)
        rows = {r["submission"].lstrip("'"): r for r in csv.DictReader((out / "class.csv").read_text().splitlines())}
        return run, out, rows

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.logs, ignore_errors=True)


@pytest.fixture
def case(grader):
    """A case folder, and the checks after the case: nothing changed, no process left."""
    files_before = files_state(grader.env)
    procs_before = {(p.pid, p.start) for p in processes().values()}
    c = Case(grader)
    yield c
    deadline = time.monotonic() + 5            # the kernel reaps a killed namespace quickly, not at once
    while (left := leftover_processes(procs_before, str(c.dir))) and time.monotonic() < deadline:
        time.sleep(0.2)
    changes = state_changes(files_before, files_state(grader.env))
    c.remove()
    assert not left, "processes left after grading: " + "; ".join(f"{p.pid} uid={p.uid} {p.cmdline[:200]}"
                                                                   for p in left)
    assert not changes, ("files changed by a graded submission ('checkout ...' is this working tree: if someone "
                         "edits it while the tests run, rerun before blaming the grader): " + "; ".join(changes[:20]))


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
    return grader.everywhere(UNIT_REL / "hidden" / "test_bptt.py")


# ================================================================================ cases
LOG_REPLACEMENT = r'''
import os, sys

def _guessed_folders():
    folders = [os.getcwd(), "/tmp", "/work", "/submission", os.environ.get("TMPDIR", "/tmp")]
    if "--root" in sys.argv:                  # the grader's folder for this worker, as the grader sees it
        root = sys.argv[sys.argv.index("--root") + 1]
        folders += [root, os.path.join(root, "jail"), os.path.join(root, "submission"), os.path.dirname(root)]
    return folders + _CFG["folders"]

for _folder in _guessed_folders():
    for _i, _name in enumerate(["output.log", "log", "stdout", "stderr", "worker.log", "score.md", "score.json"]):
        _path = os.path.join(_folder, _name)
        try:
            if _CFG["fifo"]:
                os.mkfifo(_path)
            else:
                os.symlink(_CFG["targets"][_i % len(_CFG["targets"])], _path)
        except OSError:
            pass
os._exit(3)
'''


def test_log_replacement_by_links_and_fifos(case):
    """(Tracker case 1.) Import-time: links named like log files (to the environment and the hidden suite), or
    FIFOs, wherever the grader might read a log; then os._exit. The grader reads the worker's
    output from a pipe only: nothing of those targets reaches a report, nothing blocks."""
    out = case.dir / "out"
    # Where the links would land if the jail let them out (out is checked by check_reports).
    folders = [case.dir, case.tmp, case.grader.checkout, REPO, Path("/tmp"), Path("/work")]
    config = dict(folders=[str(f) for f in folders + [out]],
                  targets=["/proc/self/environ", f"/proc/{os.getpid()}/environ", *hidden_suite_paths(case.grader)])
    sub = case.submission("sub", append={"bptt.py": hostile(LOG_REPLACEMENT, fifo=False, **config),
                                         "bleu.py": hostile(LOG_REPLACEMENT, fifo=True, **config)})
    names = ["output.log", "log", "stdout", "stderr", "worker.log", "score.md", "score.json"]
    with restored([f / n for f in folders for n in names]):
        graded = case.grade(sub, "bptt", "bleu", "attention", out=out)
    expect_full_marks(graded.score, "attention")
    for tid in ("bptt", "bleu"):
        assert topic(graded.score, tid)["earned"] == 0 and topic(graded.score, tid)["status"] == "crashed"
    assert "exited with status 3" in topic(graded.score, "bptt")["tests"][0]["message"]


def test_links_fifos_and_odd_files_in_the_submission_folder(case):
    """(Tracker case 2.) The grader copies regular files by name, never through a link: a link to the reference
    or to the hidden suite, a FIFO, a root-only file and a 5 MB file give no marks, no
    content and no hang."""
    solution_attention = REPO / SOLUTIONS_REL / "attention.py"
    for variant in ("absolute", "relative"):
        sub = case.submission(f"sub-{variant}", base=STUBS)
        for name in ("attention.py", "bptt.py", "bleu.py"):
            (sub / name).unlink()
        hidden_suite = Path(hidden_suite_paths(case.grader)[0])
        for name, target in (("attention.py", solution_attention), ("bptt.py", hidden_suite)):
            (sub / name).symlink_to(target if variant == "absolute" else os.path.relpath(target, sub))
        os.mkfifo(sub / "bleu.py")
        (sub / "beam_search.py").write_bytes((SOLUTIONS / "beam_search.py").read_bytes())   # the intact topic
        gru = sub / "gru_lstm.py"
        gru.write_text(gru.read_text() + "# padding\n" * ((5 << 20) // 10))
        case.grader.own(sub)
        if case.grader.owner is not None:        # unprivileged: a file only root may read
            os.chown(sub / "gate_derivative.py", 0, 0)
            (sub / "gate_derivative.py").write_bytes((SOLUTIONS / "gate_derivative.py").read_bytes())
            (sub / "gate_derivative.py").chmod(0o600)
        graded = case.grade(sub, "attention", "bptt", "bleu", "gate_derivative", "gru_lstm_step", "beam_attribution")
        expect_full_marks(graded.score, "beam_attribution")
        for tid in ("attention", "bptt", "bleu", "gru_lstm_step"):
            assert topic(graded.score, tid)["earned"] == 0, f"{variant}: {tid} earned marks through a link or odd file"
        if case.grader.owner is not None:
            assert topic(graded.score, "gate_derivative")["earned"] == 0, "a file its user cannot read was graded"


MALLORY = r'''
import os, signal, time

def _kill_everything(seconds):
    me, started = os.getpid(), time.monotonic()
    while time.monotonic() - started < seconds:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
        for action in ([lambda: os.kill(-1, signal.SIGKILL), lambda: os.kill(os.getppid(), signal.SIGKILL)]
                       + [lambda p=p: os.kill(p, signal.SIGKILL) for p in pids + list(range(1, 1 << 15)) if p != me]
                       + [lambda p=p: os.killpg(p, signal.SIGKILL) for p in range(1, 1 << 15) if p != os.getpgid(0)]):
            try:
                action()
            except OSError:
                pass
    os.killpg(0, signal.SIGKILL)
    os.kill(me, signal.SIGKILL)

# The jail gives the worker a PID namespace of its own (init is 1, this process 2). Outside
# one, kill(-1) as root would take the whole machine down with the test run: say so instead.
if os.getpid() > 100:
    raise RuntimeError("MALLORY IS NOT IN A PID NAMESPACE OF ITS OWN")
_kill_everything(2)
'''

HANG = r'''
import time
while True:                        # an import that never ends and survives every exception
    try:
        time.sleep(0.05)
    except BaseException:
        pass
'''


def test_batch_one_student_cannot_kill_another(case):
    """(Tracker case 3.) batch --jobs 2: mallory's import signals every process it can for 2 s while alice
    (the reference) is graded beside her: alice keeps full marks, and so do mallory's
    topics she does not sabotage."""
    root = case.dir / "class"
    case.submission("class/alice")
    case.submission("class/mallory", append={"bptt.py": hostile(MALLORY)})
    _, out, rows = case.batch(root, "--jobs", "2", "--topic", "bptt", "--topic", "attention")
    assert rows["alice"]["status"] == "graded", rows
    assert float(rows["alice"]["earned"]) == points("bptt") + points("attention"), rows
    assert rows["mallory"]["status"] == "graded" and float(rows["mallory"]["attention"]) == points("attention"), rows
    assert float(rows["mallory"]["bptt"]) == 0, rows
    mallory = topic(json.loads((out / "students" / "mallory" / "score.json").read_text()), "bptt")
    assert mallory["status"] == "crashed", mallory["tests"][0]["message"]      # she killed herself, nobody else


def test_batch_records_a_hanging_submission_as_timeout(case):
    """(Tracker case 3.) batch --timeout 8: a submission whose every import hangs (and swallows every
    exception) is stopped and recorded as `timeout`; the class file is written and the
    other student is graded."""
    root = case.dir / "class"
    case.submission("class/alice")
    case.submission("class/hangs", append={m: hostile(HANG) for m in ("bptt.py", "attention.py", "bleu.py")})
    run, out, rows = case.batch(root, "--jobs", "2", "--timeout", "8", "--topic", "bptt", "--topic", "attention",
                                "--topic", "bleu", within=30)
    assert rows["hangs"]["status"] == "timeout", rows
    assert rows["alice"]["status"] == "graded", rows
    assert float(rows["alice"]["earned"]) == points("bptt") + points("attention") + points("bleu"), rows


WORKER_PIPE = r'''
import json, os, sys, time
_FD = int(sys.argv[sys.argv.index("--fd-out") + 1])

def _request_id():
    """The id the grader expects, read from the worker's own frames."""
    frame = sys._getframe()
    while frame is not None:
        req = frame.f_locals.get("req")
        if isinstance(req, dict) and isinstance(req.get("id"), int):
            return req["id"]
        frame = frame.f_back
    return 1

def _write_frame(payload):
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(_FD, view):]
'''

WRONG_ID = WORKER_PIPE + r'''
def _wrong_frames(seconds):
    started, rid = time.monotonic(), _request_id()
    while time.monotonic() - started < seconds:
        time.sleep(1)
        for wrong in (rid + 1, rid - 1, 10 ** 9):
            _write_frame(json.dumps({"id": wrong, "ok": True, "result": 0.0, "mutated": []}).encode())

_honest_numerical_gradient = numerical_gradient

def rel_error(a, b):
    _wrong_frames(float("inf"))

def numerical_gradient(f, x, h=1e-6):
    _wrong_frames(21)
    return _honest_numerical_gradient(f, x, h)
'''


def test_frames_with_a_wrong_request_id_cost_at_most_the_call_limit(case):
    """(Tracker case 4.) A function writes a reply frame with a wrong id every second (forever; or for 21 s, then
    returns the right answer): each call is charged as a failure within the call limit
    (5 s) plus slack, never the 21 s, and grading ends."""
    limit = UNIT.limits.call_timeout_s
    sub = case.submission("sub", append={"bptt.py": hostile(WRONG_ID)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    attacked = CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT
    tests = results_of(graded.score, "bptt")
    assert {i for i, t in tests.items() if t["outcome"] != "passed"} == attacked, tests
    assert all(tests[i]["outcome"] in ("error", "timeout") for i in attacked)
    times = junit_times(graded.out, "bptt")
    slow = {i: times[i] for i in attacked if times[i] > limit + 2}
    assert not slow, f"calls charged more than the {limit} s call limit: {slow}"


FORGED_REPLY = WORKER_PIPE + r'''
def _forge(total_bytes):
    """A reply with the right id whose result is millions of empty lists."""
    head = b'{"id": %d, "ok": true, "mutated": [], "result": ' % _request_id()
    n = (total_bytes - len(head) - 4) // 3
    _write_frame(head + b"[" + b"[]," * n + b"[]]" + b"}")
    time.sleep(30)

def rel_error(a, b):
    _forge(48 << 20)                 # over the reply size cap

def numerical_gradient(f, x, h=1e-6):
    _forge(_CFG["just_under_size_cap"])   # over the container cap instead
'''


def test_huge_forged_reply_costs_the_grader_little(case):
    """(Tracker case 5.) A forged 48 MB reply of nested empty lists with the right request id (and one just
    under the size cap): refused before it is parsed, so the grader stays far below 1 GB and
    finishes fast. The peak is the grader's (and of the workers it reaped), from wait4."""
    code = hostile(FORGED_REPLY, just_under_size_cap=wire.MAX_REPLY_BYTES - 64)
    sub = case.submission("sub", append={"bptt.py": code})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT))
    tests = results_of(graded.score, "bptt")
    assert all(tests[i]["outcome"] in ("error", "timeout") for i in CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT)
    assert graded.run.maxrss_kb < 512 * 1024, f"peak memory {graded.run.maxrss_kb >> 10} MiB"


# Everything a terminal, a Markdown renderer, an XML parser or a spreadsheet might act on.
NASTY = ("first line\n# Fake heading\n| bptt | 20 / 20 |\n<img src=http://x/beacon>\n<script>alert(1)</script>"
         "\x1b[2J\x1b]8;;http://x\x07link\x1b]8;;\x07 nul\x00 bel\x07 bs\x08 vt\x0b ff\x0c cr\r del\x7f csi\x9b"
         " rtl\u202e end")

STUDENT_TEXT = r'''
import os, sys

class _Nasty(Exception):
    pass

_Nasty.__name__ = _Nasty.__qualname__ = _CFG["text"].replace("\x00", "")   # a class name cannot hold NUL

def rel_error(a, b):
    raise _Nasty(_CFG["text"])

def numerical_gradient(f, x, h=1e-6):
    print(_CFG["text"], flush=True)            # the crash message quotes the worker's last output
    sys.stderr.write(_CFG["text"])
    sys.stderr.flush()
    os._exit(1)
'''


def test_student_text_is_inert_in_every_report(case):
    """(Tracker case 6.) Exception messages, an exception class name, printed output before a crash and an
    import error full of Markdown, HTML, escape sequences and control characters: score.md,
    junit.xml, results.json and the terminal get them inert (checked by `check_reports`)."""
    sub = case.submission("sub", append={"bptt.py": hostile(STUDENT_TEXT, text=NASTY),
                                         "bleu.py": hostile("raise ImportError(_CFG['text'])\n", text=NASTY)})
    graded = case.grade(sub, "bptt", "bleu", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR | CALLS_NUMERICAL_GRADIENT))
    assert topic(graded.score, "bleu")["status"] == "error" and topic(graded.score, "bleu")["earned"] == 0
    assert "\x1b" not in graded.run.stdout and "\x1b" not in graded.run.stderr
    messages = " ".join(t["message"] for t in topic(graded.score, "bptt")["tests"])
    assert "Fake heading" in messages, "the student's text must reach the report (sanitised), or this proves nothing"


def test_hostile_folder_names_are_not_formulas_in_class_csv(case):
    """(Tracker case 6.) Class folders named like spreadsheet formulas: their class.csv cells
    start with a quote, so a spreadsheet shows text."""
    root = case.dir / "class"
    names = ['=HYPERLINK("http:x.example","y")', "+SUM(1)", "-2+3", "@cmd"]   # a folder name cannot hold "/"
    for name in names:
        case.submission(f"class/{name}")
    _, out, rows = case.batch(root, "--jobs", "2", "--topic", "attention")
    cells = [r[0] for r in csv.reader((out / "class.csv").read_text().splitlines()[1:])]
    assert sorted(cells) == sorted("'" + n for n in names), cells
    assert all(float(rows[n]["attention"]) == points("attention") for n in names), rows


DISK_FILL = r'''
import errno, os, time

def _fill(folder, limit):
    written, error, started = 0, "none", time.monotonic()
    chunk = b"x" * (1 << 20)
    try:
        with open(os.path.join(folder, _CFG["name"]), "ab", buffering=0) as fh:
            while written < limit:
                written += fh.write(chunk)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno, str(exc.errno))
    return "%s:%d:%s:%.1f" % (folder, written >> 20, error, time.monotonic() - started)

def rel_error(a, b):
    raise RuntimeError("DISK " + " ".join(_fill(folder, 1200 << 20) for folder in ("/work", "/tmp")))
'''


def test_disk_writes_stop_at_the_jail_limit(case):
    """(Tracker case 7.) A function writes 1.2 GB to /work and to /tmp: stopped by ENOSPC/EFBIG at the jail's
    64 MiB within seconds; grading completes; the host's disk did not receive it."""
    name = f"containment-fill-{os.urandom(4).hex()}.bin"
    disk_before = shutil.disk_usage(case.dir).used
    sub = case.submission("sub", append={"bptt.py": hostile(DISK_FILL, name=name)})
    try:
        graded = case.grade(sub, "bptt", "attention")
        grew = shutil.disk_usage(case.dir).used - disk_before
        landed = [str(p) for p in (Path("/tmp") / name, Path("/work") / name, *case.dir.rglob(name)) if p.exists()]
    finally:
        for p in (Path("/tmp") / name, Path("/work") / name, *case.dir.rglob(name)):
            if p.exists():
                p.unlink()
    assert not landed, f"the student's writes reached the host: {landed}"
    assert grew < 300 << 20, f"the host's disk grew by {grew >> 20} MiB during grading"
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    fills = re.findall(r"(/\w+):(\d+):(\w+):([\d.]+)", message)
    assert len(fills) == 2, message
    for _folder, mib, error, seconds in fills:
        assert int(mib) <= 64 and error in ("ENOSPC", "EFBIG") and float(seconds) < 5, message


def test_error_location_names_the_students_file(case):
    """(Tracker case 8.) A student function passes bad input to a callable of the grader's helpers (the
    language model in beam_search, the scalar function in numerical_gradient): the error
    is raised in language_models.py / functions.py, but the report names the student's line."""
    bad_prefix = "total += float(log_prob_fn(tuple(tokens[:t]))[token])"        # no bos: the LM refuses it
    bad_shape = "fplus = f(x.reshape(-1, 1, 1))"                                 # CubicForm's x @ A fails
    sub = case.submission("sub", replace={
        "beam_search.py": [("total += float(log_prob_fn((bos,) + tokens[:t])[token])", bad_prefix)],
        "bptt.py": [("fplus = f(x)", bad_shape)]})
    lines = {m: next(i for i, line in enumerate((sub / m).read_text().splitlines(), 1) if text in line)
             for m, text in (("beam_search.py", bad_prefix), ("bptt.py", bad_shape))}
    graded = case.grade(sub, "beam_attribution", "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    for tid, module in (("beam_attribution", "beam_search.py"), ("bptt", "bptt.py")):
        failed = [t for t in topic(graded.score, tid)["tests"] if t["outcome"] != "passed"]
        assert failed, f"the broken {module} should fail some {tid} tests"
        for t in failed:
            assert "language_models.py" not in t["message"] and "functions.py" not in t["message"], t["message"]
        located = [t for t in failed if "raised ValueError" in t["message"]]
        assert located, [t["message"][:300] for t in failed]
        for t in located:
            assert f"{module}:{lines[module]}" in t["message"], t["message"]
    for report in graded.out.iterdir():
        text = report.read_text(errors="replace")
        for grader_file in ("language_models.py", "helpers/functions.py"):
            assert grader_file not in text, f"{report.name} names {grader_file}"


EDIT_SUITES = r'''
for _path in _CFG["paths"]:
    try:
        with open(_path, "a") as _fh:
            _fh.write("\n\ndef test_x():\n    pass\n")
    except OSError:
        pass
'''


def test_student_cannot_edit_the_test_suites(case):
    """(Tracker case 9.) Import-time: append a passing no-op test to the hidden and public suites (the real
    checkout, its copy, relative to the cwd) and add files beside them: nothing changes,
    and the stubs still score 0."""
    targets = [UNIT_REL / "hidden" / "test_bptt.py", UNIT_REL / "public" / "test_bptt.py", PUBLIC_REL / "test_bptt.py",
               UNIT_REL / "hidden" / "conftest.py", UNIT_REL / "hidden" / "test_zz_injected.py",
               UNIT_REL / "rubric" / "bptt.yaml"]
    paths = [p for rel in targets for p in case.grader.everywhere(rel)]
    paths += [str(up / rel) for up in (Path("."), Path(".."), Path("../..")) for rel in targets]
    stub_bptt = (STUBS / "bptt.py").read_text()
    sub = case.submission("sub")
    (sub / "bptt.py").write_text(stub_bptt + hostile(EDIT_SUITES, paths=paths))
    case.grader.own(sub)
    with restored([p for p in paths if os.path.isabs(p)]):
        graded = case.grade(sub, "bptt", "attention")
        stubs = case.grade(case.grader.checkout / "assignments" / "rnn_prehistory", "bptt")
    expect_full_marks(graded.score, "attention")
    for score in (graded.score, stubs.score):
        assert topic(score, "bptt")["earned"] == 0
        assert set(results_of(score, "bptt")) == {t.id for t in UNIT.rubric.topic("bptt").tests}


DAEMON = r'''
import os, time

def _rewrite_later():
    """Rewrite the score after the grader has written it."""
    for _ in range(40):
        time.sleep(0.25)
        for path in _CFG["targets"]:
            try:
                with open(path, "w") as fh:
                    fh.write('{"earned": 100.0, "possible": 100.0, "forged": true}')
            except OSError:
                pass

def rel_error(a, b):
    notes = []
    try:
        pid = os.fork()
    except OSError:
        notes.append("fork:refused")
    else:
        if pid == 0:
            try:
                os.setsid()
                _rewrite_later()
            finally:
                os._exit(0)
        notes.append("fork:STARTED")
    try:
        import _thread
        _thread.start_new_thread(_rewrite_later, ())
        notes.append("thread:STARTED")
    except BaseException:
        notes.append("thread:refused")
    raise RuntimeError("DAEMON " + " ".join(notes))
'''


def test_no_daemon_outlives_the_worker(case):
    """(Tracker case 10.) A setsid'd fork (and a thread) that would rewrite score.json after the grader wrote
    it: neither can start, and score.json is still the grader's 2 s later."""
    out = case.dir / "out"
    targets = [str(out / "score.json"), "score.json", "../score.json"]
    sub = case.submission("sub", append={"bptt.py": hostile(DAEMON, targets=targets)})
    graded = case.grade(sub, "bptt", "attention", out=out)
    written = (out / "score.json").read_bytes()
    time.sleep(2)
    assert (out / "score.json").read_bytes() == written, "score.json changed after the grader wrote it"
    assert "forged" not in written.decode()
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    for i in CALLS_REL_ERROR:
        message = results_of(graded.score, "bptt")[i]["message"]
        assert "fork:refused" in message and "thread:refused" in message, message


SNOOP = r'''
import base64, os

def _window(data, keys, size=300):
    for key in keys:
        at = data.find(key)
        if at >= 0:
            return data[at:at + size].decode("utf-8", "replace")
    return data[:size].decode("utf-8", "replace")

def rel_error(a, b):
    keys = [base64.b64decode(k) for k in _CFG["keys"]]
    paths = _CFG["files"] + ["/proc/%d/environ" % os.getppid(), "/proc/1/environ", "/proc/self/environ"]
    read, unreadable = [], []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                read.append("%s:READ:%s" % (path, _window(fh.read(), keys)))
        except OSError:
            unreadable.append(path)
    raise RuntimeError("SNOOP " + " | ".join(read) + " || unreadable: %d" % len(unreadable))

_honest_numerical_gradient = numerical_gradient

def numerical_gradient(f, x, h=1e-6):
    try:
        os.kill(os.getppid(), 9)
    except OSError:
        pass
    return _honest_numerical_gradient(f, x, h)
'''


def test_grader_secrets_and_files_stay_out_of_reach(case):
    """(Tracker case 11.) The student reads the grader's environment (/proc/<ppid>/environ), the reference
    solution and the hidden suite (absolute and relative paths), and kills its parent:
    every read fails, nothing of it reaches a report, grading completes."""
    rels = [UNIT_REL / "hidden" / "test_bptt.py", SOLUTIONS_REL / "bptt.py", SOLUTIONS_REL / "attention.py",
            UNIT_REL / "reference" / "bptt.py"]
    files = [p for rel in rels for p in case.grader.everywhere(rel)]
    files += [str(up / rel) for up in (Path("."), Path("..")) for rel in rels] + [f"/proc/{os.getpid()}/environ"]
    keys = [base64.b64encode(k.encode()[:24]).decode() for k in ["GRADER_SECRET=", *NEVER_IN_REPORTS]]
    sub = case.submission("sub", append={"bptt.py": hostile(SNOOP, files=files, keys=keys)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    expect_at_most(graded.score, "bptt", points("bptt") - points("bptt", CALLS_REL_ERROR))
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    assert "SNOOP" in message and ":READ:" not in message, message


PTH = r'''
import os
for _folder in _CFG["folders"]:
    for _name in ("zz_containment.pth", "sitecustomize.py", "usercustomize.py"):
        try:
            with open(os.path.join(_folder, _name), "w") as _fh:
                _fh.write(_CFG["line"])
        except OSError:
            pass
'''


def test_student_cannot_install_code_into_a_venv(case):
    """(Tracker case 12.) Import-time: a .pth file (and sitecustomize.py) written into the site-packages of the
    grader's venvs: no file appears, and the next grading is unaffected."""
    folders = [str(DEV_SITE), str(case.grader.env.site_packages)]
    line = "import sys; sys.stderr.write('PTH-INJECTED\\n')\n"
    planted = [Path(f) / n for f in folders for n in ("zz_containment.pth", "sitecustomize.py", "usercustomize.py")]
    planted += [Path(f) / "__pycache__" / f"{n}.{sys.implementation.cache_tag}.pyc" for f in folders
                for n in ("sitecustomize", "usercustomize")]            # left by an import of what was planted
    sub = case.submission("sub", append={"bptt.py": hostile(PTH, folders=folders, line=line)})
    with restored(planted):
        first = case.grade(sub, "bptt", "attention")
        second = case.grade(case.submission("reference"), "bptt", "attention")
    expect_full_marks(first.score, "bptt", "attention")
    expect_full_marks(second.score, "bptt", "attention")
    assert "PTH-INJECTED" not in second.run.stdout + second.run.stderr


def test_without_isolation_hidden_suites_are_refused(case):
    """(Case 13.) Where no namespace can be made (simulated by AUTOGRADER_NO_NAMESPACES=1), untrusted
    code is not run beside the hidden suites: exit 2 naming both ways out, which then work."""
    no_ns = {"AUTOGRADER_NO_NAMESPACES": "1"}
    reference = case.submission("reference")
    topics = ("bptt", "bleu")
    refused = case.grade(reference, *topics, expect_exit=2, env=no_ns)
    assert "--trust-submission" in refused.run.stderr and "--suite public" in refused.run.stderr, refused.run.stderr
    assert not (refused.out / "score.json").exists()
    trusted = case.grade(reference, *topics, extra=["--trust-submission"], env=no_ns)
    assert trusted.score["earned"] == trusted.score["possible"] == sum(map(points, topics))
    public = case.grade(reference, *topics, extra=["--suite", "public"], env=no_ns)
    public_points = sum(t.points for tid in topics for t in UNIT.rubric.topic(tid).tests if t.visibility == "public")
    assert public.score["earned"] == public.score["possible"] == public_points
    assert all(t["id"].startswith("public::") for tp in public.score["topics"] for t in tp["tests"])


MUTATES_ITS_INPUT = r'''
_honest_attention = additive_attention

def additive_attention(s_prev, H, Wa, Ua, va, mask=None):
    out = _honest_attention(s_prev, H.copy(), Wa, Ua, va, mask)
    H *= 2.0                                  # writes into an input: the no-mutation checks should see it
    return out
'''

# Ways student code can switch off the worker's measurement of mutated arguments.
HIDES_THE_MUTATION = {
    "patches the worker's _snapshot": "import sys\nsys.modules['__main__']._snapshot = lambda value: []\n",
    "patches numpy.array_equal": "import numpy\nnumpy.array_equal = lambda *a, **k: True\n",
}


def test_student_cannot_hide_that_it_mutates_its_inputs(case):
    """(Case 14, not from the tracker: found while writing these tests.) Which arguments a call
    modified is measured inside the worker, beside the student's code and with the numpy
    it shares: hiding a mutation must not earn the points an honest run loses."""
    honest = case.grade(case.submission("honest", append={"attention.py": hostile(MUTATES_ITS_INPUT)}),
                        "attention", "bleu")
    ceiling = topic(honest.score, "attention")["earned"]
    assert ceiling < points("attention"), "the mutation should cost points when it is not hidden"
    forged = {}
    for i, (how, code) in enumerate(HIDES_THE_MUTATION.items()):
        sub = case.submission(f"forged{i}", append={"attention.py": hostile(MUTATES_ITS_INPUT) + hostile(code)})
        graded = case.grade(sub, "attention", "bleu")
        expect_full_marks(graded.score, "bleu")
        forged[how] = topic(graded.score, "attention")["earned"]
    over = {how: earned for how, earned in forged.items() if earned > ceiling}
    assert not over, (f"attention earns {ceiling} / {points('attention')} honestly (it mutates H), "
                      f"more when the student's code hides the mutation: {over}")


ALLOWED_ON_PURPOSE = r'''
import ctypes, os

CLONE_NEWUSER = 0x10000000

def _affinity():
    before = sorted(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, before[:1])
    except OSError as exc:
        return "affinity:refused:%d" % exc.errno
    return "affinity:%s->%s" % (",".join(map(str, before)), ",".join(map(str, sorted(os.sched_getaffinity(0)))))

def _nested_user_namespace():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        return "userns:refused:%d" % ctypes.get_errno()
    header, caps = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()   # capget, version 3
    libc.capget(header, caps)
    effective = caps[0] | caps[3] << 32
    reach = [p for p in _CFG["host_files"] if os.path.exists(p)]
    try:                                   # RLIMIT_NPROC 0 still holds in the nested namespace
        pid = os.fork()
    except OSError as exc:
        fork = "refused:%d" % exc.errno
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        fork = "STARTED"
    mounted = "refused"                    # a mount namespace of its own, and a tmpfs in it
    if libc.unshare(0x00020000) == 0 and libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        mounted = "tmpfs"
        written = 0
        try:
            with open("/tmp/beyond-the-jail-limit", "wb", buffering=0) as fh:
                while written < 256 << 20:
                    written += fh.write(b"x" * (1 << 20))
        except OSError as exc:
            written = -exc.errno
        mounted += "-write:%d" % (written >> 20 if written > 0 else written)
        # /proc (to write a uid map) belongs to the jail's PID namespace, owned by the jail's user namespace
        mounted += "-proc:%d" % (0 if libc.mount(b"proc", b"/work", b"proc", 0, None) == 0 else ctypes.get_errno())
    return "userns:created:uid=%d:capeff=%x:host_files=%d:fork=%s:mount=%s" % (
        os.getuid(), effective, len(reach), fork, mounted)

def rel_error(a, b):
    raise RuntimeError("DESIGN " + _affinity() + " " + _nested_user_namespace())
'''


def test_what_the_jail_allows_on_purpose_gains_nothing(case):
    """Pins what the README's containment section says the jail allows on purpose, in both modes:
    the worker may narrow its own CPU affinity, and may make a nested user namespace, where it
    holds every capability over nothing: no host file in sight, still no fork (RLIMIT_NPROC 0),
    a tmpfs of its own it cannot create a file in (its uid is unmapped, and /proc, where a map
    is written, cannot be mounted). If the jail starts refusing either, or the nested namespace
    starts giving something, update the README and this test."""
    files = [p for rel in (UNIT_REL / "hidden" / "test_bptt.py", SOLUTIONS_REL / "bptt.py")
             for p in case.grader.everywhere(rel)]
    sub = case.submission("sub", append={"bptt.py": hostile(ALLOWED_ON_PURPOSE, host_files=files)})
    graded = case.grade(sub, "bptt", "attention")
    expect_full_marks(graded.score, "attention")
    message = results_of(graded.score, "bptt")["public::test_rel_error_formula"]["message"]
    found = re.search(r"DESIGN affinity:(\d+)[\d,]*->(\d+) userns:(\S+)", message)
    assert found, message
    assert found.group(2) == found.group(1), f"the worker could not narrow its CPU affinity: {message}"
    capabilities = f"{(1 << (int(Path('/proc/sys/kernel/cap_last_cap').read_text()) + 1)) - 1:x}"
    assert found.group(3) == (f"created:uid=65534:capeff={capabilities}:host_files=0:fork=refused:{errno.EAGAIN}"
                              f":mount=tmpfs-write:-{errno.EOVERFLOW}-proc:{errno.EPERM}"), message
