"""`python -m autograder check UNIT`: the checks every unit gets, whatever its folder (the kill
matrix graded, the clause tables, the translations, no stale derived file), run here on a second
unit, the one-topic scaffold of `new-unit`, and on the shipped unit without grading (its kill
matrix is graded by tests/content/test_kill_matrix.py)."""

from __future__ import annotations

from helpers import run_grader
from test_second_unit import scaffold

from autograder.authoring import unit_checks
from autograder.unit.load import load_unit


def test_check_passes_on_a_second_unit_with_its_kill_matrix_graded(tmp_path):
    unit = scaffold(tmp_path)
    proc = run_grader("check", unit, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "check tiny_unit: 0 problem(s) (1 topic(s), 4 kill-matrix cases graded)"


def test_check_passes_on_the_shipped_unit_without_grading():
    proc = run_grader("check", "rnn_prehistory", "--no-grading")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _problems(unit) -> list[str]:
    proc = run_grader("check", unit, "--no-grading")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout.splitlines()[:-1]


def test_check_fails_on_a_missing_mutant(tmp_path):
    unit = scaffold(tmp_path)
    mutants = unit / "topics" / "doubling" / "mutants.yaml"
    text = mutants.read_text()
    start = text.index("  - {name: power_of_two")
    mutants.write_text(text[:start] + text[text.index("alternatives:"):])
    problems = _problems(unit)
    assert "doubling: mutants.yaml: 2 mutant(s) and 1 alternative(s); " + unit_checks.RULE_MATRIX in problems, problems
    assert "doubling: double: 'returns 2 x': unknown mutant power_of_two" in problems, problems


def test_check_fails_on_an_untranslated_hint_and_on_a_hint_without_underscore(tmp_path):
    unit = scaffold(tmp_path)
    po = unit / "topics" / "doubling" / "locale" / "zh_CN" / "LC_MESSAGES" / "unit.po"
    po.write_text(po.read_text().replace('msgstr "乘以二。"', 'msgstr ""'))
    public = tmp_path / "assignments" / "tiny_unit" / "tests" / "test_doubling.py"
    public.write_text(public.read_text().replace('_("double(2) should be 4")', '"double(2) should be 4"'))
    problems = _problems(unit)
    assert f"{po}: 1 untranslated, e.g. 'Multiply by two.'; {unit_checks.RULE_TRANSLATED}" in problems, problems
    shown = unit / "public" / "test_doubling.py"             # the unit's link to the public tests
    assert f"{shown}:5: 'double(2) should be 4' is not translatable; {unit_checks.RULE_WRAPPED}" in problems, problems


def test_check_fails_on_a_stale_stub(tmp_path):
    unit = scaffold(tmp_path)
    stub = tmp_path / "assignments" / "tiny_unit" / "doubler.py"
    stub.write_text(stub.read_text().replace("Twice x.", "Two times x."))
    assert _problems(unit) == [f"stale: {stub} (run `python -m autograder build`); {unit_checks.RULE_DRIFT}"]


def test_the_graded_rules_name_an_uncaught_mutant_and_an_alternative_that_lost_points(tmp_path):
    """The kill matrix's rules on score.json's shape (the batch run above passes them all)."""
    unit = load_unit(scaffold(tmp_path))
    matrix = unit_checks.load_matrix(unit)

    def score(earned, outcome):
        return {"topics": [{"id": "doubling", "earned": earned, "possible": 3.0, "tests": [
            {"id": "public::test_double_of_two", "outcome": "passed"},
            {"id": "hidden::test_double_matches_reference", "outcome": outcome}]}]}

    scores = {f"mutant-doubling-{m}": score(1.0, "failed") for m in ("square", "plus_two")}
    scores["mutant-doubling-power_of_two"] = score(3.0, "passed")
    scores["alternative-doubling-by_addition"] = score(1.0, "failed")
    problems = unit_checks.graded_problems(matrix, scores)
    assert problems == [
        "doubling: hidden::test_double_matches_reference does not catch mutant power_of_two (raises 2 to x); "
        + unit_checks.RULE_MATRIX,
        "doubling: mutant power_of_two got full marks",
        "doubling: the valid alternative by_addition lost points: ['doubling: hidden::test_double_matches_reference']",
    ]
    passing = {**scores, "mutant-doubling-power_of_two": score(1.0, "failed"),
               "alternative-doubling-by_addition": score(3.0, "passed")}
    assert unit_checks.graded_problems(matrix, passing) == []
