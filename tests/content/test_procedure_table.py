"""The lab's procedure table (lab/procedure_figures.json, written by `make procedure`) is
current and says what the procedure computes on this machine; a stale one is not read.

The hidden suite judges a student's lab figures against the table at SAME_SEED_RTOL (1e-5).
Valid labs differ from the reference by at most 1.3e-12 (relative) over the pool
(lab/fault_lab.py), and the table is checked against a fresh run of the procedure at
TABLE_RTOL, a thousand times that spread and ten thousand times below SAME_SEED_RTOL: a table
made with another BLAS kernel (FMA or not, another summation order) passes, a table of other
draws or another reference does not (measured: every seed of the pool within 1e-9 under the
Prescott, Sandybridge and Haswell kernels of a table made on another; the two figures the suite
never compares, NOT_REPRODUCIBLE, are left out: the end of 100 chaotic SGD steps moves by 0.3 %
between kernels). make test checks three seeds (the first, the last and one between them),
make sweep the whole pool.
"""

from __future__ import annotations

import json

import pytest
from helpers import SOLUTIONS, UNIT

from autograder.grading.plugin import ReferenceModules
from autograder.units.rnn_prehistory.lab import fault_lab, procedure_table

TABLE_RTOL = 1e-9
SOME_SEEDS = (fault_lab.SEED_POOL[0], fault_lab.SEED_POOL[len(fault_lab.SEED_POOL) // 2], fault_lab.SEED_POOL[-1])


@pytest.fixture(scope="module")
def reference():
    return ReferenceModules(SOLUTIONS, UNIT.modules)


@pytest.fixture(scope="module")
def table():
    return json.loads(procedure_table.TABLE.read_text())


def test_the_table_is_current_for_the_reference_and_the_pool(reference, table):
    assert table["stamp"] == procedure_table.stamp(reference), \
        "lab/procedure_figures.json is stale (the solution, a broken primitive, the pool or numpy changed): make procedure"
    assert sorted(map(int, table["rows"])) == sorted(fault_lab.SEED_POOL)


def _check_seeds(reference, table, seeds):
    for seed in seeds:
        fresh = procedure_table.compute(reference, seed)
        assert not procedure_table.differences(table["rows"][str(seed)], fresh, TABLE_RTOL), seed
        assert set(fresh["broken"]) == set(fault_lab.broken_runs())


def test_the_tables_figures_are_the_procedures_on_some_seeds(reference, table):
    _check_seeds(reference, table, SOME_SEEDS)


@pytest.mark.sweep
def test_the_tables_figures_are_the_procedures_on_every_seed(reference, table):
    _check_seeds(reference, table, fault_lab.SEED_POOL)


def test_a_current_table_is_read_and_a_stale_one_is_computed_again(reference, table, tmp_path):
    seed = SOME_SEEDS[1]
    read = procedure_table.TabledProcedure(reference, seed)
    assert read._live is None and read.figures == table["rows"][str(seed)]["figures"]
    # A table with one figure changed and the stamp of another solution: not read.
    stale = json.loads(json.dumps(table))
    stale["stamp"] = "0" * 64
    stale["rows"][str(seed)]["figures"]["near_one_log_final"] = 123.0
    (tmp_path / "stale.json").write_text(json.dumps(stale))
    computed = procedure_table.TabledProcedure(reference, seed, table=tmp_path / "stale.json")
    assert computed._live is not None and computed.figures["near_one_log_final"] != 123.0
    name, (replacements, keys) = next(iter(fault_lab.broken_runs().items()))
    assert not procedure_table.differences(
        {"figures": read.figures, "broken": {name: read.broken(replacements, keys)}},
        {"figures": computed.figures, "broken": {name: computed.broken(replacements, keys)}}, TABLE_RTOL)


def test_differences_name_a_changed_figure_and_a_missing_run(table):
    row = table["rows"][str(SOME_SEEDS[0])]
    changed = json.loads(json.dumps(row))
    changed["figures"]["rho1.5_linear_norm"] *= 1 + 1e-7
    del changed["broken"][next(iter(changed["broken"]))]
    found = procedure_table.differences(changed, row, TABLE_RTOL)
    assert any("rho1.5_linear_norm" in d for d in found)
    assert any("in the table, " in d and d.startswith(next(iter(row["broken"]))) for d in found)
    assert not procedure_table.differences(row, row, TABLE_RTOL)
