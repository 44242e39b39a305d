"""Hostile and broken submissions, graded for real by `python -m autograder grade`.

Each test builds a submission in a temporary folder from the reference (or the stubs),
breaks one thing (an edit, or a payload of payloads/ appended to a module), and checks
that only the matching tests lose points and that the report says what to fix.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time

import numpy as np
import pytest
from harness import payload
from helpers import SOLUTIONS, STUBS, UNIT, grade, make_submission, results_by_id

AS_ROOT = os.geteuid() == 0

# Tests of the bptt topic that call rnn_forward (directly or through a cache).
CALLS_RNN_FORWARD = {
    "public::test_rnn_forward_shapes_and_first_step", "hidden::test_rnn_forward_matches_reference",
    "hidden::test_rnn_backward_matches_finite_differences", "hidden::test_rnn_backward_accumulates_over_time",
    "hidden::test_rnn_backward_truncated_matches_definition",
    "hidden::test_rnn_backward_truncated_k_ge_T_equals_full",
    "public::test_rnn_backward_fixed_sequence", "public::test_rnn_backward_truncated_fixed_sequence",
}   # not test_no_input_mutation: it checks each function on its own and charges only a change in place
CALLS_REL_ERROR = {"public::test_rel_error_formula", "hidden::test_rel_error_matches_formula"}


def points_of(test_ids) -> float:
    return sum(t.points for t in UNIT.rubric.topic("bptt").tests if str(t.id) in test_ids)


def bptt_topic(score):
    return next(t for t in score["topics"] if t["id"] == "bptt")


def _cpu_of_this_process_and_its_children() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def test_infinite_loop_costs_only_the_tests_that_call_it(tmp_path, monkeypatch):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("    N, T, _ = x.shape\n", "    while True:\n        pass\n    N, T, _ = x.shape\n")]})
    # The unit's call limit lowered to 1 s of CPU (the shipped 5 s would make this test spend 5 s
    # of make test's CPU in one loop): what is checked is the rule, not the number.
    limit = 1.0
    from autograder.commands import grade as grade_command
    shipped = grade_command.load_unit
    monkeypatch.setattr(grade_command, "load_unit", lambda name=None: dataclasses.replace(
        shipped(name), limits=dataclasses.replace(shipped(name).limits, call_cpu_s=limit)))
    started, cpu_before = time.monotonic(), _cpu_of_this_process_and_its_children()
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    cpu, elapsed = _cpu_of_this_process_and_its_children() - cpu_before, time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    # One call's CPU limit, and the other calls of the loop are not run again (each would add
    # the limit again: 8 calls): counted in CPU (the grader's and its reaped workers'), which the
    # machine's load does not change; the wall clock, which a loaded machine stretches, only as a
    # backstop (the grader's own is 12 times the CPU limit).
    assert cpu < 2 * limit + 1.5 and elapsed < 300, f"grading took {cpu:.1f} s of CPU, {elapsed:.1f} s of wall clock"
    tests = results_by_id(score, "bptt")
    failed = {i: (t["outcome"], t["message"]) for i, t in tests.items() if t["outcome"] != "passed"}
    assert set(failed) == CALLS_RNN_FORWARD, failed
    assert all(outcome == "timeout" and "rnn_forward" in message for outcome, message in failed.values()), failed
    assert bptt_topic(score)["status"] == "graded"
    row = next(line for line in proc.stdout.splitlines() if line.startswith("bptt "))
    assert row.endswith(f"graded, {len(CALLS_RNN_FORWARD)} tests timed out"), row    # not a plain "graded"


def test_os_exit_in_a_function_costs_only_that_test(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("    return float(np.max(np.abs(a - b)", "    import os; os._exit(0)\n    return float(np.max(np.abs(a - b)")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    tests = results_by_id(score, "bptt")
    failed = {i for i, t in tests.items() if t["outcome"] != "passed"}
    assert failed == CALLS_REL_ERROR
    for i in failed:
        assert tests[i]["outcome"] == "error"
        assert "exited with status 0" in tests[i]["message"] and "os._exit" in tests[i]["message"]
    assert bptt_topic(score)["earned"] == bptt_topic(score)["possible"] - points_of(CALLS_REL_ERROR)


def test_student_cannot_forge_the_score(tmp_path):
    """The stub (0 points) plus import-time tampering: a fake score file, fake pytest
    output, and numpy functions replaced so that every comparison would pass."""
    out = tmp_path / "out"
    sub = make_submission(tmp_path / "sub", base=STUBS)
    (sub / "bptt.py").write_text((sub / "bptt.py").read_text() + payload(
        "forge_score", targets=[str(out / "score.json"), "reports/score.json", "score.json"]))
    proc, score = grade(sub, out, "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    assert score["earned"] == 0.0 and bptt_topic(score)["earned"] == 0.0
    assert "15 passed" not in proc.stdout and "PASSED" not in proc.stderr


def test_student_code_cannot_see_the_graders_secrets(tmp_path):
    hidden_suite = UNIT.test_file("bptt", "hidden")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        sub = make_submission(tmp_path / "sub", base=STUBS)
        (sub / "bptt.py").write_text((sub / "bptt.py").read_text() + payload("spy", hidden_suite=str(hidden_suite),
                                                                            port=port))
        proc, score = grade(sub, tmp_path / "out", "--topic", "bptt", env={"GRADER_SECRET": "s3cr3t-grader-token"})
    finally:
        listener.close()
    assert proc.returncode == 0, proc.stderr
    message = results_by_id(score, "bptt")["public::test_rel_error_formula"]["message"]
    assert "VIEW found=[]" in message, message           # the student's code ran, and saw no secret
    # in every mode: no file system but its own, no network
    assert "hidden=unreadable" in message and "net=refused" in message, message
    if AS_ROOT:   # a uid of its own, outside every real user's range
        assert "uid=0" not in message and "uid=65534" not in message, message


def test_syntax_error_names_file_line_and_fix(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [("def rnn_forward(x, h0, Wx, Wh, b):",
                                                                   "def rnn_forward(x, h0, Wx, Wh, b)")]})
    proc, score = grade(sub, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    topic = bptt_topic(score)
    assert topic["status"] == "error" and topic["earned"] == 0
    message = topic["tests"][0]["message"]
    assert "bptt.py does not import: SyntaxError" in message and "bptt.py:" in message, message
    # The modules that `import bptt` cannot import either; every other topic is graded as usual.
    importers = {t.id for t in UNIT.topics
                 if "\nimport bptt\n" in (SOLUTIONS / f"{t.module}.py").read_text(encoding="utf-8")}
    assert importers == {"fault_injection", "causality"}
    others = [t for t in score["topics"] if t["id"] != "bptt" and t["id"] not in importers]
    assert all(t["earned"] == t["possible"] for t in others), "other topics are graded as usual"


def test_import_error_and_missing_module(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [("import numpy as np", "import scipy\nimport numpy as np")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    message = bptt_topic(score)["tests"][0]["message"]
    assert bptt_topic(score)["status"] == "error" and "scipy" in message, message

    (sub / "bptt.py").unlink()
    proc, score = grade(sub, tmp_path / "out2", "--topic", "bptt")
    topic = bptt_topic(score)
    assert topic["status"] == "not_implemented" and "bptt.py is missing" in topic["tests"][0]["message"]


def test_memory_bomb_costs_only_its_test(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("    return float(np.max(np.abs(a - b)", "    np.ones((1 << 40,))\n    return float(np.max(np.abs(a - b)")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    tests = results_by_id(score, "bptt")
    assert {i for i, t in tests.items() if t["outcome"] != "passed"} == CALLS_REL_ERROR
    assert "MemoryError" in tests["hidden::test_rel_error_matches_formula"]["message"]


def test_partial_submission_is_graded_not_marked_unimplemented(tmp_path):
    sub = make_submission(tmp_path / "sub", base=STUBS)
    solved = (STUBS.parents[1] / "solutions" / "rnn_prehistory" / "bptt.py").read_text()
    start = solved.index("def rel_error")
    (sub / "bptt.py").write_text((sub / "bptt.py").read_text().split("def rel_error")[0] + solved[start:])
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    topic = bptt_topic(score)
    assert topic["status"] == "graded" and topic["earned"] == points_of(CALLS_REL_ERROR)
    assert "still raising NotImplementedError" in proc.stdout


def test_writing_to_the_grader_pipe_costs_only_that_test(tmp_path):
    """rel_error writes a garbled frame, then a forged reply smuggling a helper object."""
    sub = make_submission(tmp_path / "sub")
    (sub / "bptt.py").write_text((sub / "bptt.py").read_text() + payload("garbled_frames"))
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    tests = results_by_id(score, "bptt")
    assert {i for i, t in tests.items() if t["outcome"] != "passed"} == CALLS_REL_ERROR
    messages = " | ".join(tests[i]["message"] for i in CALLS_REL_ERROR)
    assert "wrote something other than a reply" in messages or "cannot read" in messages, messages


def test_common_numpy_and_stdlib_work_inside_the_sandbox(tmp_path):
    """Everything a student may reasonably call loads before the chroot (numpy imports some
    submodules lazily, e.g. numpy.ma on the first np.median)."""
    sub = make_submission(tmp_path / "sub")
    (sub / "bptt.py").write_text((sub / "bptt.py").read_text() + payload("common_numpy_and_stdlib"))
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    tests = results_by_id(score, "bptt")
    assert all(tests[i]["outcome"] == "passed" for i in CALLS_REL_ERROR), [tests[i]["message"] for i in CALLS_REL_ERROR]


@pytest.mark.parametrize("spare", [True, False])
def test_background_calls_run_on_a_spare_or_when_their_result_is_asked(tmp_path, spare):
    """`submit` runs a call on a second worker at once (a single grading), or, without a spare
    (a batch job with no core left over), on the main worker when its result is first asked;
    either way the result, or the exception, is the call's and is kept."""
    from autograder.isolation.sandbox import Sandbox, StudentCodeError, StudentModule

    sub = make_submission(tmp_path / "sub", files={"bptt.py": (SOLUTIONS / "bptt.py").read_text() + payload("recorder")})
    with Sandbox(UNIT, sub, hidden=False, spare=spare) as sandbox:
        sandbox.start()
        bptt = StudentModule(sandbox, "bptt")
        later, bad = bptt.record.submit(3), bptt.record.submit(-1)
        assert bptt.recorded() == []                    # nothing has run on the main worker yet
        assert later.result() == 6 and later.result() == 6
        for _ask in range(2):
            with pytest.raises(StudentCodeError, match="negative"):
                bad.result()
        # on the spare, the calls ran in another process; without one, here, once each
        assert bptt.recorded() == ([] if spare else [3, -1])
        assert (sandbox._workers["spare"] is not None) == spare


