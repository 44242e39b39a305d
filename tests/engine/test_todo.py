"""The report lists every function still left to do, read from the submission's syntax tree."""

from __future__ import annotations

from helpers import SOLUTIONS, STUBS, UNIT, grade, make_submission

from autograder.grading.todo import unfinished


def test_every_stub_function_is_unfinished_and_no_solution_function_is():
    for topic in UNIT.topics:
        left = unfinished(STUBS / f"{topic.module}.py")
        assert set(topic.functions) <= set(left), topic.id
        assert unfinished(SOLUTIONS / f"{topic.module}.py") == [], topic.id


def test_unfinished_reads_and_never_runs_the_file(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import sys\nsys.exit(3)\n\ndef a():\n    raise NotImplementedError('a: fill in')\n\n"
                      "def b():\n    return 1\n\ndef _c():\n    raise NotImplementedError\n\n"
                      "def d(x):\n    if x:\n        raise NotImplementedError\n    return x\n")
    assert unfinished(module) == ["a", "d"]
    (tmp_path / "broken.py").write_text("def (:\n")
    assert unfinished(tmp_path / "broken.py") == []


def test_a_half_done_topic_names_every_function_left(tmp_path):
    """Two bptt functions still stubs: both are named, though the tests that reach one of them
    first fail on the other."""
    stub = (STUBS / "bptt.py").read_text()
    sub = make_submission(tmp_path / "sub")
    text = (sub / "bptt.py").read_text()
    for name in ("rnn_backward_truncated", "rel_error"):
        start = text.index(f"def {name}(")
        end = text.index("\ndef ", start + 1) if "\ndef " in text[start + 1:] else len(text)
        stub_start = stub.index(f"def {name}(")
        stub_end = stub.index("\ndef ", stub_start + 1) if "\ndef " in stub[stub_start + 1:] else len(stub)
        text = text[:start] + stub[stub_start:stub_end] + text[end:]
    (sub / "bptt.py").write_text(text)
    proc, score = grade(sub, tmp_path / "out", "--topic", "bptt")
    assert proc.returncode == 0, proc.stderr
    (topic,) = score["topics"]
    assert topic["status"] == "graded"
    assert topic["message"] == "still raising NotImplementedError: bptt.rnn_backward_truncated, bptt.rel_error"


def test_a_reference_calling_a_stub_of_its_own_module_names_the_stub_not_itself(tmp_path):
    """beam_search.sequence_score left as the stub, attribute_error (which calls it) the
    reference: the report names sequence_score, not attribute_error, as still raising
    NotImplementedError (the stub that raised is the function in the frame, not the one called)."""
    stub, text = (STUBS / "beam_search.py").read_text(), (SOLUTIONS / "beam_search.py").read_text()
    start, stub_start = text.index("def sequence_score("), stub.index("def sequence_score(")
    text = text[:start] + stub[stub_start:stub.index("\ndef ", stub_start)] + text[text.index("\ndef ", start):]
    sub = make_submission(tmp_path / "sub", files={"beam_search.py": text})
    proc, score = grade(sub, tmp_path / "out", "--topic", "beam_attribution")
    assert proc.returncode == 0, proc.stderr
    (topic,) = score["topics"]
    assert topic["status"] == "graded" and topic["message"] == \
        "still raising NotImplementedError: beam_search.sequence_score", topic["message"]
    messages = [t["message"] for t in topic["tests"] if "attribute_error" in t["message"]]
    assert messages and all("calls beam_search.sequence_score" in m for m in messages), messages
