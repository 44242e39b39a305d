"""reports/sequence_models.png and the evidence lines of causality (question 7) and the
inference bill (question 10): drawn from what the hidden suites measured of the student's code."""

from __future__ import annotations

import yaml
from helpers import MATRIX, SOLUTIONS, grade, make_submission
from PIL import Image
from test_evidence import _same_fields

from autograder.units.rnn_prehistory import artefacts
from autograder.units.rnn_prehistory.sequence_figure import evidence_notes, first_leak


def _mutant(tmp_path, topic, name):
    mutant = next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)
    module = {"causality": "causality.py", "inference_cost": "inference_cost.py"}[topic]
    return make_submission(tmp_path / name, replace={module: [tuple(e) for e in mutant["replace"]]})


def _notes(evidence_text: str) -> list[str]:
    return [line[4:] for line in evidence_text.splitlines() if line.startswith("#   ")]


def test_first_leak_reads_rows_in_order():
    assert first_leak([[1, 0, 0], [1, 1, 0], [1, 1, 1]]) is None
    assert first_leak([[1, 0, 0], [1, 1, 2e-16], [1, 1, 1]]) == (1, 2)
    assert first_leak([[1, 0, 3], [1, 1, 2], [1, 1, 1]]) == (0, 2)


def test_the_reference_grading_draws_the_figure_and_notes_the_evidence(tmp_path):
    proc, score = grade(SOLUTIONS, tmp_path / "out", "--topic", "fault_injection", "--topic", "causality",
                        "--topic", "inference_cost")
    assert proc.returncode == 0, proc.stderr
    with Image.open(tmp_path / "out" / artefacts.SEQUENCE_PLOT_FILE) as image:
        assert image.size == (1600, 400)
    assert f"]({artefacts.SEQUENCE_PLOT_FILE})" in (tmp_path / "out" / "score.md").read_text()
    text = (tmp_path / "out" / artefacts.EVIDENCE_FILE).read_text()
    assert not _same_fields(yaml.safe_load(text), artefacts.template()), "the notes are comments, not fields"
    notes = _notes(text)
    assert "causality, unidirectional RNN: causal (no output moved when a later input moved)" in notes
    assert "causality, bidirectional RNN: reads the future, first at (t, s) = (0, 1)" in notes
    assert "causality, self_attention, causal=True: causal (no output moved when a later input moved)" in notes
    assert ("inference bill, T = [16, 64, 256, 1024]: RNN state bytes [128, 128, 128, 128], "
            "KV cache bytes [2048, 8192, 32768, 131072]") in notes


def test_a_mask_off_by_one_and_a_growing_state_show_in_the_evidence(tmp_path):
    sub = _mutant(tmp_path, "causality", "mask_off_by_one")
    sub = make_submission(tmp_path / "both", base=sub, replace={"inference_cost.py": [
        tuple(e) for e in next(m for m in MATRIX["inference_cost"]["mutants"] if m["name"] == "state_grows")["replace"]]})
    proc, _score = grade(sub, tmp_path / "out", "--topic", "fault_injection", "--topic", "causality",
                         "--topic", "inference_cost")
    assert proc.returncode == 0, proc.stderr
    notes = _notes((tmp_path / "out" / artefacts.EVIDENCE_FILE).read_text())
    assert "causality, self_attention, causal=True: reads the future, first at (t, s) = (0, 1)" in notes
    bill = next(n for n in notes if n.startswith("inference bill"))
    assert "RNN state bytes [128, 128, 128, 128]" not in bill, bill


def test_nothing_to_draw_without_the_hidden_suites():
    assert evidence_notes({}) == []
    from autograder.units.rnn_prehistory.sequence_figure import render_sequence_plot
    assert render_sequence_plot({}) is None
