"""Benchmarks of the grader (`make bench`): every series measured in the same rounds.

    python scripts/bench.py [--rounds 5] [--batch 20] [--no-nbgrader] [--no-otter] [--history FILE]

Each round runs every series once, in an order rotated from one round to the next, so that
a change of the machine's load falls on every series alike. For each series the table gives
the median wall time and CPU time (user + system of the whole process tree: this process is
a subreaper, so the workers a grading leaves to end on their own are counted too, which a
plain wait4 of the grader misses), the median over the rounds of its ratio to the floor (an
empty pytest run in the same venv) and to grading the reference *in the same round* (on a
loaded machine, read the ratios), and the largest resident set of any one process. The
load average is printed per round.

Series: the floor; grading the reference, the stubs, and the reference's public tests only;
grading one test (a grading's fixed cost) and the reference's run_fault_injection run as often
as a grading runs it, in a plain interpreter (no goal: what the goals leave room for);
`batch --jobs 2` over `--batch` generated submissions (the reference, the stubs and the kill
matrix's mutants, in turn), per submission; `nbgrader autograde` of the same reference in
the generated course (course/: one notebook per topic, one submission, the notebooks' shared
grading emptied before each run); Otter-Grader's `otter run` of the same reference against
the course mapped to Otter (scripts/otter_course.py: one question per topic, one case per test
function that runs without our worker, 90 of the 102; and the public tests alone), each with
its ratio to our grading of the same work in the same round. The goals are printed beside the numbers and the exit
status says whether they hold; no test ever asserts a time. Each run appends one line to
the history file (the commit, the load, every series' medians), committed with the code it
measured, so that a regression shows the next time anyone looks.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import otter_course
import yaml

from autograder.unit.load import load_unit

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "solutions" / "rnn_prehistory"
STUBS = REPO / "assignments" / "rnn_prehistory"
HISTORY = REPO / "scripts" / "bench_history.jsonl"
GRADE = [sys.executable, "-m", "autograder", "grade"]
NBGRADER = Path(sys.executable).with_name("nbgrader")
OTTER = Path(sys.executable).with_name("otter")
FLOOR, REFERENCE, PUBLIC = "floor: empty pytest", "grade reference", "grade --suite public"
ONE_TEST, ONE_TEST_ID = "grade one test (the fixed cost)", "attention::hidden::test_additive_attention_matches_reference"
LAB_ALONE = "the reference's lab, 5 runs, plain python"
# Otter's series -> (the suites mapped to its cases, our series of the same work)
OTTER_SERIES = {"otter run, reference": (("public", "hidden"), REFERENCE), "otter run, public": (("public",), PUBLIC)}

# The goals, as ratios measured in the same round (wall and CPU alike) or per submission.
GOAL_TO_FLOOR = {REFERENCE: 2.0, "grade stubs": 1.3}
GOAL_BATCH_CPU_PER_SUBMISSION = 0.5
GOAL_NBGRADER_TO_REFERENCE = 30.0
GOAL_OTTER_TO_OURS = 8.0
GOAL_PEAK_RSS_MB = 300
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Run:
    wall: float          # seconds until the command ended
    cpu: float           # user + system seconds of it and every descendant
    rss_mb: float        # the largest resident set of any one of them


def become_subreaper() -> None:
    """Descendants whose parent ends are re-parented to this process (not to init), so
    their CPU time is counted when they end."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def measure(cmd: list[str], cwd: Path = REPO, env: dict | None = None) -> Run:
    """Run `cmd`; reap it and every descendant it leaves behind (up to 30 s after it ends)."""
    stderr = tempfile.TemporaryFile()       # a file, not a pipe: a descendant holding it delays nothing
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    cpu = rss = 0.0
    wall = None
    deadline = None
    while True:
        try:
            pid, status, usage = os.wait4(-1, 0 if wall is None else os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.perf_counter() > deadline:
                raise SystemExit(f"descendants of {' '.join(cmd)} still run 30 s after it ended")
            time.sleep(0.01)
            continue
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss / 1024)
        if pid == proc.pid:
            wall = time.perf_counter() - start
            deadline = time.perf_counter() + 30
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode not in (0, 1, 5):      # 1: a grading under the pass mark; 5: no test ran
                stderr.seek(0)
                raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{stderr.read().decode()[-2000:]}")
    stderr.close()
    return Run(wall, cpu, rss)


