"""The containment cases' fixtures (harness.py holds what they use): the copy of the checkout
that `nobody` grades, the grader in each privilege mode, and one case with its checks after."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from harness import (
    AS_ROOT,
    DEPENDENCY_SITES,
    SEED,
    SOLUTIONS_REL,
    UNIT,
    Case,
    CopiedEnv,
    Grader,
    files_state,
    leftover_processes,
    processes,
    state_changes,
)
from helpers import REPO, once_per_run, remove_at_end


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
def copied_env(tmp_path_factory) -> CopiedEnv:
    """The checkout's files (git ls-files, not .venv or .git) copied to /tmp, and a venv
    whose site-packages lists the dev venv's (dependencies) and the copy (autograder), all
    owned by nobody when we are root. Built once per run (`once_per_run`: xdist's processes
    share it, as they share the checkout), removed when the run ends; hashed before and after
    every case."""
    made = once_per_run(tmp_path_factory, "containment-env", _copy_of_the_checkout)
    env = CopiedEnv(Path(made["base"]), Path(made["checkout"]), Path(made["venv"]), made["python"],
                    Path(made["site_packages"]))
    remove_at_end(tmp_path_factory, env.base)
    return env


def _copy_of_the_checkout() -> dict:
    if AS_ROOT and not shutil.which("runuser"):
        _unavailable("runuser (util-linux) is needed to start the grader as nobody")
    base = Path(tempfile.mkdtemp(prefix="containment-env-"))
    try:
        return _copy_into(base)
    except BaseException:                   # a skip or a failure: nothing is left in /tmp
        shutil.rmtree(base, ignore_errors=True)
        raise


def _copy_into(base: Path) -> dict:
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
    env_python = str(venv / "bin" / "python")
    imports = "import autograder, numpy, pytest, yaml; print(autograder.__file__)"
    probe = subprocess.run(_as_grader_user([env_python, "-c", imports]), capture_output=True, text=True, cwd=base)
    if probe.returncode != 0:
        _unavailable(f"the grader's user cannot import the dev venv's packages: {probe.stderr[-500:]}")
    assert probe.stdout.strip().startswith(str(checkout)), probe.stdout
    return {"base": str(base), "checkout": str(checkout), "venv": str(venv), "python": env_python,
            "site_packages": str(site)}


# Students and assistants grade unprivileged: that mode is part of `make test`. The cases
# graded as root (CI, Gradescope's container) run in `make sweep`, which CI runs after
# `make test`: both modes on every submission, and a `make test` that fits in two minutes.
@pytest.fixture(scope="session", params=[pytest.param("root", marks=pytest.mark.sweep), "unprivileged"])
def grader(request, copied_env, tmp_path_factory) -> Grader:
    if request.param == "root" and not AS_ROOT:
        pytest.skip("mode 'root' grades as root: run the tests as root (.ci/run runs `make sweep` as root)")
    g = Grader("unprivileged", copied_env.python, copied_env.checkout,
               ["runuser", "-u", "nobody", "--"] if AS_ROOT else [], _nobody() if AS_ROOT else None, copied_env)
    # In both modes: every case hashes the copy, and a root case that ran while another process
    # warmed the copy up saw its bytecode appear (make sweep, -n 2).
    once_per_run(tmp_path_factory, "containment-warm-up", lambda: _warm_up(g))
    if request.param == "root":
        return Grader("root", sys.executable, REPO, [], None, copied_env)
    return g


def _warm_up(g: Grader) -> bool:
    """The reference gets full marks, and Python writes the copy's bytecode now, before the
    first snapshot (the copy must then stay byte-identical)."""
    base = g.env.base
    out = base / "warm-up"
    run = g.run(["grade", g.checkout / SOLUTIONS_REL, "--out", out, *SEED], {}, 300, base / "logs")
    if run.returncode == 2 and "could not" in run.stderr:
        _unavailable(f"this machine cannot isolate a grader without privileges: {run.stderr[-400:]}")
    assert run.returncode == 0, run.stderr
    score = json.loads((out / "score.json").read_text())
    assert score["earned"] == score["possible"] == UNIT.rubric.points, run.stdout
    # And batch's own modules (the class report), over a class of one.
    warm_class = base / "warm-up-class"
    shutil.copytree(g.checkout / SOLUTIONS_REL, warm_class / "one", dirs_exist_ok=True)   # a retry finds it
    run = g.run(["batch", warm_class, "--out", base / "warm-up-batch", "--topic", "attention", *SEED], {},
                300, base / "logs")
    assert run.returncode == 0, run.stderr
    # The other commands' modules (pr, gradescope, merge): each verb imports only its own.
    compiled = subprocess.run(_as_grader_user([g.python, "-m", "compileall", "-q", str(g.checkout / "autograder")]),
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout[-2000:] + compiled.stderr[-2000:]
    return True


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
