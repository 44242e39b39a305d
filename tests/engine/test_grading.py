"""End to end through the CLI: the reference, the stubs, the score schema, reports, exit codes."""

import json
import os
import xml.etree.ElementTree as ET

import pytest
from helpers import STUBS, UNIT, grade, make_submission, run_grader, run_in_process

from autograder import reports
from autograder.grading.score import GradeResult

TOP_KEYS = ["schema", "assignment", "submission", "earned", "possible", "duration_s", "topics", "signals"]
TOPIC_KEYS = ["id", "earned", "possible", "status", "tests", "message"]   # v1, then additions
TEST_KEYS = ["id", "earned", "possible", "outcome", "message", "hint", "kind"]   # v1, then additions


def check_schema(score):
    assert list(score)[:len(TOP_KEYS)] == TOP_KEYS and score["schema"] == "autograder.score/v1"
    assert set(score) - set(TOP_KEYS) <= {"seed", "seed_from", "lang", "grader_version", "graded_later", "tampered",
                                             "oral_exam", "selected_tests"}, \
        "additions the schema allows"
    assert score["seed_from"] in ("files", "--seed") and isinstance(score["seed"], int)
    assert score["assignment"] == "rnn_prehistory"
    for topic in score["topics"]:
        assert list(topic) == TOPIC_KEYS
        assert topic["status"] in {"graded", "not_implemented", "error", "timeout", "crashed"}
        assert topic["earned"] == pytest.approx(sum(t["earned"] for t in topic["tests"]))
        for test in topic["tests"]:
            assert list(test) == TEST_KEYS
            assert test["outcome"] in {"passed", "failed", "error", "timeout"}
            assert test["earned"] in (0.0, test["possible"])
    assert score["earned"] == pytest.approx(sum(t["earned"] for t in score["topics"]))


def test_reference_gets_full_marks(reference_score):
    score, out = reference_score
    check_schema(score)
    rubric = UNIT.rubric
    assert [t["id"] for t in score["topics"]] == [t.id for t in rubric.topics]
    failed = [(t["id"], x["id"], x["message"]) for t in score["topics"] for x in t["tests"] if x["outcome"] != "passed"]
    assert not failed
    assert score["earned"] == score["possible"] == rubric.points
    assert all(t["status"] == "graded" for t in score["topics"])
    for name in ["score.md", "junit.xml", "results.json"]:
        assert (out / name).exists()


def test_stubs_get_zero_and_every_topic_is_not_implemented(stubs_graded):
    score, _out, stdout = stubs_graded
    check_schema(score)
    assert score["earned"] == 0
    assert {t["status"] for t in score["topics"]} == {"not_implemented"}
    assert "fill in the TODOs in assignments/rnn_prehistory/bptt.py" in stdout


