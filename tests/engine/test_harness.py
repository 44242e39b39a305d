"""The harness the repository's tests run in: gradings in the test's own process
(helpers.run_in_process, through autograder.cli.run) give what the command line gives and
leave the process as they found it; the xdist order (tests/scheduling.py) starts the
longest work first and keeps the tests of a file together."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys

from helpers import MATRIX, REPO, SOLUTIONS, UNIT, grade, make_submission, run_in_process
from scheduling import known_durations, read_durations, start_order, work_unit, write_durations

from autograder import i18n


def _process_state() -> dict:
    return {"memory limit": resource.getrlimit(resource.RLIMIT_AS), "SIGTERM": signal.getsignal(signal.SIGTERM),
            "environment": dict(os.environ), "cwd": os.getcwd(), "argv": list(sys.argv),
            "import hooks": list(sys.meta_path), "language": (i18n._active, i18n._language),
            "sys.path": list(sys.path), "reference modules": {t.module: sys.modules.get(t.module) for t in UNIT.topics}}


def test_a_grading_in_process_leaves_the_process_as_it_found_it(tmp_path):
    before = _process_state()
    proc = run_in_process("grade", SOLUTIONS, "--out", tmp_path / "out", "--topic", "bptt", "--lang", "zh",
                          env={"GRADER_SECRET": "x"})
    assert proc.returncode == 0, proc.stderr
    assert "总计" in proc.stdout and (tmp_path / "out" / "score.json").is_file()
    assert _process_state() == before
    bad = run_in_process("grade", "--bogus-flag")                 # argparse's exit, caught
    assert bad.returncode == 2 and "--bogus-flag" in bad.stderr
    assert _process_state() == before


def test_a_grading_in_process_gives_what_the_command_line_gives(tmp_path):
    mutant = MATRIX["bptt"]["mutants"][0]
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [tuple(e) for e in mutant["replace"]]})
    (_, alone), (proc, here) = (grade(sub, tmp_path / name, "--topic", "bptt", command_line=name == "cli")
                                for name in ("cli", "here"))
    assert proc.returncode == 0, proc.stderr
    for score in (alone, here):
        score.pop("duration_s")
    assert 0 < here["earned"] < here["possible"]
    assert json.dumps(here).replace(str(tmp_path / "here"), "OUT") == json.dumps(alone).replace(str(tmp_path / "cli"), "OUT")


def test_the_tests_of_a_file_share_a_unit_except_in_the_spread_folders():
    assert work_unit("tests/e2e/test_journey.py::test_x[total]") == "tests/e2e/test_journey.py"
    assert work_unit("tests/e2e/test_containment_like.py::test_x") == "tests/e2e/test_containment_like.py"
    for spread in ("tests/containment/test_sandbox.py::test_y", "tests/containment/test_attacks.py::test_z[unprivileged]"):
        assert work_unit(spread) == spread


def test_the_files_that_import_torch_or_nbgrader_share_one_unit_each(tmp_path):
    oracles = {work_unit(f"autograder/units/rnn_prehistory/topics/{t}/test_oracle.py::test_x") for t in ("bptt", "bleu")}
    nbgrader = {work_unit(f"tests/{f}::test_y") for f in ("engine/test_nbgrader_exchange.py", "e2e/test_nbgrader.py")}
    assert len(oracles) == 1 and len(nbgrader) == 1 and oracles != nbgrader
    assert work_unit("tests/engine/test_grading.py::test_z") == "tests/engine/test_grading.py"
    # not yet measured, a group starts before every file; measured, it keeps its time
    (group,), (other,) = oracles, nbgrader
    assert start_order(["tests/e2e/test_c.py", group], {})[0] == group
    (tmp_path / "autograder/units/u/topics/t").mkdir(parents=True)
    (tmp_path / "autograder/units/u/topics/t/test_oracle.py").touch()
    write_durations(tmp_path / "durations", {group: 12.0, other: 3.0})
    assert read_durations(tmp_path / "durations") == {group: 12.0}     # no nbgrader file in tmp_path


def test_collecting_the_suite_imports_neither_torch_nor_nbgrader_nor_matplotlib():
    """Every process of make test collects every file: a costly import at collection (torch
    ~2 s of CPU, nbgrader ~3 s, matplotlib ~0.3 s) is paid once per process, although one
    process runs the tests that use it. (pytest probes each module attribute at collection,
    `_mock_name` and `__wrapped__` among them, so a lazy stand-in must not answer those.)"""
    costly = ("torch", "nbgrader", "nbformat", "matplotlib")
    probe = ("import sys, pytest\n"
             "code = pytest.main(['tests', 'autograder/units', '-q', '--collect-only', '-p', 'no:xdist',"
             " '-p', 'no:cacheprovider'])\n"
             f"print(code, sorted(m for m in {costly!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout[-2000:] + done.stderr[-2000:]


def test_unknown_units_start_first_by_folder_then_the_longest_known():
    units = ["tests/engine/test_a.py", "tests/content/test_b.py", "tests/e2e/test_c.py", "tests/test_oracle_d.py",
             "tests/engine/test_slow.py", "tests/content/test_quick.py", "tests/e2e/test_new.py"]
    durations = {"tests/engine/test_slow.py": 40.0, "tests/content/test_quick.py": 1.0, "tests/engine/test_a.py": 3.0,
                 "tests/content/test_b.py": 3.0, "tests/test_oracle_d.py": 2.0}
    assert start_order(units, durations) == [
        "tests/e2e/test_c.py", "tests/e2e/test_new.py",                    # unknown: the e2e folder first
        "tests/engine/test_slow.py", "tests/engine/test_a.py", "tests/content/test_b.py",   # equals keep their order
        "tests/test_oracle_d.py", "tests/content/test_quick.py"]
    assert start_order(units[:4], {}) == ["tests/e2e/test_c.py", "tests/content/test_b.py", "tests/engine/test_a.py",
                                          "tests/test_oracle_d.py"]


def test_the_durations_of_a_run_are_merged_into_the_file(tmp_path):
    path = tmp_path / "durations"
    assert read_durations(path) == {}
    path.write_text("not json")
    assert read_durations(path) == {}
    for name in ("test_a.py", "test_b.py", "test_gone.py"):
        (tmp_path / name).touch()
    write_durations(path, {"test_a.py": 1.234, "test_b.py::t[1]": 2.0, "test_gone.py": 3.0})
    (tmp_path / "test_gone.py").unlink()
    write_durations(path, {"test_b.py::t[1]": 5.0})
    assert read_durations(path) == {"test_a.py": 1.23, "test_b.py::t[1]": 5.0}
    assert ".pytest_durations" in (REPO / ".gitignore").read_text().splitlines()      # never committed


def test_a_checkout_without_a_previous_run_orders_by_the_committed_seed(tmp_path):
    local, seed = tmp_path / ".pytest_durations", tmp_path / "durations.json"
    seed.write_text('{"tests/e2e/test_a.py": 30.0, "tests/e2e/test_b.py": 5.0}')
    assert known_durations(local, seed) == {"tests/e2e/test_a.py": 30.0, "tests/e2e/test_b.py": 5.0}
    local.write_text('{"tests/e2e/test_b.py": 50.0}')                  # this checkout's own run wins
    assert known_durations(local, seed) == {"tests/e2e/test_a.py": 30.0, "tests/e2e/test_b.py": 50.0}
    assert start_order(["tests/e2e/test_a.py", "tests/e2e/test_b.py"], known_durations(local, seed))[0] == \
        "tests/e2e/test_b.py"
