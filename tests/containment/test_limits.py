"""A call's limits count what the student's code spends, not the machine's load
(autograder/isolation/clock.py): CPU time and time asleep, read from the kernel, with a
wall-clock backstop.

make test: the clock on real processes, with every core kept busy by hogs. make sweep: whole
gradings of a correct but slow submission and of the reference under the same load, which must
score as on an idle machine, and a busy loop and a sleeping call, still stopped under load.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import pytest
from helpers import SOLUTIONS, grade, make_submission, results_by_id

from autograder.isolation.clock import Budget, ProcessClock

CORES = len(os.sched_getaffinity(0))


@contextlib.contextmanager
def hogs(per_core: int):
    """`per_core` busy-looping processes per core, for the duration of the block. Each in a
    session of its own, as the processes of other users and jobs are: with the kernel's
    autogroup scheduling, hogs of one session would share one process's part of the CPU."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(per_core * CORES)]
    try:
        time.sleep(0.2)                       # running before the measured work starts
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def watched(code: str, cpu_s: float, wall_s: float = 60.0) -> tuple[Budget, float, bool]:
    """Run `code` in a process of its own and wait for it as the sandbox waits for a call:
    (the budget, the wall-clock seconds waited, whether the process finished before a limit)."""
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        clock = ProcessClock.of_worker(proc.pid)
        assert clock is not None, "no /proc/<pid>/schedstat on this machine"
        budget = Budget(cpu_s, wall_s, clock, blocked_s=cpu_s)
        while proc.poll() is None:
            wait = budget.wait_s()
            if wait <= 0:
                break
            try:
                proc.wait(timeout=min(wait, 0.05))
            except subprocess.TimeoutExpired:
                pass
        finished = proc.poll() is not None and budget.spent is None
        return budget, time.monotonic() - budget.started, finished
    finally:
        proc.kill()
        proc.wait()
        clock.close()


