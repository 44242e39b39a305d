"""The text of the report figures (issue 34.5): messages wrapped, never cut inside a word or a
sentence (whole sentences left out, with a visible marker); the legend names whose
clip_grad_norm drew the clipped curves, as the panels and the title do."""

from __future__ import annotations

import re
import unicodedata

from autograder.units.rnn_prehistory import fault_figure
from autograder.units.rnn_prehistory.lab.record import ExperimentData, LabRecord, LossCurves, whole_sentences

MESSAGE = ("fault_injection.clip_grad_norm raised ValueError: operands could not be broadcast together with "
           "shapes (3,4) (4,). The norm is one number over all the tensors together, not one per tensor; "
           "see the docstring. Check the shapes of Wx, Wh and b before you add their squares.")
CJK = "梯度裁剪必须使用所有张量的全局范数。你的函数对每个张量分别裁剪了。请阅读文档字符串中的说明并重新检查你的实现。"
MARKER = re.compile(r"\[\u2026 (\d+) more\]")


def _columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _shown_sentences(wrapped: str, original: str) -> int:
    """How many whole sentences of `original` `wrapped` shows, in order; fails when a word or a
    sentence is cut, and checks the marker counts the rest."""
    text = " ".join(wrapped.split("\n"))
    marker = MARKER.search(text)
    shown = MARKER.sub("", text).strip()
    flat = " ".join(original.split())
    assert flat.startswith(shown) or flat.replace(" ", "").startswith(shown.replace(" ", "")), (shown, flat)
    rest = flat[len(shown):] if flat.startswith(shown) else ""
    if not marker:
        assert not rest.strip(), f"left out without a marker: {rest!r}"
    else:
        assert not shown or (rest[:1] in (" ", "") or shown[-1] in "\u3002") and shown[-1] in ".;!?\u3002", \
            f"a sentence cut: {shown!r}"
    return len(shown)


def test_a_long_message_is_wrapped_in_whole_words_and_sentences():
    for width, lines in ((50, 3), (50, 6), (30, 2), (200, 1)):
        wrapped = fault_figure._wrap(MESSAGE, width, lines)
        assert len(wrapped.split("\n")) <= lines, wrapped
        assert all(_columns(line) <= width for line in wrapped.split("\n")), wrapped
        words = set(MESSAGE.split()) | {"[\u2026", "more]"} | {str(n) for n in range(1, 5)}
        assert set(wrapped.split()) <= words, f"a word cut: {wrapped!r}"
        _shown_sentences(wrapped, MESSAGE)
    assert fault_figure._wrap(MESSAGE, 50, 20).count("\n") >= 4, "room for all of it: all of it"
    assert not MARKER.search(fault_figure._wrap(MESSAGE, 50, 20))
    assert MARKER.search(fault_figure._wrap(MESSAGE, 50, 3)).group(1) == "3"


def test_a_cjk_message_breaks_between_characters_and_at_its_full_stops():
    wrapped = fault_figure._wrap(CJK, 24, 2)
    assert all(_columns(line) <= 24 for line in wrapped.split("\n")), wrapped
    assert wrapped.replace("\n", "").startswith("梯度裁剪必须使用所有张量的全局范数。"), wrapped
    assert MARKER.search(wrapped), wrapped
    _shown_sentences(wrapped, CJK)


def test_the_record_keeps_whole_sentences():
    kept = whole_sentences(MESSAGE, 150)
    assert len(kept) <= 150 and MARKER.search(kept), kept
    _shown_sentences(kept, MESSAGE)
    assert whole_sentences(MESSAGE, 10) == "[\u2026 4 more]", "a first sentence too long is left out whole"
    assert whole_sentences("one. two.") == "one. two."
    record = LabRecord()
    record.keep_experiment("clipping", "student", 7, None, error=ValueError(MESSAGE * 4))
    _shown_sentences(record.experiments["clipping"].error, MESSAGE * 4)


def _legend(lab: LabRecord) -> list[str]:
    fig, _panels = fault_figure.draw_fault_figure(lab)
    return [label for _style, label in fig._legend[0]]


def _clipping_lab(source: str) -> LabRecord:
    curve = [10.0 ** (7 - k / 10) for k in range(101)]
    return LabRecord(seed=7, returned={"clip_loss_start": 1e7},
                     loss_curves=LossCurves(source=source, seed=7, clip=curve, noclip=[1e7, 1e30, float("inf")],
                                            noclip_first_nonfinite_step=2),
                     experiments={"clipping": ExperimentData(source, 7, {"update_norms": [5.0] * 100})})


def test_the_legend_says_whose_clip_grad_norm_drew_the_clipped_curves():
    mine = _legend(_clipping_lab("student"))
    assert "clipped at tau = 5, with your clip_grad_norm" in mine, mine
    theirs = _legend(_clipping_lab("reference"))
    assert not [label for label in theirs if "your clip_grad_norm" in label], theirs
    assert "clipped at tau = 5, with the grader's clip_grad_norm (yours raised)" in theirs, theirs
    fig, panels = fault_figure.draw_fault_figure(_clipping_lab("reference"))
    assert "the grader's own primitives in clipping" in fig._texts[0][2].text


def test_a_legend_names_only_what_is_drawn():
    """A public-only run draws stars and no curve: no curve in the legend."""
    labels = _legend(LabRecord(seed=7, returned={"bptt_rel_error": 1e-10}))
    assert not [label for label in labels if "clip" in label or "chain" in label], labels
    assert any("run_fault_injection returned" in label for label in labels), labels


def test_why_there_are_no_stars_is_whole_under_the_title():
    fig, _panels = fault_figure.draw_fault_figure(LabRecord(seed=7, returned_error=MESSAGE))
    title = fig._texts[0][2].text
    first, *why = title.split("\n")
    assert first.endswith("gave no dict, because:"), first
    _shown_sentences("\n".join(why), MESSAGE)
