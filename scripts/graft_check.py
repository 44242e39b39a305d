"""The graft check of a student release: no function of the public tests earns a hidden point.

    python scripts/graft_check.py dist/student [--unit NAME|PATH]   # exit 1 on a leak

The text leak check (`scripts/leak_check.py`) finds the reference's lines; this finds its
behaviour. A public test that computes what a graded function returns (a plain loop as
the expected value) hands the student a working implementation to paste in. So every
function defined in the release's public tests is grafted in place of every stub whose
signature it accepts (all of them at once, in one submission), the submissions are graded
on the hidden suites through the grader's own `batch` command, and any hidden test that
gives one of them more than it gives the untouched stubs is a leak.

A graft is called with the stub's arguments as they come (the first ones, as many as the
function takes; a stub's trailing argument with a default may be left out) and, when that
raises, once per sequence of the batch (the leading arguments sliced along axis 0, the
results stacked): the public tests' loops take one sequence at a time. Functions whose
stub sets do not meet share a submission, so the number of gradings stays small.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STUB_RAISE = re.compile(r'raise NotImplementedError\("(\w+): fill in the TODO above"\)')
BASELINE = "stubs"

# Appended to a grafted module: the public test file's statements, run one by one in a
# namespace of their own (one that needs the grader, as `from autograder... import` may in
# the worker, is skipped), and the call that adapts a stub's arguments to the graft.
RUNTIME = '''

# ---- graft check: the statements of public test files, and the call of one of their functions
import numpy as _graft_np

_GRAFTS = {}
for _graft_file, _graft_statements in %(sources)r.items():
    _GRAFTS[_graft_file] = {"_": str, "__name__": "public_test"}
    for _graft_statement in _graft_statements:
        try:
            exec(_graft_statement, _GRAFTS[_graft_file])
        except BaseException:
            pass


def _graft_stack(results):
    if isinstance(results[0], tuple):
        return tuple(_graft_stack(list(column)) for column in zip(*results))
    try:
        return _graft_np.stack([_graft_np.asarray(r) for r in results])
    except Exception:
        return results


def _graft_call(test_file, name, args):
    function = _GRAFTS[test_file][name]
    try:
        return function(*args)
    except Exception as error:
        first_error = error
    n = len(args[0]) if isinstance(args[0], _graft_np.ndarray) and args[0].ndim >= 2 else 0
    lead = 0
    while lead < len(args) and isinstance(args[lead], _graft_np.ndarray) and args[lead].ndim >= 1 \\
            and len(args[lead]) == n:
        lead += 1
    for k in range(1, lead + 1):
        try:
            return _graft_stack([function(*[a[i] for a in args[:k]], *args[k:]) for i in range(n)])
        except Exception:
            pass
    raise first_error
'''


def _positional(args: ast.arguments) -> tuple[list[str], int]:
    """The positional parameters' names and how many of them have no default."""
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    return names, len(names) - len(args.defaults)


def arity(function: ast.FunctionDef, stub: ast.FunctionDef) -> int | None:
    """How many of the stub's leading arguments the function takes, or None if it cannot take them."""
    if any(d is None for d in function.args.kw_defaults):
        return None                                 # a keyword-only parameter without a default
    params, required = _positional(function.args)
    stub_params, stub_required = _positional(stub.args)
    taken = len(stub_params) if function.args.vararg else min(len(stub_params), len(params))
    return taken if taken >= max(required, stub_required) else None


def public_functions(public: Path) -> dict[str, list[ast.FunctionDef]]:
    """test file name -> the functions it defines at its top level, but its tests: those take the
    modules as arguments and return None, which no graded function returns (nor conftest.py's
    hooks, which take pytest's objects)."""
    return {f.name: [n for n in ast.parse(f.read_text(encoding="utf-8")).body
                     if isinstance(n, ast.FunctionDef) and not n.name.startswith("test_")]
            for f in sorted(public.glob("test_*.py"))}


def stub_functions(stubs: Path) -> dict[str, dict[str, ast.FunctionDef]]:
    """module file name -> {name: def} of its stubbed functions (those that raise the stub's error)."""
    out = {}
    for f in sorted(stubs.glob("*.py")):
        text = f.read_text(encoding="utf-8")
        stubbed = set(STUB_RAISE.findall(text))
        out[f.name] = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name in stubbed}
    return out


def grafted_module(stub_text: str, grafts: dict[str, tuple[str, str, list[str]]], sources: dict[str, str]) -> str:
    """The stub module with each stub of `grafts` ({stub: (test file, function, the arguments
    it is given)}) returning the function's result; `sources`: {test file: its text}."""
    for stub, (test_file, function, passed) in grafts.items():
        call = f'return _graft_call({test_file!r}, {function!r}, ({"".join(p + ", " for p in passed)}))'
        stub_text = stub_text.replace(f'raise NotImplementedError("{stub}: fill in the TODO above")', call)
    statements = {name: [ast.get_source_segment(text, node) for node in ast.parse(text).body]
                  for name, text in sources.items()}
    return stub_text + RUNTIME % {"sources": statements}


