"""The checks every unit gets, whatever its folder: `python -m autograder check UNIT`.

The rules (docs/AUTHORING.md states them too; each problem's message names the rule):

- the kill matrix: every topic has `topics/<topic>/mutants.yaml` with at least MIN_MUTANTS
  mutants (edits of its solution module that apply) and MIN_ALTERNATIVES valid alternative (a
  whole module); a mutant's `killed_by` and `not_charged_in` name tests of the topic's rubric;
- graded (`graded_problems`, from one `batch --plan` run): every `killed_by` test fails on its
  mutant, every `not_charged_in` test passes, the topic loses points; an alternative keeps full
  marks on its topic and on the topics that call it (the topic's `not_charged_in`);
- the clause tables: every graded function has a clause, every clause a kind, a test of the
  rubric and mutants it catches (among their `killed_by`), every mutant exactly one clause;
- translation: every student-facing text of the unit has its Chinese, and a text the suites
  show students (an `assert` message, a `hint=`, a `CheckFailed`) is written `_("...")`, so
  the catalogues know it;
- no stale derived file: `build --check` for the unit (stubs, notebooks, catalogues).
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import yaml

from autograder.authoring import build
from autograder.unit.model import Unit
from autograder.unit.rubric import SafeLoader

MIN_MUTANTS, MIN_ALTERNATIVES = 3, 1
KINDS = ("input", "output", "shape", "dtype", "mutation", "identity", "warning", "tie", "error")
MUTANTS = "mutants.yaml"
RULE_MATRIX = (f"every topic needs at least {MIN_MUTANTS} mutants and {MIN_ALTERNATIVES} alternative in "
               f"topics/<topic>/{MUTANTS} (docs/AUTHORING.md, Kill matrix)")
RULE_CLAUSES = "every function's docstring clauses are a table of tests and the mutants they catch (Kill matrix)"
RULE_TRANSLATED = "every text students see has its Chinese: translate it in the catalogue, then run build"
RULE_WRAPPED = "a text students see is written _(\"...\") so that the catalogues know it"
RULE_DRIFT = "no derived file is stale"


def load_matrix(unit: Unit) -> dict[str, dict]:
    """topic id -> its mutants.yaml ({} for a topic without one)."""
    out = {}
    for topic in unit.topics:
        path = unit.dirs["topics"] / topic.id / MUTANTS
        out[topic.id] = (yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader) or {}) if path.is_file() else {}
    return out


def _tests(unit: Unit, topic: str) -> set[str]:
    """The topic's test ids as mutants.yaml writes them ("hidden::name")."""
    return {str(t.id) for t in unit.rubric.topic(topic).tests}


def matrix_problems(unit: Unit, matrix: dict[str, dict]) -> list[str]:
    problems = []
    for topic, spec in matrix.items():
        where = f"{topic}: {MUTANTS}"
        mutants, alternatives = spec.get("mutants") or [], spec.get("alternatives") or []
        if len(mutants) < MIN_MUTANTS or len(alternatives) < MIN_ALTERNATIVES:
            problems.append(f"{where}: {len(mutants)} mutant(s) and {len(alternatives)} alternative(s); {RULE_MATRIX}")
        if spec.get("topic", topic) != topic:
            problems.append(f"{where}: `topic: {spec.get('topic')}` is not the folder's topic {topic}")
        module = unit.dirs["reference"] / f"{unit.topic(topic).module}.py"
        source = module.read_text(encoding="utf-8") if module.is_file() else ""
        tests = _tests(unit, topic)
        for m in mutants:
            name = m.get("name")
            for old, _new in m.get("replace") or [["", ""]]:
                if not old or old not in source:
                    problems.append(f"{where}: mutant {name}: its edit {old!r} is not in {module.name}")
            if not m.get("killed_by"):
                problems.append(f"{where}: mutant {name}: no test catches it (`killed_by`); {RULE_MATRIX}")
            unknown = sorted((set(m.get("killed_by") or []) | set(m.get("not_charged_in") or [])) - tests)
            if unknown:
                problems.append(f"{where}: mutant {name}: tests not in the rubric: {unknown}")
        for a in alternatives:
            if not (unit.dirs["topics"] / topic / str(a.get("file"))).is_file():
                problems.append(f"{where}: alternative {a.get('name')}: no file {a.get('file')}")
    return problems


def clause_problems(unit: Unit, matrix: dict[str, dict]) -> list[str]:
    problems = []
    for topic, spec in matrix.items():
        clauses, mutants = spec.get("clauses") or [], {m.get("name"): m for m in spec.get("mutants") or []}
        functions = set(unit.topic(topic).functions)
        covered = {c.get("function") for c in clauses}
        if functions - covered:
            problems.append(f"{topic}: no clause for {sorted(functions - covered)}; {RULE_CLAUSES}")
        if covered - functions:
            problems.append(f"{topic}: clauses of unknown functions {sorted(covered - functions)}")
        for c in clauses:
            where = f"{topic}: {c.get('function')}: {c.get('clause')!r}"
            if not c.get("clause") or c.get("kind") not in KINDS:
                problems.append(f"{where}: a clause needs its text and a kind of {list(KINDS)}")
            if c.get("test") not in _tests(unit, topic):
                problems.append(f"{where}: no test checks it ({c.get('test')!r} is not in the rubric)")
            if not c.get("mutants"):
                problems.append(f"{where}: no mutant breaks it; {RULE_CLAUSES}")
            for name in c.get("mutants") or []:
                if name not in mutants:
                    problems.append(f"{where}: unknown mutant {name}")
                elif c.get("test") not in (mutants[name].get("killed_by") or []):
                    problems.append(f"{where}: {c.get('test')} is not among {name}'s killed_by")
        claimed = [n for c in clauses for n in c.get("mutants") or []]
        twice = sorted({n for n in claimed if claimed.count(n) > 1})
        if twice:
            problems.append(f"{topic}: mutants claimed by two clauses: {twice}")
        if set(mutants) - set(claimed):
            problems.append(f"{topic}: mutants that break no clause: {sorted(set(mutants) - set(claimed))}; {RULE_CLAUSES}")
    return problems