def test_lent_functions_run_in_the_grader_and_see_what_the_student_sees(tmp_path):
    """A callable the grader lends runs grader-side: it can call what the student passes it
    (which may call another lent one back), its in-place changes to an array argument are
    what the student's closure reads, its exception is raised in the student's code at the
    student's line, and what the student passed it cannot be called after the call."""
    from autograder.isolation import callbacks
    from autograder.isolation.sandbox import Sandbox, StudentCodeError, StudentModule

    sub = make_submission(tmp_path / "sub", files={"bptt.py": (SOLUTIONS / "bptt.py").read_text() + payload("lender")})
    kept = []

    def probe(f, x):
        kept.append(f)
        x[0] += 1.0
        value = f(None)
        x[0] -= 1.0
        return value

    with Sandbox(UNIT, sub, hidden=False) as sandbox:
        sandbox.start()
        bptt = StudentModule(sandbox, "bptt")
        value, seen, after = bptt.probe_in_place(probe, np.array([1.0, 2.0]), lambda s: 10 * s)
        assert (value, seen, after) == (40.0, [2.0], [1.0, 2.0])
        with pytest.raises(RuntimeError, match="for one call only"):
            kept[0](None)
        with pytest.raises(StudentCodeError, match=r"ZeroDivisionError.*bptt\.py:\d+ in call_lent") as raised:
            bptt.call_lent(lambda v: 1 / v, 0)
        assert not any(f"{name}.py" in raised.value.traceback for name in ("callbacks", "sandbox", "pipe", "proxies"))
        assert callbacks.REVOKED.startswith("this function was lent")