# ------------------------------------------------------------------ the series

def jupyter_env(tmp: Path) -> dict:
    # nbgrader finds alembic and the kernel on PATH; the notebooks share one grading through
    # TMPDIR (autograder/notebook.py), which each run starts empty. Otter's kernel is the same.
    return {**os.environ, "HOME": str(tmp / "home"), "TMPDIR": str(tmp / "nbtmp"), "LANGUAGE": "en",
            "PATH": f"{NBGRADER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader_course(tmp: Path) -> Path | None:
    """The generated course (course/) with one submission, the reference in every answer
    cell, ready for `nbgrader autograde`; None without nbgrader or without the course."""
    if not NBGRADER.exists() or not (REPO / "course" / "nbgrader_config.py").is_file():
        return None
    sys.path.insert(0, str(REPO))
    from autograder.notebook import answer_module

    course = tmp / "course"
    shutil.copytree(REPO / "course", course)
    subprocess.run([str(NBGRADER), "generate_assignment", "rnn_prehistory", "--create", "--force"], cwd=course,
                   env=jupyter_env(tmp), check=True, capture_output=True)
    submitted = course / "submitted" / "bench-student" / "rnn_prehistory"
    submitted.mkdir(parents=True)
    for path in (course / "release" / "rnn_prehistory").glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            module = answer_module(cell)
            if module:
                cell["source"] = f"%%writefile {module}.py\n" + (SOLUTIONS / f"{module}.py").read_text()
        (submitted / path.name).write_text(json.dumps(nb))
    return course


def generated_class(root: Path, size: int) -> Path:
    """`size` submissions: the reference, the stubs and each mutant of the kill matrix, in turn."""
    unit = load_unit("rnn_prehistory")
    variants = [("reference", SOLUTIONS, None), ("stubs", STUBS, None)]
    for topic in unit.topics:
        spec = yaml.safe_load((unit.path / "topics" / topic.id / "mutants.yaml").read_text())
        for m in spec.get("mutants", []):
            variants.append((m["name"], SOLUTIONS, (f"{topic.module}.py", m["replace"])))
    for i in range(size):
        name, base, edit = variants[i % len(variants)]
        folder = root / f"{i:03d}-{name}"
        folder.mkdir(parents=True)
        for src in base.glob("*.py"):
            shutil.copyfile(src, folder / src.name)
        if edit:
            text = (folder / edit[0]).read_text()
            for old, new in edit[1]:
                text = text.replace(old, new)
            (folder / edit[0]).write_text(text)
    return root


def otter_series(tmp: Path, name: str, suites: tuple[str, ...]) -> tuple:
    """`otter run` of the reference against the course mapped to Otter, and a note of what
    its cases are; each run must give the reference full marks (a case that errors is no
    measure of Otter grading it)."""
    folder = tmp / name.replace(" ", "-").replace(",", "")
    mapped = otter_course.build(folder, suites, SOLUTIONS)
    results = folder / "out" / "results.json"
    results.parent.mkdir()

    def one_run() -> Run:
        results.unlink(missing_ok=True)
        run = measure([str(OTTER), "run", "-a", "autograder.zip", "-o", str(results.parent), "--no-logo",
                       "submission.zip"], cwd=folder, env=jupyter_env(tmp))
        cases = [t for t in json.loads(results.read_text())["tests"] if t.get("max_score") is not None]
        score, possible = sum(t["score"] for t in cases), sum(t["max_score"] for t in cases)
        if possible != mapped.mapped or score != possible:
            raise SystemExit(f"{name}: the reference scored {score} of {possible} ({mapped.mapped} cases)")
        return run

    reasons: dict[str, list[str]] = {}
    for visibility, topic, test, why in mapped.unmapped:
        reasons.setdefault(why, []).append(f"{visibility}/{topic}::{test}")
    note = "\n".join([f"{name}: {mapped.mapped} of the {mapped.total} tests of {' + '.join(suites)} are its cases"]
                      + [f"  {len(tests)} not mapped, they need our worker ({why}): {', '.join(tests)}"
                         for why, tests in reasons.items()])
    return one_run, mapped, note


def series(tmp: Path, batch: int, nbgrader: bool, otter: bool) -> tuple[dict, dict]:
    """name -> (run once: () -> Run, per: how many units of work one run is); Otter's series'
    name -> (cases, of how many tests, a note)."""
    out = tmp / "out"
    (tmp / "no-tests").mkdir()
    found = {
        FLOOR: (lambda: measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp / "no-tests")]), 1),
        REFERENCE: (lambda: measure(GRADE + [str(SOLUTIONS), "--out", str(out), "--quiet"]), 1),
        "grade stubs": (lambda: measure(GRADE + [str(STUBS), "--out", str(out), "--quiet"]), 1),
        PUBLIC: (lambda: measure(GRADE + [str(SOLUTIONS), "--suite", "public", "--out", str(out),
                                                          "--quiet"]), 1),
        # What no grading of the reference can go below, in the same rounds: a grading's fixed
        # cost (one test: the grader, its worker image, pytest, the reports), and the student's
        # own lab, run as often as a grading runs it (its own run, three broken runs, the public
        # test's), in a plain interpreter. No goal: they say how far the goals are from the work.
        ONE_TEST: (lambda: measure(GRADE + [str(SOLUTIONS), "--test", ONE_TEST_ID, "--out", str(out), "--quiet"]), 1),
        LAB_ALONE: (lambda: measure([sys.executable, "-c", "import fault_injection as f\n"
                                     "for seed in (1000, 1001, 1002, 1003, 42): f.run_fault_injection(seed)"],
                                    cwd=SOLUTIONS, env=dict(os.environ, OPENBLAS_NUM_THREADS="1")), 1),
    }
    if batch:
        root = generated_class(tmp / "class", batch)

        def one_batch() -> Run:
            shutil.rmtree(tmp / "batch", ignore_errors=True)
            return measure([sys.executable, "-m", "autograder", "batch", str(root), "--out", str(tmp / "batch"),
                            "--jobs", "2", "--seed", "1"])
        found[f"batch --jobs 2 (per submission of {batch})"] = (one_batch, batch)
    course = nbgrader_course(tmp) if nbgrader else None
    if course is not None:
        def one_nbgrader() -> Run:
            shutil.rmtree(tmp / "nbtmp", ignore_errors=True)
            (tmp / "nbtmp").mkdir()
            return measure([str(NBGRADER), "autograde", "rnn_prehistory", "--force"], cwd=course,
                           env=jupyter_env(tmp))
        found["nbgrader autograde (one notebook per topic)"] = (one_nbgrader, 1)
    cases = {}
    if otter and OTTER.exists():
        for name, (suites, _ours) in OTTER_SERIES.items():
            one_run, mapped, note = otter_series(tmp, name, suites)
            found[name] = (one_run, 1)
            cases[name] = (mapped.mapped, mapped.total, note)
    elif otter:
        print(f"no Otter series: {OTTER.name} is not installed (make bench installs the bench extra)", file=sys.stderr)
    return found, cases


