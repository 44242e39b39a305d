"""reports/sequence_models.png and the evidence lines of causality (question 7) and the
inference bill (question 10): drawn from what the hidden suites measured of the student's code."""

from __future__ import annotations

import ast

import numpy as np
import yaml
from helpers import MATRIX, SOLUTIONS, STUBS, grade, make_submission
from PIL import Image
from test_evidence import _same_fields

from autograder.units.rnn_prehistory import artefacts
from autograder.units.rnn_prehistory.sequence_figure import evidence_notes, first_leak


def _mutant(tmp_path, topic, name):
    mutant = next(m for m in MATRIX[topic]["mutants"] if m["name"] == name)
    module = {"causality": "causality.py", "inference_cost": "inference_cost.py"}[topic]
    return make_submission(tmp_path / name, replace={module: [tuple(e) for e in mutant["replace"]]})


def _stubbed(folder, module, function):
    """The reference with one function of `module` replaced by its student stub (the rest written)."""
    def lines_of(text):
        node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function)
        return "\n".join(text.splitlines()[node.lineno - 1: node.end_lineno])
    solution, stub = (SOLUTIONS / module).read_text(), (STUBS / module).read_text()
    return make_submission(folder, replace={module: [(lines_of(solution), lines_of(stub))]})


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


def test_the_rnn_maps_are_drawn_while_self_attention_is_a_stub(tmp_path):
    """birnn_forward and dependency_matrix written, self_attention not: the two RNN panels are
    measured and drawn, the attention panels say they were not measured."""
    sub = _stubbed(tmp_path / "sub", "causality.py", "self_attention")
    assert "raise NotImplementedError" in (sub / "causality.py").read_text()
    proc, _score = grade(sub, tmp_path / "out", "--topic", "fault_injection", "--topic", "causality")
    assert proc.returncode == 0, proc.stderr
    notes = _notes((tmp_path / "out" / artefacts.EVIDENCE_FILE).read_text())
    assert "causality, unidirectional RNN: causal (no output moved when a later input moved)" in notes, notes
    assert "causality, bidirectional RNN: reads the future, first at (t, s) = (0, 1)" in notes, notes
    assert [n for n in notes if "self_attention" in n] == [
        "causality, self_attention, causal=True: not measured (self_attention is not implemented yet)",
        "causality, self_attention, causal=False: not measured (self_attention is not implemented yet)"], notes
    with Image.open(tmp_path / "out" / artefacts.SEQUENCE_PLOT_FILE) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=int)
    # the heat maps are purple (tab:purple, shaded); panel i spans about x = 320 i ... 320 (i + 1)
    purple = (np.abs(pixels - (148, 103, 189)).max(axis=2) < 40)
    drawn = [int(purple[:, 320 * i: 320 * (i + 1)].sum()) for i in range(4)]
    assert drawn[0] > 500 and drawn[1] > 500, drawn
    assert drawn[2] < 50 and drawn[3] < 50, drawn