@contextlib.contextmanager
def asleep():
    """A process asleep for 3 s, yielded once it has said so: a budget started before that
    counts its start-up (on a CPU, and waiting for one on a loaded machine) as the call's."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(3.0)"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "asleep\n"
        time.sleep(0.05)                         # from its print to its sleep
        yield proc
    finally:
        proc.kill()
        proc.wait()


BURN = "import time\nwhile time.process_time() < {seconds}: pass\n"


def test_a_call_slowed_by_the_machines_load_is_within_its_cpu_limit():
    """0.2 s of CPU while two hogs per core run: the call takes more than twice that on the wall
    clock (a wall-clock limit of 0.4 s would stop it), and is within a CPU limit of 0.4 s.
    (Two hogs per core, not more, and for under a second: the hogs take their cores from the
    rest of `make test` too, ~4 CPU-seconds a second on two cores.)"""
    with hogs(2):
        budget, wall, finished = watched(BURN.format(seconds=0.2), cpu_s=0.4)
    assert wall > 0.4, f"the hogs did not slow the call down (it took {wall:.2f} s): the test shows nothing"
    assert finished, f"stopped ({budget.spent}) after {wall:.2f} s, {budget.cpu:.2f} s of CPU"


def test_a_busy_loop_is_stopped_at_its_cpu_limit_under_load():
    with hogs(2):
        budget, wall, finished = watched("while True: pass", cpu_s=0.25)
    assert not finished and budget.spent == "cpu", (budget.spent, wall)
    assert 0.25 <= budget.cpu < 0.5, budget.cpu


def test_a_sleeping_call_is_stopped_after_its_limit_of_wall_clock_asleep():
    """Asleep, not waiting for a core: charged from the first second, hogs or not."""
    with hogs(2):
        budget, wall, finished = watched("import time; time.sleep(60)", cpu_s=0.25)
    assert not finished and budget.spent == "blocked", (budget.spent, wall)
    assert budget.cpu < 0.2 and 0.25 <= wall < 3, (budget.cpu, wall)


def test_a_call_found_asleep_past_its_backstop_too_is_stopped_for_sleeping():
    """A short allowance (the last 3 ms of a topic's budget) looked at late, as a busy machine
    makes the grader look: the wall-clock backstop (12 x 3 ms) is spent as well as the time
    asleep, and the limit named is the sleep (the student's code), not the machine's load."""
    with asleep() as proc:
        clock = ProcessClock.of_worker(proc.pid)
        assert clock is not None, "no /proc/<pid>/schedstat on this machine"
        budget = Budget(0.003, 0.036, clock, blocked_s=0.003)
        time.sleep(0.1)                          # the grader's first look comes late
        while budget.wait_s() > 0:
            time.sleep(0.01)
        assert budget.spent == "blocked", (budget.spent, budget.cpu, budget.blocked)


def test_time_the_grader_spends_answering_is_not_the_calls():
    """A call that has slept 0.9 s, 0.8 s of them waiting for the grader (a callback being
    answered: excused), has slept only 0.1 s of its own; the same call unexcused has spent a
    0.5 s limit asleep. The budgets start once the process is asleep: on a loaded machine its
    start-up (on a CPU and waiting for one) took 0.2 s of the 0.9 s, and the test failed."""
    with asleep() as proc:
        clock = ProcessClock.of_worker(proc.pid)
        excused, unexcused = (Budget(1.0, 60, clock, blocked_s=0.5) for _ in range(2))
        time.sleep(0.3)
        excused.excuse(0.8)
        time.sleep(0.6)
        excused.look(), unexcused.look()
        assert excused.blocked < 0.3 < 0.7 < unexcused.blocked, (excused.blocked, unexcused.blocked)
        while (wait := unexcused.wait_s()) > 0:
            time.sleep(wait)
        assert unexcused.spent == "blocked" and excused.wait_s() > 0 and excused.spent is None
        assert proc.poll() is None, "the sleeping call ended early: the clocks read a dead process"


def test_a_topics_calls_share_one_budget(tmp_path):
    """A correct rel_error that sleeps 0.2 s per call: each call is within the call limit, but
    the calls of one topic's tests stop when they have spent the topic's budget between them
    (1 s here), and another topic's calls still run."""
    import dataclasses

    from autograder.isolation.sandbox import Sandbox, StudentModule, StudentTimeout
    from autograder.unit.load import load_unit

    unit = load_unit("rnn_prehistory")
    unit = dataclasses.replace(unit, limits=dataclasses.replace(unit.limits, topic_s=1.0, submission_s=1.6))
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("def rel_error(a, b):\n", "def rel_error(a, b):\n    import time\n    time.sleep(0.2)\n")]})
    with Sandbox(unit, sub, hidden=False) as sandbox:
        sandbox.start()
        bptt, attention = StudentModule(sandbox, "bptt"), StudentModule(sandbox, "attention")
        sandbox.charged_to = "bptt"
        done, started = 0, time.monotonic()
        with pytest.raises(StudentTimeout) as stopped:
            while True:
                bptt.rel_error(1.0, 2.0)
                done += 1
        assert stopped.value.limit == "topic" and 3 <= done <= 5, (done, stopped.value.message)
        assert "this topic's tests have used 1 s" in stopped.value.message
        sandbox.charged_to = "attention"
        assert attention.additive_attention is not None
        import numpy as np
        context, _alpha = attention.additive_attention(np.ones((1, 2)), np.ones((1, 3, 2)), np.ones((2, 2)),
                                                        np.ones((2, 2)), np.ones(2))
        assert context.shape == (1, 2)
        with pytest.raises(StudentTimeout) as whole:   # the grading's budget: 1.6 s, most of it spent
            sandbox.charged_to = "gate_derivative"
            for _ in range(10):
                bptt.rel_error(1.0, 2.0)
        assert whole.value.limit == "submission", whole.value.message
        assert time.monotonic() - started < 10