# ------------------------------------------------------------------ rounds and the table

def rounds(found: dict, count: int) -> tuple[dict, list[float]]:
    """A warm-up of each series (file cache, bytecode), then `count` rounds in rotated order:
    name -> [Run per round], and the 1-minute load average at the start of each round."""
    names = list(found)
    for name in names:
        found[name][0]()
    runs: dict[str, list[Run]] = {name: [] for name in names}
    loads = []
    for k in range(count):
        loads.append(os.getloadavg()[0])
        for name in names[k % len(names):] + names[:k % len(names)]:
            run = found[name][0]()
            per = found[name][1]
            runs[name].append(Run(run.wall / per, run.cpu / per, run.rss_mb))
        print(f"round {k + 1}/{count} done (load {loads[-1]:.2f})", file=sys.stderr)
    return runs, loads


def ratio(runs: dict, name: str, to: str, field: str) -> float:
    """The median over rounds of name's time over `to`'s time in the same round."""
    return statistics.median(getattr(a, field) / getattr(b, field) for a, b in zip(runs[name], runs[to]))


def table(runs: dict, loads: list[float]) -> tuple[list[str], list[dict], bool]:
    lines = [f"load (1-min average) at the rounds' starts: {', '.join(f'{x:.2f}' for x in loads)}; {os.cpu_count()} CPUs",
             f"{'series':46s} {'wall s':>7s} {'CPU s':>7s} {'/floor wall,CPU':>16s} {'/reference':>12s} {'RSS MB':>7s}  goal"]
    rows, ok = [], True
    for name, series_runs in runs.items():
        r = {"name": name, "wall_s": statistics.median(x.wall for x in series_runs),
             "cpu_s": statistics.median(x.cpu for x in series_runs), "rss_mb": max(x.rss_mb for x in series_runs),
             "to_floor": [ratio(runs, name, FLOOR, f) for f in ("wall", "cpu")],
             "to_reference": [ratio(runs, name, REFERENCE, f) for f in ("wall", "cpu")]}
        goal, good = "", True
        if name in GOAL_TO_FLOOR:
            good = max(r["to_floor"]) <= GOAL_TO_FLOOR[name]
            goal = f"≤ {GOAL_TO_FLOOR[name]}× floor"
        elif name.startswith("batch"):
            good = r["cpu_s"] <= GOAL_BATCH_CPU_PER_SUBMISSION
            goal = f"≤ {GOAL_BATCH_CPU_PER_SUBMISSION} CPU-s per submission"
        elif name.startswith("nbgrader"):
            good = min(r["to_reference"]) >= GOAL_NBGRADER_TO_REFERENCE
            goal = f"≥ {GOAL_NBGRADER_TO_REFERENCE:g}× the reference"
        elif name in OTTER_SERIES:
            ours = OTTER_SERIES[name][1]
            r["to_ours"] = [ratio(runs, name, ours, f) for f in ("wall", "cpu")]
            good = min(r["to_ours"]) >= GOAL_OTTER_TO_OURS
            goal = f"≥ {GOAL_OTTER_TO_OURS:g}× {ours}: {r['to_ours'][0]:.2f},{r['to_ours'][1]:.2f}×"
        good &= r["rss_mb"] <= GOAL_PEAK_RSS_MB
        ok &= good
        goal = f"{goal}{', ' if goal else ''}RSS ≤ {GOAL_PEAK_RSS_MB} MB: {'ok' if good else 'NOT MET'}"
        lines.append(f"{name:46s} {r['wall_s']:7.2f} {r['cpu_s']:7.2f} {r['to_floor'][0]:7.2f},{r['to_floor'][1]:5.2f}"
                     f"   {r['to_reference'][0]:5.2f},{r['to_reference'][1]:5.2f} {r['rss_mb']:7.0f}  {goal}")
        rows.append(r)
    return lines, rows, ok


