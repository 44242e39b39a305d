"""Other machines, simulated: the same files get the same score whatever BLAS kernel the CPU
gets and however many threads it runs.

OpenBLAS picks its kernel from the CPU (Haswell's, with fused multiply-adds, on an AMD EPYC
or a recent Intel; Sandybridge's without FMA on older ones; Prescott's, plain SSE, on the
oldest); `OPENBLAS_CORETYPE` forces one. Two kernels round differently, so every tolerance
of the suites is stated against a bound that any of them meets (autograder/authoring/
checks.py). This file checks that it is so: the oracle tests of every topic pass under
each kernel the CPU can run, and the reference, the stubs, every kill-matrix mutant and
every alternative get a byte-identical score.json (durations aside) under each kernel,
with one BLAS thread, and with two.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest
from helpers import REPO, SOLUTIONS, STUBS, grade_class, kill_matrix_class, make_submission

# Kernels to try, the oldest first. Zen's is Haswell's under another name in OpenBLAS's
# dynamic builds; SkylakeX's needs AVX-512 and dies of SIGILL where the CPU lacks it.
KERNELS = ("Prescott", "Sandybridge", "Haswell", "Zen", "SkylakeX")
PROBE = ("import numpy as np\n"
         "a = np.random.default_rng(0).normal(size=(200, 200))\n"
         "print(float((a @ a).sum()), float(np.linalg.eigvals(a).real.sum()))\n")


@functools.cache
def runnable_kernels() -> tuple[tuple[str, str], ...]:
    """(name asked for, kernel OpenBLAS loaded) of each kernel this CPU runs, one per distinct kernel."""
    found: dict[str, str] = {}
    for name in KERNELS:
        proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "OPENBLAS_CORETYPE": name, "OPENBLAS_VERBOSE": "2"})
        loaded = next((line.split(":", 1)[1].strip() for line in proc.stdout.splitlines() + proc.stderr.splitlines()
                       if line.startswith("Core:")), name)
        if proc.returncode == 0 and loaded not in found.values():
            found[name] = loaded
    return tuple(found.items())


def test_at_least_three_kernels_run_here():
    kernels = runnable_kernels()
    print(f"\nkernels this CPU runs: {', '.join(f'{n} ({k})' for n, k in kernels)}; "
          f"not run: {', '.join(sorted(set(KERNELS) - {n for n, _ in kernels}))}")
    assert len(kernels) >= 3, kernels


@pytest.mark.sweep
def test_the_oracle_tests_pass_under_every_kernel():
    failed = {}
    for kernel, _loaded in runnable_kernels():
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                               "autograder/units"], cwd=REPO, capture_output=True, text=True, timeout=1200,
                              env={**os.environ, "OPENBLAS_CORETYPE": kernel})
        if proc.returncode != 0:
            failed[kernel] = proc.stdout[-2000:]
    assert not failed, failed


def _without_durations(value):
    if isinstance(value, dict):
        return {k: _without_durations(v) for k, v in value.items() if k != "duration_s"}
    if isinstance(value, list):
        return [_without_durations(v) for v in value]
    return value


@pytest.fixture(scope="module")
def class_per_machine(tmp_path_factory):
    """The kill matrix as a class (mutants on their topic and its callers, alternatives on
    every topic), the reference and the stubs, graded by `batch` once per kernel and thread
    count: machine -> (kind, name) -> score.json without durations."""
    root = tmp_path_factory.mktemp("class")
    plan = kill_matrix_class(root)
    make_submission(root / "reference-reference")
    make_submission(root / "stubs-stubs", base=STUBS)
    graded = {}
    # Every kernel with one BLAS thread, and the last (this CPU's newest) with two as well: the
    # thread count changes only how the grader's own products are split, whatever the kernel.
    kernels = [kernel for kernel, _loaded in runnable_kernels()]
    for kernel, threads in [(k, "1") for k in kernels] + [(kernels[-1], "2")]:
        machine = f"{kernel}, {threads} thread(s)"
        env = {"OPENBLAS_CORETYPE": kernel, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        scores = grade_class(root, tmp_path_factory.mktemp("reports"), plan, env=env)
        graded[machine] = {case: _without_durations(score) for case, score in scores.items()}
    return graded


def differences(a, b, path: str = "") -> list[str]:
    """Where two score.json trees differ: "topics[2].tests[5].message: 'x' vs 'y'"."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {json.dumps(a)[:300]} vs {json.dumps(b)[:300]}"]


@pytest.mark.sweep
def test_every_score_is_the_same_on_every_machine(class_per_machine):
    (first, reference), *others = class_per_machine.items()
    assert reference["reference", "reference"]["earned"] == reference["reference", "reference"]["possible"]
    differ = {f"{machine}: {case}": differences(reference[case], score)
              for machine, scores in others for case, score in scores.items() if score != reference[case]}
    assert not differ, f"scores that differ from {first}'s: {json.dumps(differ, indent=1)[:8000]}"


def test_the_reference_has_full_marks_under_another_kernel(tmp_path):
    """make test's share of the sweep above: the reference graded once under the kernel
    furthest from this CPU's own (no FMA, no AVX)."""
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(SOLUTIONS), "--out", str(tmp_path),
                           "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OPENBLAS_CORETYPE": "Prescott", "LANGUAGE": "en"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    score = json.loads((tmp_path / "score.json").read_text())
    assert score["earned"] == score["possible"], [(t["id"], t["earned"]) for t in score["topics"]]