def test_a_topic_with_some_functions_written_is_graded_and_names_the_rest(tmp_path):
    """Three of causality's five functions written, one public test calling all of them: the
    topic is graded (not "nothing implemented") and its message names the two still stubbed."""
    import ast
    import shutil

    from helpers import SOLUTIONS
    sub = tmp_path / "sub"
    shutil.copytree(STUBS, sub, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    solution = (SOLUTIONS / "causality.py").read_text()
    written = {"birnn_forward", "self_attention", "dependency_matrix"}
    defs = [ast.get_source_segment(solution, node) for node in ast.parse(solution).body
            if isinstance(node, ast.FunctionDef) and node.name in written]
    with (sub / "causality.py").open("a") as fh:          # a later def replaces the stub's
        fh.write("\n\n" + "\n\n\n".join(defs) + "\n")
    proc, score = grade(sub, tmp_path / "out", "--topic", "causality", "--suite", "public")   # make grade's view
    topic = score["topics"][0]
    assert topic["status"] == "graded", topic
    # The module's own unfinished functions first, then another module's its tests met (bptt is a stub here).
    assert topic["message"] == ("still raising NotImplementedError: causality.is_causal, "
                                "causality.next_token_readout_error, bptt.rnn_forward"), topic["message"]
    proc, score = grade(sub, tmp_path / "out", "--topic", "causality")
    assert score["topics"][0]["status"] == "graded" and score["topics"][0]["earned"] > 0, \
        "the hidden tests of the written functions earn their points"


def test_reports_agree_with_score_json(reference_score, tmp_path):
    # A partly broken submission, so that failures appear in every format.
    sub = make_submission(tmp_path / "sub", replace={"bptt.py": [("da = dnext_h * (1 - next_h**2)", "da = dnext_h")]})
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    out = tmp_path / "out"
    failed = [x for x in score["topics"][0]["tests"] if x["outcome"] != "passed"]
    assert failed and score["earned"] < score["possible"]
    md = (out / "score.md").read_text()
    assert f"{score['earned']:g} / {score['possible']:g}" in md
    for x in failed:   # a diagnosed failure's message is its hint (score.py gives it none)
        shown = x["hint"].split()[0] if x["kind"] != "diagnosed" else x["message"][:60]
        assert x["id"] in md and shown in md.replace("\\", "")
    suites = ET.parse(out / "junit.xml").getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == len(score["topics"][0]["tests"])
    assert len([c for c in cases if c.find("failure") is not None or c.find("error") is not None]) == len(failed)
    gs = json.loads((out / "results.json").read_text())
    assert gs["score"] == score["earned"] and gs["extra_data"]["max_score"] == score["possible"]
    assert sum(t["score"] for t in gs["tests"]) == pytest.approx(score["earned"])


def test_exit_codes(tmp_path):
    proc, score = grade(STUBS, tmp_path / "a", "--fail-under", "50", "--topic", "bptt", command_line=True)
    assert proc.returncode == 1 and score["earned"] == 0
    proc = run_grader("grade", tmp_path / "does-not-exist", "--out", tmp_path / "b")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = run_grader("grade", STUBS, "--out", tmp_path / "c", "--topic", "no_such_topic")
    assert proc.returncode == 2 and "unknown topic(s) ['no_such_topic']" in proc.stderr
    assert not (tmp_path / "c").exists()
    proc = run_grader("grade", "--bogus-flag")
    assert proc.returncode == 2


def test_selected_tests_are_the_only_ones_run_and_scored(tmp_path):
    """--test grades those tests of their topics (a topic given to --topic stays whole); the
    evidence and the figure, which describe a whole grading, are not written."""
    picked = ["bptt::hidden::test_no_input_mutation", "fault_injection::public::test_log_abs_cumprod_small_vector",
              "fault_injection::hidden::test_log_abs_cumprod_matches_running_log_sum"]
    out = tmp_path / "out"
    proc, score = grade(make_submission(tmp_path / "sub"), out, "--topic", "attention",
                        *[arg for test in picked for arg in ("--test", test)])
    assert proc.returncode == 0, proc.stderr
    check_schema(score)
    rubric = {t.id: t for t in UNIT.rubric.topics}
    expected = {"bptt": ["hidden::test_no_input_mutation"],
                "fault_injection": ["public::test_log_abs_cumprod_small_vector",
                                    "hidden::test_log_abs_cumprod_matches_running_log_sum"],
                "attention": [str(t.id) for t in rubric["attention"].tests]}
    assert [t["id"] for t in score["topics"]] == ["bptt", "fault_injection", "attention"]      # rubric order
    for topic in score["topics"]:
        assert sorted(t["id"] for t in topic["tests"]) == sorted(expected[topic["id"]])
        points = sum(t.points for t in rubric[topic["id"]].tests if str(t.id) in expected[topic["id"]])
        assert topic["possible"] == pytest.approx(points) and topic["earned"] == pytest.approx(points)
    assert score["selected_tests"] == sorted(picked)
    cases = ET.parse(out / "junit.xml").getroot().iter("testcase")
    assert sum(1 for _ in cases) == sum(map(len, expected.values()))
    assert not (out / "evidence.yaml").exists() and not (out / "fault_injection.png").exists()
    for wrong in ("bptt::hidden::test_no_such_test", "bptt::test_no_input_mutation", "nope::hidden::test_x"):
        proc = run_grader("grade", STUBS, "--out", tmp_path / "bad", "--test", wrong)
        assert proc.returncode == 2 and wrong in proc.stderr, proc.stderr


def test_rerun_replaces_reports_atomically(tmp_path, monkeypatch):
    out = tmp_path / "out"
    result = GradeResult("rnn_prehistory", "x", seed=1, duration_s=0.1, topics=[])
    reports.write_all(out, result)
    before = (out / "score.json").read_text()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        reports.write_all(out, GradeResult("rnn_prehistory", "y", seed=2, duration_s=0.2, topics=[]))
    assert (out / "score.json").read_text() == before
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "results.json", "score.json", "score.md"]