def commit() -> str:
    proc = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch", type=int, default=20, help="generated submissions for the batch series (0: none)")
    p.add_argument("--no-nbgrader", dest="nbgrader", action="store_false",
                   help="no nbgrader autograde series (it takes half a minute or more per run)")
    p.add_argument("--no-otter", dest="otter", action="store_false",
                   help="no otter run series (Otter-Grader, the bench extra; ~10-20 s per run)")
    p.add_argument("--history", type=Path, default=HISTORY, help="the file each run appends its results to")
    args = p.parse_args(argv)
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="autograder-bench-") as tmp:
        found, cases = series(Path(tmp), args.batch, args.nbgrader, args.otter)
        runs, loads = rounds(found, args.rounds)
    lines, rows, ok = table(runs, loads)
    print("\n".join(lines + [note for _mapped, _total, note in cases.values()]))
    record = {"commit": commit(), "date": datetime.date.today().isoformat(), "cpus": os.cpu_count(),
              "python": sys.version.split()[0], "rounds": args.rounds, "loads": [round(x, 2) for x in loads],
              "series": {r["name"]: {k: (round(v, 3) if isinstance(v, float) else [round(x, 3) for x in v])
                                     for k, v in r.items() if k != "name"} for r in rows}}
    for name, (mapped, total, _note) in cases.items():
        record["series"][name]["cases"] = [mapped, total]
    with args.history.open("a") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
