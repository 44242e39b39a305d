"""What every report format says, checked on one result in-process (end to end in
tests/e2e/test_pr_grading.py):

- junit.xml validates against the junit-10 XSD of Jenkins' xUnit plugin (tests/junit-10.xsd);
- the instructor's hidden-detail level holds in every format: at "total" no hidden test's
  name, message or hint; at "tests" no hidden hint;
- a pass mark is stated wherever the score is, reached or not;
- the tampered files are in every format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import xmlschema
from helpers import REPO

from autograder import reports
from autograder.grading.score import GradeResult, TestOutcome, TopicResult
from autograder.reports import gradescope_results, junit, markdown, score_json
from autograder.unit.test_ids import TestId, TopicTestId

JUNIT_XSD = REPO / "tests" / "junit-10.xsd"
HIDDEN_NAMES = ("test_hidden_secret_value", "test_hidden_secret_shape")
HIDDEN_MESSAGE = "expected 0.25 from min(ref_lens, key=lambda r: (abs(r - c), r))"
HIDDEN_HINT = "the closest reference length, the shorter one on a tie"
PUBLIC_HINT = "a public hint"


def sample_result(**fields) -> GradeResult:
    tests = [TestOutcome(TestId.parse("public::test_public_value"), 0.0, 1.0, "failed", "public message", PUBLIC_HINT),
             TestOutcome(TestId.parse(f"hidden::{HIDDEN_NAMES[0]}"), 0.0, 2.0, "failed", HIDDEN_MESSAGE, HIDDEN_HINT, kind="value"),
             TestOutcome(TestId.parse(f"hidden::{HIDDEN_NAMES[1]}"), 1.5, 1.5, "passed", "", ""),
             TestOutcome(TestId.parse("public::test_public_crash"), 0.0, 1.0, "error", "ValueError: boom", "")]
    other = [TestOutcome(TestId.parse(f"hidden::{HIDDEN_NAMES[1]}_too"), 3.0, 3.0, "passed", "", "")]
    topics = [TopicResult("bleu", "BLEU", "bleu", "graded", "", tests),
              TopicResult("beam", "Beam", "beam", "graded", "", other)]
    oral = [{"question": 1, "text": "why?", "status": "not yet", "tests": [TopicTestId.parse(f"bleu::hidden::{HIDDEN_NAMES[0]}")],
             "failing": [TopicTestId.parse(f"bleu::hidden::{HIDDEN_NAMES[0]}")]}]
    return GradeResult("unit", "sub", seed=3, duration_s=1.25, topics=topics, oral_exam=oral, **fields)


def written(tmp_path: Path, result: GradeResult, detail: str) -> dict[str, str]:
    reports.write_all(tmp_path, result, (), detail)
    return {p.name: p.read_text() for p in tmp_path.iterdir()}


@pytest.mark.parametrize("fields", [{}, {"tampered": ["Makefile"], "pass_mark": 80.0}],
                         ids=["plain", "tampered-with-pass-mark"])
@pytest.mark.parametrize("detail", ["hints", "total"])
def test_junit_validates_against_the_junit_10_schema(fields, detail):
    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    text = junit.render(reports.visible(sample_result(**fields), detail))
    errors = list(schema.iter_errors(text.split("\n", 1)[1]))
    assert not errors, "\n".join(str(e.reason) for e in errors[:5])


def test_junit_keeps_points_seed_and_tampering_under_each_suite():
    import xml.etree.ElementTree as ET

    root = ET.fromstring(junit.render(sample_result(tampered=["Makefile"])).split("\n", 1)[1])
    suite = root.find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["seed"] == "3" and props["tampered"] == "Makefile" and props["points"] == "1.5/5.5"
    assert props[f"points:hidden::{HIDDEN_NAMES[0]}"] == "0/2"
    assert root.get("failures") == "2" and root.get("errors") == "1"


@pytest.mark.parametrize("detail", ["total", "tests", "hints"])
def test_every_format_shows_only_what_the_hidden_detail_allows(tmp_path, detail):
    files = written(tmp_path, sample_result(), detail)
    assert set(files) == {"score.md", "score.json", "junit.xml", "results.json"}
    for name, text in files.items():
        names_shown = any(n in text for n in HIDDEN_NAMES)
        assert names_shown == (detail != "total"), (name, detail)
        assert ("0.25 from min(ref" in text) == (detail != "total"), (name, detail)
        assert (HIDDEN_HINT in text) == (detail == "hints"), (name, detail)
        assert PUBLIC_HINT in text, (name, "public hints stay at every level")
    doc = json.loads(files["score.json"])
    bleu = doc["topics"][0]
    assert (bleu["earned"], bleu["possible"], doc["earned"]) == (1.5, 5.5, 4.5), "the points never change"
    if detail == "total":
        hidden = [x for x in bleu["tests"] if x["id"].startswith("hidden::")]
        assert [(x["id"], x["earned"], x["possible"], x["outcome"]) for x in hidden] == [
            ("hidden::*", 1.5, 3.5, "failed")]
        assert "1 of 2 hidden tests failed" in files["junit.xml"] and "1 of 2 hidden tests failed" in files["results.json"]
        assert "- hidden tests: 1.5 / 3.5" in files["score.md"]
        assert doc["oral_exam"][0]["failing"] == ["bleu::hidden::*"]
        assert [x for x in doc["topics"][1]["tests"]] == [
            {"id": "hidden::*", "earned": 3.0, "possible": 3.0, "outcome": "passed", "message": "", "hint": "",
             "kind": ""}]
        assert "### `beam`" not in files["score.md"], "a topic whose hidden tests all pass needs no section"


def test_the_hidden_total_says_how_its_tests_failed_when_all_failed_alike():
    stub = [TestOutcome(TestId.parse(f"hidden::test_{i}"), 0.0, 1.0, "error", "NotImplementedError", "", not_implemented="m.f",
                        kind="exception") for i in range(3)]
    topic = TopicResult("bleu", "BLEU", "bleu", "not_implemented", "nothing is implemented yet", stub)
    shown = reports.visible(GradeResult("unit", "sub", seed=1, duration_s=0.0, topics=[topic]), "total")
    [total] = shown.topics[0].tests
    assert (str(total.id), total.outcome, total.not_implemented, total.kind, total.possible) == (
        "hidden::*", "error", "m.f", "exception", 3.0)
    assert total.message == "3 of 3 hidden tests failed"


def test_the_pull_request_summary_keeps_the_level(tmp_path):
    """pr renders the summary and comment from the result again: the level must hold there too."""
    text = markdown.render(sample_result(), (), "total")
    assert not any(n in text for n in HIDDEN_NAMES) and HIDDEN_HINT not in text and "0.25 from min" not in text
    assert markdown.render(reports.visible(sample_result(), "total"), (), "total") == text, "applied once"


@pytest.mark.parametrize("mark,reached", [(80.0, False), (52.95, False), (52.9, True)])
def test_a_pass_mark_is_stated_wherever_the_score_is(mark, reached):
    result = sample_result(pass_mark=mark)                       # 4.5 / 8.5 = 52.94 %
    md = markdown.render(result)
    doc = score_json.document(result)
    results = gradescope_results.document(result)
    word = "reached" if reached else "Below the pass mark"
    assert word in md and f"{mark:g}%" in md and "52.94%" in md
    assert doc["pass_mark"] == {"percent": mark, "reached": reached}
    assert results["extra_data"]["pass_mark"] == {"percent": mark, "reached": reached}
    assert word in results["output"] and f"{mark:g}%" in results["output"]
    assert f"{mark:g}%" in junit.render(result)
    assert "pass mark" not in markdown.render(sample_result()).lower(), "no mark, no sentence"


def test_the_tampered_files_are_in_every_format():
    result = sample_result(tampered=["autograder/grading/score.py", "Makefile"])
    assert "`autograder/grading/score.py`" in markdown.render(result)
    assert score_json.document(result)["tampered"] == result.tampered
    results = gradescope_results.document(result)
    assert results["extra_data"]["tampered"] == result.tampered and "Makefile" in results["output"]
    assert "autograder/grading/score.py, Makefile" in junit.render(result)


def test_grade_says_why_it_exits_1_under_a_pass_mark(tmp_path):
    """`make grade GRADE_ARGS="--fail-under 90"` ended in make's "Error 1" with no reason."""
    from helpers import STUBS, grade

    for extra in ((), ("--quiet",)):
        proc, score = grade(STUBS, tmp_path / "out", "--suite", "public", "--topic", "bptt", "--fail-under", "50", *extra,
                            command_line=True)
        assert proc.returncode == 1, proc.stderr
        assert "Below the pass mark: 0% of the points, 50% needed." in proc.stdout, proc.stdout
        assert score["pass_mark"] == {"percent": 50.0, "reached": False}
        assert "Below the pass mark" in (tmp_path / "out" / "score.md").read_text()
    proc, score = grade(STUBS, tmp_path / "out", "--suite", "public", "--topic", "bptt", "--fail-under", "0",
                        command_line=True)
    assert proc.returncode == 0 and "Pass mark reached: 0% of the points, 0% needed." in proc.stdout, proc.stdout