def test_batch_grades_a_class(tmp_path):
    root = tmp_path / "class"
    make_submission(root / "alice")
    make_submission(root / "bob", base=STUBS)
    (root / "carol").mkdir()
    proc = run_in_process("batch", root, "--out", tmp_path / "out", "--jobs", "2", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "out" / "class.csv").read_text().splitlines()
    assert rows[0].startswith("submission,earned,possible,status")
    by_name = {r.split(",")[0]: r.split(",") for r in rows[1:]}
    full = UNIT.rubric.topic("bptt").points
    assert float(by_name["alice"][1]) == full and by_name["bob"][1] == "0.0"
    assert by_name["bob"][3] == "not_implemented"
    assert by_name["carol"][1] == "" and by_name["carol"][3] == "missing"    # no module file: not a 0
    proc = run_in_process("batch", root, "--out", tmp_path / "out2", "--shard", "2/2", "--topic", "bptt")
    assert (tmp_path / "out2" / "class.shard2of2.csv").read_text().count("\n") == 2   # header + bob


def test_artefacts_of_a_previous_run_do_not_survive(tmp_path):
    out = tmp_path / "out"
    proc, _ = grade(STUBS, out, "--topic", "fault_injection")
    assert proc.returncode == 0, proc.stderr
    assert (out / "evidence.yaml").exists() and (out / "fault_injection.png").exists()
    proc, score = grade(STUBS, out, "--topic", "bptt")
    assert [t["id"] for t in score["topics"]] == ["bptt"]
    assert not (out / "evidence.yaml").exists() and not (out / "fault_injection.png").exists()


def test_pytest_settings_of_the_environment_do_not_change_a_grading(tmp_path):
    """PYTEST_ADDOPTS and PYTEST_PLUGINS (an instructor's shell, or a test run whose own
    PYTEST_ADDOPTS reaches the graders it starts) are not the grader's: with "-x" the suites
    stopped at the first failure, and every later rubric test was "not run" (exit 2)."""
    submission = make_submission(tmp_path / "sub", base=STUBS)
    plain, plain_score = grade(submission, tmp_path / "plain", "--topic", "bleu")
    proc, score = grade(submission, tmp_path / "env", "--topic", "bleu",
                        env={"PYTEST_ADDOPTS": "-x -rs --maxfail=1", "PYTEST_PLUGINS": "no_such_plugin_anywhere"})
    assert plain.returncode == 0 and proc.returncode == 0, proc.stderr
    def outcomes(score):
        return [(x["id"], x["earned"], x["outcome"], x["message"]) for t in score["topics"] for x in t["tests"]]
    assert outcomes(score) == outcomes(plain_score) and len(outcomes(score)) > 3
    assert os.environ.get("PYTEST_ADDOPTS") != "-x -rs --maxfail=1", "the grading's environment is restored"
