"""Benchmarks of the grader (`make bench`): one table, every row measured in the same run.

    python scripts/bench.py [--runs 5] [--batch 200] [--json .bench/results.json]

Each row: a warm-up run, then `--runs` timed runs; median and min–max wall time (for the
batch rows, of submissions per second), and the peak RSS of the process tree (the grader
and the workers it waited for, from wait4).
Rows: grading the reference and the stubs (all topics, public + hidden); the floor
(`python -c "import numpy"`, an empty pytest run); `nbgrader autograde` of the same
reference in the generated course (course/: seven notebooks, one submission, the
notebooks' shared grading emptied before each run) and its ratio to grading the
reference; `batch` over `--batch` generated
submissions (the reference, the stubs and the kill matrix's mutants, in turn) with
`--jobs 1` and `--jobs 2`, in submissions per second. Goals are printed beside the
numbers and the exit status says whether they hold; no test ever asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from autograder.unit.load import load_unit

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "solutions" / "rnn_prehistory"
STUBS = REPO / "assignments" / "rnn_prehistory"
GOALS = {"grade reference": 1.0, "batch --jobs 2": 4.0}      # seconds; submissions per second
GOAL_PEAK_RSS_MB = 300
GOAL_RATIO = 10.0            # nbgrader autograde of the same exercises / grade of the reference
GRADE = [sys.executable, "-m", "autograder", "grade"]


def timed(cmd: list[str], cwd: Path = REPO, env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MB of the process tree) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1, 5):      # 5: pytest ran no test (the floor)
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024


def row(name: str, cmd: list[str], runs: int, cwd: Path = REPO, env: dict | None = None, before=None) -> dict:
    """`before()` runs ahead of every run, untimed (e.g. to empty a cache the run would reuse)."""
    def one():
        if before:
            before()
        return timed(cmd, cwd, env)

    one()                                         # warm-up: file cache, bytecode
    walls, peaks = zip(*(one() for _ in range(runs)))
    return {"name": name, "median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
            "peak_rss_mb": max(peaks), "runs": runs}


NBGRADER = Path(sys.executable).with_name("nbgrader")


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
                   env=nbgrader_env(tmp), check=True, capture_output=True)
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


def nbgrader_env(tmp: Path) -> dict:
    # nbgrader finds alembic and the kernel on PATH; the notebooks share one grading through
    # TMPDIR (autograder/notebook.py), which each run starts empty.
    return {**os.environ, "HOME": str(tmp / "home"), "TMPDIR": str(tmp / "nbtmp"), "LANGUAGE": "en",
            "PATH": f"{NBGRADER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader_row(tmp: Path, runs: int) -> dict:
    course = nbgrader_course(tmp)
    if course is None:
        return {"name": "nbgrader autograde", "note": "no nbgrader or no generated course (make nbgrader)"}

    def fresh_tmp():
        shutil.rmtree(tmp / "nbtmp", ignore_errors=True)
        (tmp / "nbtmp").mkdir()

    return row("nbgrader autograde (one notebook per topic)", [str(NBGRADER), "autograde", "rnn_prehistory", "--force"],
               runs, cwd=course, env=nbgrader_env(tmp), before=fresh_tmp)


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


def batch_row(jobs: int, root: Path, warm_up: Path, out: Path, size: int, runs: int) -> dict:
    """`batch --jobs N` over the generated class: a warm-up over a small class, then `runs`
    timed runs (each into an empty report folder); submissions per second of each run."""
    def one(folder: Path) -> tuple[float, float]:
        shutil.rmtree(out, ignore_errors=True)
        return timed([sys.executable, "-m", "autograder", "batch", str(folder), "--out", str(out),
                      "--jobs", str(jobs), "--seed", "1"])

    one(warm_up)
    walls, peaks = zip(*(one(root) for _ in range(runs)))
    rates = sorted(size / wall for wall in walls)
    return {"name": f"batch --jobs {jobs}", "submissions": size, "runs": runs, "per_second": statistics.median(rates),
            "min_per_second": rates[0], "max_per_second": rates[-1], "wall_s": statistics.median(walls),
            "peak_rss_mb": max(peaks)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--batch", type=int, default=200, help="generated submissions for the batch rows (0: skip)")
    p.add_argument("--json", type=Path, default=REPO / ".bench" / "results.json")
    p.add_argument("--no-nbgrader", dest="nbgrader", action="store_false",
                   help="skip the nbgrader autograde row (it takes a minute or more per run)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="autograder-bench-") as tmp:
        out = Path(tmp) / "out"
        (Path(tmp) / "no-tests").mkdir()
        rows = [row("grade reference", GRADE + [str(SOLUTIONS), "--out", str(out), "--quiet"], args.runs),
                row("grade stubs", GRADE + [str(STUBS), "--out", str(out), "--quiet"], args.runs),
                row("floor: python -c 'import numpy'", [sys.executable, "-c", "import numpy"], args.runs),
                row("floor: empty pytest", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                            str(Path(tmp) / "no-tests")], args.runs)]
        nbgrader = nbgrader_row(Path(tmp), args.runs) if args.nbgrader else {
            "name": "nbgrader autograde", "note": "skipped (--no-nbgrader)"}
        if args.batch:
            root = generated_class(Path(tmp) / "class", args.batch)
            warm_up = generated_class(Path(tmp) / "warm-up", 10)
            rows += [batch_row(jobs, root, warm_up, Path(tmp) / f"batch{jobs}", args.batch, args.runs)
                     for jobs in (1, 2)]
    print(f"{'what':36s} {'median':>8s} {'min–max':>14s} {'peak RSS':>9s}  goal")
    ok = True
    for r in rows:
        if "median_s" in r:
            goal = GOALS.get(r["name"])
            good = goal is None or r["median_s"] <= goal
            print(f"{r['name']:36s} {r['median_s']:7.2f}s {r['min_s']:6.2f}–{r['max_s']:5.2f}s "
                  f"{r['peak_rss_mb']:7.0f}MB  " + (f"≤ {goal} s: {'ok' if good else 'NOT MET'}" if goal else ""))
        else:
            goal = GOALS.get(r["name"])
            good = goal is None or r["per_second"] >= goal
            print(f"{r['name']:36s} {r['per_second']:6.2f}/s {r['min_per_second']:5.2f}–{r['max_per_second']:4.2f}/s "
                  f"{r['peak_rss_mb']:7.0f}MB  " + (f"≥ {goal}/s: {'ok' if good else 'NOT MET'}" if goal else "")
                  + f"   ({r['submissions']} submissions, median {r['wall_s']:.0f} s)")
        ok &= good and r["peak_rss_mb"] <= GOAL_PEAK_RSS_MB
    if "median_s" in nbgrader:
        ratio = nbgrader["median_s"] / rows[0]["median_s"]
        nbgrader["ratio_to_grade_reference"] = ratio
        good = ratio >= GOAL_RATIO
        ok &= good
        print(f"{nbgrader['name']:36s} {nbgrader['median_s']:7.2f}s {nbgrader['min_s']:6.2f}–{nbgrader['max_s']:5.2f}s "
              f"{nbgrader['peak_rss_mb']:7.0f}MB  grade reference is {ratio:.1f}× faster "
              f"(≥ {GOAL_RATIO:g}×: {'ok' if good else 'NOT MET'})")
    else:
        print(f"{nbgrader['name']:36s} {'—':>8s}  ({nbgrader['note']})")
    print(f"peak RSS goal ≤ {GOAL_PEAK_RSS_MB} MB per process tree")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rows": rows + [nbgrader], "cpus": os.cpu_count(),
                                     "python": sys.version.split()[0]}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