def build(release: Path, unit, root: Path) -> tuple[dict, dict]:
    """The graft submissions under `root` (and the untouched stubs, `BASELINE`): the batch
    plan ({submission: topics}) and what each grafted ({submission: ["test_x.py::f -> module.stub", ...]})."""
    stubs_dir = release / unit.stubs
    stubs = stub_functions(stubs_dir)
    topics_of = {}
    for topic in unit.topics:
        topics_of.setdefault(f"{topic.module}.py", []).append(topic.id)
    candidates, seen = [], set()                    # (test file, function, {(module, stub): arity})
    for test_file, functions in public_functions(stubs_dir / "tests").items():
        for function in functions:
            if ast.dump(function) in seen:          # the same helper in another file (`fresh`)
                continue
            seen.add(ast.dump(function))
            fits = {(module, name): taken for module, defs in stubs.items() for name, stub in defs.items()
                    if (taken := arity(function, stub)) is not None}
            if fits:
                candidates.append((test_file, function.name, fits))
    submissions: list[list] = []                    # greedy: a function joins the first submission it shares no stub with
    for candidate in candidates:
        for group in submissions:
            if not any(candidate[2].keys() & other[2].keys() for other in group):
                group.append(candidate)
                break
        else:
            submissions.append([candidate])
    plan, grafted = {BASELINE: sorted({t for ts in topics_of.values() for t in ts})}, {}
    (root / BASELINE).mkdir(parents=True)
    for module in stubs:
        (root / BASELINE / module).write_text((stubs_dir / module).read_text(encoding="utf-8"), encoding="utf-8")
    for i, group in enumerate(submissions):
        name = f"graft-{i:02d}"
        folder = root / name
        folder.mkdir()
        per_module: dict[str, dict] = {}
        for test_file, function, fits in group:
            for (module, stub), taken in fits.items():
                per_module.setdefault(module, {})[stub] = (test_file, function, taken)
        for module in stubs:
            text = (stubs_dir / module).read_text(encoding="utf-8")
            if module in per_module:
                grafts = {stub: (tf, function, _positional(stubs[module][stub].args)[0][:taken])
                          for stub, (tf, function, taken) in per_module[module].items()}
                sources = {tf: (stubs_dir / "tests" / tf).read_text(encoding="utf-8")
                           for tf in sorted({g[0] for g in grafts.values()})}
                text = grafted_module(text, grafts, sources)
            (folder / module).write_text(text, encoding="utf-8")
        plan[name] = sorted({t for module in per_module for t in topics_of.get(module, [])})
        grafted[name] = [f"{tf}::{function} -> {module[:-3]}.{stub}" for module, grafts in sorted(per_module.items())
                         for stub, (tf, function, _t) in sorted(grafts.items())]
    return plan, grafted


def hidden_earned(score: dict) -> dict:
    """TopicTestId -> points earned, of every hidden test of a score.json."""
    from autograder.unit.test_ids import TestId, TopicTestId  # imported as main() imports the grader
    earned = {TopicTestId(t["id"], TestId.parse(x["id"])): x["earned"] for t in score["topics"] for x in t["tests"]}
    return {test: points for test, points in earned.items() if test.test.hidden}


def leaks(scores: dict[str, dict], grafted: dict, unit) -> list[str]:
    """The hidden tests a graft submission earns more on than the untouched stubs, and what it
    grafted into the modules of their topics."""
    baseline = hidden_earned(scores[BASELINE])
    problems = []
    for name, what in grafted.items():
        gained = sorted((test for test, earned in hidden_earned(scores[name]).items()
                         if earned > baseline.get(test, 0.0) + 1e-9), key=str)
        if gained:
            modules = {unit.topic(test.topic).module for test in gained}
            suspects = [w for w in what if w.split(" -> ")[1].split(".")[0] in modules]
            problems.append(f"{name} earns hidden points on {[str(t) for t in gained]} grafting {suspects}")
    return problems


def scores_of(out: Path) -> dict[str, dict]:
    return {d.name: json.loads((d / "score.json").read_text()) for d in (out / "students").iterdir() if d.is_dir()}


def run_check(release: Path, unit, workdir: Path, jobs: int = 2, unit_name: str | None = None) -> tuple[list[str], int]:
    """Build the graft submissions of `release` in `workdir`, grade them with `python -m
    autograder batch --suite hidden`, and return (the leaks, how many graft submissions)."""
    root, out, plan_file = workdir / "class", workdir / "out", workdir / "plan.json"
    plan, grafted = build(release, unit, root)
    plan_file.write_text(json.dumps(plan))
    proc = subprocess.run([sys.executable, "-m", "autograder", "batch", str(root), "--out", str(out), "--suite", "hidden",
                           "--jobs", str(jobs), "--plan", str(plan_file),
                           *(["--unit", unit_name] if unit_name else [])],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"the graft submissions could not be graded:\n{proc.stdout}{proc.stderr}")
    return leaks(scores_of(out), grafted, unit), len(grafted)


def main(argv=None) -> int:
    sys.path.insert(0, str(REPO))
    from autograder.unit.load import load_unit

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", type=Path)
    p.add_argument("--unit", "--assignment", dest="unit", default=None)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        problems, grafts = run_check(args.release, load_unit(args.unit), Path(tmp), args.jobs, args.unit)
    for problem in problems:
        print(f"graft leak: {problem}")
    print(f"graft check of {args.release}: {grafts} graft submission(s), "
          f"{'FAILED, ' + str(len(problems)) + ' leak(s)' if problems else 'clean'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