# ------------------------------------------------------------------------ whole gradings
SLOW_DECODER = ("def attention_decode(x, Wq, Wk, Wv):", "def attention_decode(x, Wq, Wk, Wv):\n"
                "    import time\n    _until = time.process_time() + 2.0\n"
                "    while time.process_time() < _until:\n        pass")


def outcomes(score: dict, topic: str) -> dict:
    return {i: (t["outcome"], t["earned"]) for i, t in results_by_id(score, topic).items()}


@pytest.mark.sweep
def test_a_correct_but_slow_decoder_scores_under_load_what_it_scores_idle(tmp_path):
    """The reference whose attention_decode first spends 2 s of its own CPU per call (as a
    decoder looping over the cached positions in Python does at T = 1024): full marks on an
    idle machine and with three busy processes per core (6.5 s of wall clock per call here)."""
    sub = make_submission(tmp_path / "slow", replace={"inference_cost.py": [SLOW_DECODER]})
    _proc, idle = grade(sub, tmp_path / "idle", "--topic", "inference_cost")
    with hogs(3):
        _proc, loaded = grade(sub, tmp_path / "loaded", "--topic", "inference_cost")
    assert outcomes(loaded, "inference_cost") == outcomes(idle, "inference_cost")
    assert idle["earned"] == idle["possible"], outcomes(idle, "inference_cost")


@pytest.mark.sweep
def test_the_reference_scores_under_load_what_it_scores_idle(tmp_path, reference_score):
    with hogs(3):
        _proc, loaded = grade(SOLUTIONS, tmp_path / "loaded")
    assert loaded["earned"] == loaded["possible"] == reference_score[0]["possible"]


@pytest.mark.sweep
def test_a_function_slow_on_every_call_costs_its_topic_its_budget_and_no_more(tmp_path):
    """rnn_forward correct but 3 s asleep on each of its ~40 direct calls (under the 5 s call
    limit): a grading of bptt and the lab would take two minutes with full marks; the calls of
    each topic stop at its budget (30 s), the lab's and bptt's, and the grading ends within the
    two budgets."""
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("def rnn_forward(x, h0, Wx, Wh, b):\n", "def rnn_forward(x, h0, Wx, Wh, b):\n    import time\n"
         "    time.sleep(3.0)\n")]})
    started = time.monotonic()
    _proc, score = grade(sub, tmp_path / "out", "--topic", "bptt", "--topic", "fault_injection")
    elapsed = time.monotonic() - started
    stopped = [t["message"] for topic in score["topics"] for t in topic["tests"] if "this topic's tests" in t["message"]]
    assert stopped, [t["message"] for topic in score["topics"] for t in topic["tests"]]
    assert score["earned"] < score["possible"]
    assert elapsed < 2 * 30 + 30, elapsed


@pytest.mark.sweep
def test_a_busy_loop_and_a_sleep_are_still_stopped_under_load(tmp_path):
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [
        ("def rel_error(a, b):\n", "def rel_error(a, b):\n    while True:\n        pass\n"),
        ("def numerical_gradient(f, x, h=1e-6):\n", "def numerical_gradient(f, x, h=1e-6):\n"
         "    import time\n    time.sleep(3600)\n")]})
    with hogs(3):
        _proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    tests = results_by_id(score, "bptt")
    loops = {i: t["message"] for i, t in tests.items() if "rel_error" in t["message"] and t["outcome"] == "timeout"}
    sleeps = {i: t["message"] for i, t in tests.items() if "numerical_gradient" in t["message"]
              and t["outcome"] == "timeout"}
    assert loops and all("s of CPU time" in m for m in loops.values()), tests
    # Each sleeping call is stopped by its own limit, or, once the busy loops and the sleeps
    # have spent the topic's budget (which of them comes first depends on the test order),
    # by the topic's budget: never by running on.
    assert any("slept or waited" in m for m in sleeps.values()), tests
    assert all("slept or waited" in m or "all this topic may use" in m for m in sleeps.values()), tests
