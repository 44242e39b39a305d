"""Students drawn at function granularity: every function of the unit independently the
reference (the solution's), the stub, or one of the kill matrix's mutants of it.

A mutant (topics/<topic>/mutants.yaml) is a list of text replacements on the solution
module; here it is applied to the whole module and the function it changes first is taken
from the mutated module (`ast`), so that it changes that one function only. A mutant that
changes a private helper of the reference (`_backward_range`) is given to the first function
that calls the helper, with a copy of the mutated helper of its own (renamed), so that the
other callers keep the reference's. Each module is the stub's module-level code (docstring,
imports, constants) with every function replaced by the drawn one, and the reference's
private helpers after them.

A draw is `random.Random(seed)`: `draw(seed)` is the same student on every machine."""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from helpers import MATRIX, SOLUTIONS, STUBS, UNIT

REFERENCE, STUB = "reference", "stub"


def _functions(text: str) -> dict[str, tuple[int, int]]:
    """name -> (first line, end line) of each top-level function (decorators included), 0-based, end exclusive."""
    return {n.name: ((n.decorator_list[0].lineno if n.decorator_list else n.lineno) - 1, n.end_lineno or n.lineno)
            for n in ast.parse(text).body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _sources(text: str) -> dict[str, str]:
    lines = text.splitlines(keepends=True)
    return {name: "".join(lines[a:b]) for name, (a, b) in _functions(text).items()}


def _mutated(text: str, replace) -> str:
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class Module:
    name: str
    topic: str
    stub: str                                  # the stub's text
    functions: tuple[str, ...]                 # the stub's functions, in file order
    graded: tuple[str, ...]                    # the topic's graded functions (topic.yaml)
    todo: tuple[str, ...]                      # those the stub leaves to do (raise NotImplementedError)
    variants: dict[str, dict[str, str]]        # function -> variant -> its source
    helpers: str                               # the reference's private helpers (source)


@cache
def modules() -> dict[str, Module]:
    out = {}
    for topic in UNIT.topics:
        stub = (STUBS / f"{topic.module}.py").read_text()
        ref = (SOLUTIONS / f"{topic.module}.py").read_text()
        stubs, refs = _sources(stub), _sources(ref)
        private = {name: src for name, src in refs.items() if name not in stubs}
        variants = {name: {REFERENCE: refs[name], STUB: src} for name, src in stubs.items()}
        for m in MATRIX[topic.id].get("mutants", []):
            mine = _sources(_mutated(ref, m["replace"]))
            changed = [name for name in refs if mine.get(name) != refs[name]]
            first = changed[0]
            if first in variants:
                variants[first][f"mutant:{m['name']}"] = mine[first]
                continue
            # a private helper: the first function calling it gets a mutated copy of its own
            caller = next(name for name in stubs if re.search(rf"\b{first}\(", refs[name]))
            copy = f"{first}_{m['name']}"
            variants[caller][f"mutant:{m['name']}"] = (
                re.sub(rf"\b{first}\(", f"{copy}(", refs[caller]) + "\n\n"
                + re.sub(rf"\bdef {first}\(", f"def {copy}(", mine[first]))
        todo = tuple(name for name, src in stubs.items() if "NotImplementedError" in src)
        out[topic.module] = Module(topic.module, topic.id, stub, tuple(stubs), tuple(topic.functions), todo,
                                   variants, "\n\n".join(private.values()))
    return out


def compose(module: Module, chosen: dict[str, str]) -> str:
    """The module text: the stub with each function replaced by its chosen variant."""
    lines = module.stub.splitlines(keepends=True)
    spans = _functions(module.stub)
    out, at = [], 0
    for name in module.functions:
        a, b = spans[name]
        out += lines[at:a]
        out.append(module.variants[name][chosen.get(name, STUB)])
        at = b
    out += lines[at:]
    text = "".join(out)
    if module.helpers:
        text = text.rstrip("\n") + "\n\n\n" + module.helpers
    return text


# How a student treats a topic: untouched (every function the stub), finished (the reference,
# now and then with a typical mistake), or in progress (each function any of the three).
PROFILES = {"untouched": {STUB: 1.0}, "finished": {REFERENCE: 0.75, "mutant": 0.25},
            "in progress": {REFERENCE: 0.4, STUB: 0.3, "mutant": 0.3}}
PROFILE_WEIGHTS = {"untouched": 0.25, "finished": 0.3, "in progress": 0.45}


@dataclass
class Student:
    seed: int
    choices: dict[str, dict[str, str]] = field(default_factory=dict)    # module -> function -> variant

    @property
    def name(self) -> str:
        return f"seed-{self.seed}"

    def files(self) -> dict[str, str]:
        return {f"{m}.py": compose(modules()[m], chosen) for m, chosen in self.choices.items()}

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files().items():
            (folder / name).write_text(text)
        return folder

    def stubbed(self, module: str) -> list[str]:
        """The functions of `module` the student left as the stub raises them (in file order)."""
        m = modules()[module]
        return [f for f in m.todo if self.choices[module][f] == STUB]

    def untouched(self, topic: str) -> bool:
        """Every graded function of the topic is the stub's."""
        m = next(m for m in modules().values() if m.topic == topic)
        return all(self.choices[m.name][f] == STUB for f in m.graded if f in m.todo)

    def finished(self, topic: str) -> bool:
        m = next(m for m in modules().values() if m.topic == topic)
        return all(v == REFERENCE for v in self.choices[m.name].values())

    def describe(self) -> str:
        """One line per module: the functions that are not the reference and what they are."""
        rows = []
        for m, chosen in self.choices.items():
            other = {f: v for f, v in chosen.items() if v != REFERENCE}
            rows.append(f"{m}: " + (", ".join(f"{f}={v}" for f, v in other.items()) or "reference"))
        return f"{self.name}\n  " + "\n  ".join(rows)


def draw(seed: int) -> Student:
    rng = random.Random(seed)
    student = Student(seed)
    for name, m in modules().items():
        profile = rng.choices(list(PROFILE_WEIGHTS), weights=list(PROFILE_WEIGHTS.values()))[0]
        weights = PROFILES[profile]
        chosen = {}
        for function in m.functions:
            kind = rng.choices(list(weights), weights=list(weights.values()))[0]
            mutants = sorted(v for v in m.variants[function] if v.startswith("mutant:"))
            if kind == "mutant":
                kind = rng.choice(mutants) if mutants else REFERENCE
            if function not in m.todo:        # given in the stub (a helper such as sigmoid): the stub's is the reference's
                kind = kind if kind.startswith("mutant:") else REFERENCE
            chosen[function] = kind
        student.choices[name] = chosen
    return student