def _is_text(node) -> bool:
    """A literal string (or f-string) holding words, not one made of translated parts only."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parts = [node.value]
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    else:
        return False
    return bool(re.search(r"[A-Za-z]{3,}", "".join(parts)))


def unwrapped_texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of what a suite shows students without `_()`: assert messages, `hint=`
    arguments and `CheckFailed(...)` messages written as plain strings."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        shown: list[ast.expr] = []
        if isinstance(node, ast.Assert) and node.msg is not None:
            shown.append(node.msg)
        elif isinstance(node, ast.Call):
            shown += [kw.value for kw in node.keywords if kw.arg == "hint"]
            if isinstance(node.func, ast.Name) and node.func.id == "CheckFailed" and node.args:
                shown.append(node.args[0])
        found += [(text.lineno, ast.unparse(text)) for text in shown if _is_text(text)]
    return found


def suites(unit: Unit) -> list[Path]:
    return [p for t in unit.topics for p in (unit.test_file(t.id, "public"), unit.test_file(t.id, "hidden"))
            if p.is_file()]


def translation_problems(unit: Unit, plan: build.Plan) -> list[str]:
    problems = [f"{build.shown(po)}: {len(missing)} untranslated, e.g. {missing[0]!r}; {RULE_TRANSLATED}"
                for po, missing in plan.untranslated.items()]
    for path in suites(unit):
        problems += [f"{build.shown(path)}:{line}: {text[:80]} is not translatable; {RULE_WRAPPED}"
                     for line, text in unwrapped_texts(path)]
    return problems


def drift_problems(plan: build.Plan) -> list[str]:
    return [f"stale: {build.shown(p)} (run `{build.FIX}`); {RULE_DRIFT}" for p in build.stale(plan)] + plan.extra


def static_problems(unit: Unit) -> list[str]:
    """Everything `check` finds without grading."""
    matrix = load_matrix(unit)
    plan = build.plan([unit])
    return matrix_problems(unit, matrix) + clause_problems(unit, matrix) + translation_problems(unit, plan) + \
        drift_problems(plan)


def kill_matrix_class(unit: Unit, matrix: dict[str, dict], root: Path) -> dict[str, list[str]]:
    """One folder per mutant (`mutant-<topic>-<name>`) and alternative (`alternative-...`) in
    `root`, each the reference with one module changed; returns the `batch --plan`: mutants on
    their killing and sparing tests, alternatives on their topic and the topics calling it."""
    plan = {}
    for topic, spec in matrix.items():
        module = f"{unit.topic(topic).module}.py"
        callers = list(spec.get("not_charged_in") or [])
        for m in spec.get("mutants") or []:
            sub = _reference_copy(unit, root / f"mutant-{topic}-{m['name']}")
            text = (sub / module).read_text(encoding="utf-8")
            for old, new in m.get("replace") or []:
                text = text.replace(old, new)
            (sub / module).write_text(text, encoding="utf-8")
            plan[sub.name] = [f"{topic}::{t}" for t in [*m.get("killed_by", []), *m.get("not_charged_in", [])]]
        for a in spec.get("alternatives") or []:
            sub = _reference_copy(unit, root / f"alternative-{topic}-{a['name']}")
            shutil.copyfile(unit.dirs["topics"] / topic / a["file"], sub / module)
            plan[sub.name] = [topic, *callers]
    return plan


def _reference_copy(unit: Unit, folder: Path) -> Path:
    folder.mkdir(parents=True)
    for src in unit.dirs["reference"].glob("*.py"):
        shutil.copyfile(src, folder / src.name)
    return folder


def graded_problems(matrix: dict[str, dict], scores: dict[str, dict]) -> list[str]:
    """The kill matrix's rules on the score.json of each folder of `kill_matrix_class`."""
    problems = []
    for topic, spec in matrix.items():
        for m in spec.get("mutants") or []:
            score = scores.get(f"mutant-{topic}-{m['name']}")
            entry = next((t for t in (score or {}).get("topics", []) if t["id"] == topic), None)
            if entry is None:
                problems.append(f"{topic}: mutant {m['name']} was not graded")
                continue
            tests = {t["id"]: t for t in entry["tests"]}
            problems += [f"{topic}: {test} does not catch mutant {m['name']} ({m.get('misconception')}); {RULE_MATRIX}"
                         for test in m.get("killed_by", []) if tests.get(test, {}).get("outcome") == "passed"]
            problems += [f"{topic}: mutant {m['name']} is charged in {test}, where it must cost nothing"
                         for test in m.get("not_charged_in", []) if tests.get(test, {}).get("outcome") != "passed"]
            if entry["earned"] >= entry["possible"]:
                problems.append(f"{topic}: mutant {m['name']} got full marks")
        for a in spec.get("alternatives") or []:
            score = scores.get(f"alternative-{topic}-{a['name']}") or {}
            lost = [f"{t['id']}: {test['id']}" for t in score.get("topics", []) for test in t["tests"]
                    if test["outcome"] != "passed"]
            if not score or lost:
                problems.append(f"{topic}: the valid alternative {a['name']} lost points: {lost or 'not graded'}")
    return problems