def test_closing_a_worker_twice_closes_no_other_file(tmp_path):
    """A worker closed a second time (another thread's cleanup, a slot replaced) leaves alone
    the file numbers its pipes had: the process has since given them to other files, such as
    another worker's pipes, and closing those would cut that worker off."""
    from autograder.isolation.sandbox import Sandbox

    with Sandbox(UNIT, make_submission(tmp_path / "sub"), hidden=False) as sandbox:
        sandbox.start()
        worker = sandbox.worker()
        worker.close()
        others = [fd for _pair in range(4) for fd in os.pipe()]     # reuse the numbers just freed
        try:
            worker.close()
            for fd in others:
                os.fstat(fd)                                     # EBADF if the second close took it
        finally:
            for fd in others:
                os.close(fd)


def test_a_batch_job_closes_its_log_pipe_once():
    """A batch job's log is drained by a thread that closes the pipe when the job ends; no
    file object may close that number again later (garbage collection of the job): by then
    the process may have given it to another file, such as a worker's pipe in the same batch."""
    import gc

    from autograder.commands.batch_pool import Job, job_configs

    job = Job(job_configs({"assignment": str(UNIT.path), "suite": "public", "topics": None, "seed": None,
                           "lang": None, "planned": False}, 1)[0])
    number = job._log._fd
    job.stop()
    job._log.join(10)
    assert not job._log.is_alive(), "the drain ends with the job's output"
    taken = []
    try:
        while not taken or taken[-1] < number:                     # reuse the number just freed
            taken.append(os.dup(0))
        assert number in taken
        del job
        gc.collect()
        closed_again = [fd for fd in taken if not _is_open(fd)]
    finally:
        for fd in taken:
            if _is_open(fd):
                os.close(fd)
    assert not closed_again, f"the job closed file number {number} again, after its log drain had"


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
