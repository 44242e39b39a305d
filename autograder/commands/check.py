"""`python -m autograder check UNIT [--no-grading]`: the checks every unit gets
(autograder.authoring.unit_checks): its kill matrix (at least 3 mutants and one alternative per
topic, graded in one `batch --plan` run: every mutant caught, every alternative at full marks),
its clause tables, its translations (every text students see, translated and written `_()`),
and no stale derived file (`build --check`). Exit 1 naming each problem and its rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.authoring import unit_checks
from autograder.unit.load import load_unit


def grade_kill_matrix(unit, matrix: dict, jobs: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="autograder-check-") as tmp:
        root, out = Path(tmp) / "class", Path(tmp) / "reports"
        root.mkdir()
        plan = unit_checks.kill_matrix_class(unit, matrix, root)
        if not plan:
            return []
        (Path(tmp) / "plan.json").write_text(json.dumps(plan))
        proc = subprocess.run([sys.executable, "-m", "autograder", "batch", str(root), "--unit", str(unit.path),
                               "--out", str(out), "--plan", str(Path(tmp) / "plan.json"), "--jobs", str(jobs)],
                              capture_output=True, text=True, env={**os.environ, "LANGUAGE": "en"})
        if proc.returncode != 0:
            return [f"the kill matrix could not be graded (batch exit {proc.returncode}): {proc.stderr[-1500:]}"]
        scores = {d.name: json.loads((d / "score.json").read_text(encoding="utf-8"))
                  for d in (out / "students").iterdir() if (d / "score.json").is_file()}
        return unit_checks.graded_problems(matrix, scores)


def run(args) -> int:
    unit = load_unit(args.unit)
    problems = unit_checks.static_problems(unit)
    matrix = unit_checks.load_matrix(unit)
    graded = not args.no_grading and not any(RULE in p for p in problems for RULE in [unit_checks.RULE_MATRIX])
    if graded:
        problems += grade_kill_matrix(unit, matrix, args.jobs)
    for problem in problems:
        print(problem)
    cases = sum(len(s.get("mutants") or []) + len(s.get("alternatives") or []) for s in matrix.values())
    what = f"{cases} kill-matrix cases graded" if graded else "the kill matrix not graded"
    print(f"check {unit.name}: {len(problems)} problem(s) ({len(unit.topics)} topic(s), {what})")
    return 1 if problems else 0
