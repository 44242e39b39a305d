"""The docstrings' procedure on every seed of the pool, computed once and kept in a table.

The hidden suite compares a student's lab figures with the procedure's figures on the same
seed (fault_lab.Procedure), for the normal run and for each broken run. Those figures depend
only on the seed, the reference's modules, the broken primitives and numpy's generator, and
the lab's seed is one of SEED_POOL's 64: computing them in every grading cost ~0.2 s of the
grader's CPU, a tenth of a reference grading. `make procedure` writes them to
procedure_figures.json, stamped with what they depend on; a grading whose stamp differs (an
edited solution, another numpy) computes them as before, so a stale table costs time, never a
wrong grade. tests/content/test_procedure_table.py fails when the table is stale, and checks
its figures against a fresh computation on every BLAS kernel it runs under.

Usage: python -m autograder.units.rnn_prehistory.lab.procedure_table [--check]
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from functools import cache
from pathlib import Path

import numpy as np

from autograder.units.rnn_prehistory.lab import broken_primitives, fault_lab

TABLE = Path(__file__).with_name("procedure_figures.json")


def stamp(reference) -> str:
    """What the figures depend on: the reference's lab and bptt modules, the broken primitives,
    the experiments' order and the broken runs, the pool, and numpy's version (its Generator
    streams are not promised to stay the same across versions)."""
    digest = hashlib.sha256()
    for path in (reference.fault_injection.__file__, reference.bptt.__file__, broken_primitives.__file__):
        digest.update(Path(path).read_bytes().replace(b"\r\n", b"\n"))
    layout = [list(fault_lab.PROCEDURE.items()), sorted((name, keys) for name, (_, keys) in fault_lab.broken_runs().items()),
              list(fault_lab.SEED_POOL), np.__version__]
    digest.update(json.dumps(layout).encode())
    return digest.hexdigest()


def _plain(figures: dict) -> dict:
    return {k: v if isinstance(v, (bool, int, str)) else float(v) for k, v in figures.items()}


def compute(reference, seed: int) -> dict:
    """One row: the normal run's figures and each broken run's, as the suite asks for them."""
    procedure = fault_lab.Procedure(reference, seed)
    return {"figures": _plain(procedure.figures),
            "broken": {name: _plain(procedure.broken(replacements, keys))
                       for name, (replacements, keys) in fault_lab.broken_runs().items()}}


@cache
def _rows(table: Path, expected_stamp: str) -> dict:
    try:
        data = json.loads(table.read_text())
    except (OSError, ValueError):
        return {}
    return data.get("rows", {}) if data.get("stamp") == expected_stamp else {}


class TabledProcedure:
    """fault_lab.Procedure's `figures` and `broken()`, read from the table when it is current
    for this seed, computed otherwise."""

    def __init__(self, reference, seed: int, table: Path = TABLE):
        row: dict | None = _rows(table, stamp(reference)).get(str(seed))
        live = None if row else fault_lab.Procedure(reference, seed)
        self._row, self._live = row, live
        self.figures: dict = live.figures if live is not None else row["figures"] if row else {}

    def broken(self, replacements: dict, keys) -> dict:
        if self._live is not None:
            return self._live.broken(replacements, keys)
        assert self._row is not None
        return self._row["broken"][fault_lab.run_name(replacements)]


def _same(a, b, rtol: float) -> bool:
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)):
        return a == b
    a, b = float(a), float(b)
    return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rtol * max(abs(a), abs(b))


def differences(row: dict, fresh: dict, rtol: float) -> list[str]:
    """Where two rows differ by more than `rtol` (relative), figure by figure; but for the
    figures the suite never compares with the procedure's (NOT_REPRODUCIBLE: the end of 100
    chaotic SGD steps moves by 0.3 % from one BLAS kernel to another)."""
    pairs = [("figures", row["figures"], fresh["figures"])]
    pairs += [(name, row["broken"].get(name, {}), figures) for name, figures in fresh["broken"].items()]
    return [f"{run}: {key} = {got!r} in the table, {want!r} now" for run, got_figures, want_figures in pairs
            for key, want in want_figures.items() if key not in fault_lab.NOT_REPRODUCIBLE
            for got in [got_figures.get(key)] if got is None or not _same(got, want, rtol)]


def write(reference, table: Path = TABLE) -> None:
    rows = {str(seed): compute(reference, seed) for seed in fault_lab.SEED_POOL}
    lines = [f"{json.dumps(seed)}: {json.dumps(row, sort_keys=True)}" for seed, row in rows.items()]   # a seed a line
    table.write_text(f'{{"stamp": {json.dumps(stamp(reference))}, "rows": {{\n' + ",\n".join(lines) + "\n}}\n")


def main(argv: list[str]) -> int:
    # Here, not at the top: a grading imports this module and needs neither (start-up speed).
    from autograder.grading.plugin import ReferenceModules  # the grader's own loader of the solutions
    from autograder.unit.load import load_unit

    unit = load_unit(Path(__file__).parents[1])
    reference = ReferenceModules(unit.dirs["reference"], unit.modules)
    if "--check" in argv:
        current = _rows(TABLE, stamp(reference))
        print("procedure table: current" if current else "procedure table: stale (run make procedure)")
        return 0 if current else 1
    write(reference)
    print(f"wrote {TABLE.name}: {len(fault_lab.SEED_POOL)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
