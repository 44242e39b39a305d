"""Fixtures shared by the repository's own tests, and the order tests start in under xdist."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# One BLAS thread, as in the grader's own process (autograder/__main__.py): the tests grade in
# this process too (helpers.run_in_process). Set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from helpers import REMOVE_AT_END, REPO, SOLUTIONS, STUBS, grade, once_per_run, run_folder  # noqa: E402
from scheduling import known_durations, start_order, work_unit, write_durations  # noqa: E402

DURATIONS = REPO / ".pytest_durations"
SEED_DURATIONS = REPO / "tests" / "durations.json"        # make durations


# xdist's `--dist loadgroup` marks do not reach pytest 9's node ids, so this scheduler groups
# instead (tests/scheduling.py: which tests share a process). It overrides only `_split_scope`,
# the hook xdist's own LoadFileScheduling and LoadGroupScheduling override; the units start in
# the order the workers collected them (no reordering by size), which
# pytest_collection_modifyitems below makes the longest first.
@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None                      # an explicit other --dist is respected
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return ByWorkUnit(config, log)


def pytest_collection_modifyitems(session, config, items) -> None:
    """In an xdist worker, whose collection the scheduler queues in order: the work units
    longest first (stable: a unit's tests keep their order). A run in one process keeps
    pytest's order (a file's module fixtures are made once)."""
    if not hasattr(config, "workerinput"):
        return
    order = {unit: i for i, unit in enumerate(start_order(dict.fromkeys(work_unit(item.nodeid) for item in items),
                                                          known_durations(DURATIONS, SEED_DURATIONS)))}
    items.sort(key=lambda item: order[work_unit(item.nodeid)])


# What each unit took in this run, for the next one's order: under xdist the workers'
# reports arrive in the controller, which alone writes the file.
_measured: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    unit = work_unit(report.nodeid)
    _measured[unit] = _measured.get(unit, 0.0) + report.duration


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workerinput"):
        return
    if _measured:
        write_durations(DURATIONS, _measured)
    listing = run_folder(session.config._tmp_path_factory) / REMOVE_AT_END
    if listing.is_file():
        for folder in set(listing.read_text().splitlines()):
            shutil.rmtree(folder, ignore_errors=True)


def _graded_once(tmp_path_factory, submission: Path, name: str) -> tuple[dict, Path, str]:
    """(score.json, the reports folder, the grader's output) of one grading of `submission`,
    made once per run by the first process to ask (`once_per_run`): each full grading costs
    ~2 s of CPU, which every process of make test paid again. Tests only read the folder."""
    def build():
        out = run_folder(tmp_path_factory) / name
        shutil.rmtree(out, ignore_errors=True)              # a grading that failed half-way
        proc, _score = grade(submission, out)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return {"out": str(out), "stdout": proc.stdout}
    done = once_per_run(tmp_path_factory, name, build)
    out = Path(done["out"])
    return json.loads((out / "score.json").read_text()), out, done["stdout"]


@pytest.fixture(scope="session")
def reference_score(tmp_path_factory):
    """One grading run of the reference solution, shared by the tests that read it."""
    score, out, _stdout = _graded_once(tmp_path_factory, SOLUTIONS, "reference-reports")
    return score, out


@pytest.fixture(scope="session")
def stubs_graded(tmp_path_factory):
    """One grading run of the untouched stubs: (score.json, reports folder, what it printed)."""
    return _graded_once(tmp_path_factory, STUBS, "stubs-reports")


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """`make release` into a temporary folder: student/ and grader-bundle/ (leak check clean).
    Built once per run (`once_per_run`). Tests only read it (a test that edits or grades the
    release works on a copy)."""
    def build():
        out = run_folder(tmp_path_factory) / "dist"
        shutil.rmtree(out, ignore_errors=True)              # a build that failed half-way
        return str(_release(out))
    return Path(once_per_run(tmp_path_factory, "dist", build))


def _release(out):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "release.py"), "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "leak check clean" in proc.stdout
    return out
