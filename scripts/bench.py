"""Benchmarks of the grader (`make bench`): wall time and peak memory of real grading runs.

Measured, never asserted by a test: the goals below are printed next to the numbers and
the exit status says whether they hold, so a regression is visible without a flaky test.

    python scripts/bench.py [--runs 5] [--json .bench/results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = {
    "reference": REPO / "solutions" / "rnn_prehistory",
    "stubs": REPO / "assignments" / "rnn_prehistory",
}
# Goals for one full grading run (all topics, public + hidden), wall clock on 2 cores.
GOALS_S = {"reference": 3.0, "stubs": 3.0}
GOAL_PEAK_RSS_MB = 400


def slowest_tests(junit: Path, count: int = 5) -> list[tuple[float, str]]:
    import xml.etree.ElementTree as ET

    cases = ET.parse(junit).getroot().iter("testcase")
    return sorted(((float(c.get("time", 0)), f"{c.get('classname')} {c.get('name')}") for c in cases),
                  reverse=True)[:count]


def run_once(submission: Path) -> tuple[float, float, dict, list]:
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(submission), "--out", out,
                               "--quiet"], cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - start
        peak_kb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        if proc.returncode != 0:
            raise SystemExit(f"grading {submission} failed:\n{proc.stderr}")
        score = json.loads((Path(out) / "score.json").read_text())
        slowest = slowest_tests(Path(out) / "junit.xml")
    return wall, peak_kb / 1024, score, slowest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", type=Path, default=REPO / ".bench" / "results.json")
    args = p.parse_args(argv)
    results, ok = {}, True
    for name, sub in CASES.items():
        walls, rss, inner = [], [], []
        for _ in range(args.runs):
            wall, peak, score, slowest = run_once(sub)
            walls.append(wall)
            rss.append(peak)
            inner.append(score["duration_s"])
        med = statistics.median(walls)
        results[name] = {"wall_s": walls, "median_wall_s": med, "median_inside_grader_s": statistics.median(inner),
                         "peak_rss_mb": max(rss), "score": f"{score['earned']:g}/{score['possible']:g}"}
        good = med <= GOALS_S[name] and max(rss) <= GOAL_PEAK_RSS_MB
        ok &= good
        print(f"{name:10s} median {med:.2f} s over {args.runs} runs (min {min(walls):.2f}, max {max(walls):.2f}; "
              f"inside the grader {statistics.median(inner):.2f} s), peak RSS {max(rss):.0f} MB, "
              f"score {results[name]['score']}  [{'ok' if good else 'OVER GOAL'}: {GOALS_S[name]} s, "
              f"{GOAL_PEAK_RSS_MB} MB]")
        results[name]["slowest_tests_last_run"] = slowest
        for seconds, test in slowest:
            print(f"           {seconds:6.3f} s  {test}")
    results["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
