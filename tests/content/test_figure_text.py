"""The text of the report figures (issue 34.5): messages wrapped, never cut inside a word or a
sentence (whole sentences left out, with a visible marker); the legend names whose
clip_grad_norm drew the clipped curves, as the panels and the title do."""

from __future__ import annotations

import re
import unicodedata

from autograder.units.rnn_prehistory import fault_figure, raster
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


# ------------------------------------------------------------- glyphs: no empty boxes
ZH_MESSAGE = ("fault_injection.log_abs_cumprod 还没有实现：请填写 fault_injection.py 中的 TODO（位于 "
              "fault_injection.py:95 in log_abs_cumprod）。" + CJK)
NO_FONT_HAS = "\U0010fffd"          # a private-use code point: its glyph is any font's .notdef


def _recording_texts(monkeypatch) -> list[dict]:
    """From now on, every text Pillow draws, as it draws it: its font file and face index, the
    text, its box and the size of the image it is drawn on."""
    from PIL import ImageDraw

    drawn: list[dict] = []
    draw_text = ImageDraw.ImageDraw.multiline_text

    def recording(self, xy, text, fill=None, font=None, *args, **kwargs):
        spacing = kwargs.get("spacing", args[1] if len(args) > 1 else 4)
        drawn.append({"path": font.path, "index": font.index, "text": text, "size": self.im.size,
                      "box": self.multiline_textbbox(xy, text, font=font, spacing=spacing)})
        return draw_text(self, xy, text, fill, font, *args, **kwargs)
    monkeypatch.setattr(ImageDraw.ImageDraw, "multiline_text", recording)
    return drawn


def _drawn_texts(monkeypatch, lab: LabRecord) -> list[tuple[str, int, str]]:
    """(font file, face index, text) of every text the figure drew, read where Pillow draws it."""
    drawn = _recording_texts(monkeypatch)
    assert fault_figure.render_fault_plot(lab)
    assert drawn, "no text drawn?"
    return [(d["path"], d["index"], d["text"]) for d in drawn]


def _notdef_glyphs(path: str, index: int, text: str) -> list[str]:
    """The characters of `text` that the font draws as its .notdef: not in its character map
    (read with fontTools here), or rendered the same as a code point no font has."""
    from fontTools.ttLib import TTFont
    from PIL import ImageFont

    with TTFont(path, fontNumber=index, lazy=True) as face:
        cmap = face.getBestCmap()
    pil = ImageFont.truetype(path, 40, index=index)
    notdef = pil.getmask(NO_FONT_HAS)
    missing = []
    for c in {c for c in text if not c.isspace()}:
        if ord(c) not in cmap:
            missing.append(c)
        elif not c.isascii():
            mask = pil.getmask(c)
            if mask.size == notdef.size and bytes(mask) == bytes(notdef):
                missing.append(c)
    return missing


def _zh_lab() -> LabRecord:
    return LabRecord(seed=7, returned_error=ZH_MESSAGE,
                     experiments={"products": ExperimentData("student", 7, {}, ZH_MESSAGE),
                                  "vanishing": ExperimentData("student", 7, {}, CJK)})


def _no_box_anywhere(drawn) -> None:
    for path, index, text in drawn:
        missing = _notdef_glyphs(path, index, text)
        assert not missing, f"drawn as empty boxes with {path}: {missing} in {text!r}"


def test_chinese_messages_are_drawn_with_a_font_that_has_their_glyphs(monkeypatch):
    drawn = _drawn_texts(monkeypatch, _zh_lab())
    _no_box_anywhere(drawn)
    chinese = [text for _p, _i, text in drawn if "梯度" in text]
    escaped = [text for _p, _i, text in drawn if "<U+68AF" in text]
    assert chinese or escaped, "the message was drawn neither in Chinese nor escaped"
    assert raster.fallback_fonts()[0][0].endswith("NotoSansCJK-Regular.ttc"), "the package's CJK font comes first"
    assert chinese and not escaped, "the package installs a CJK font: the Chinese is drawn with it"


def test_without_a_font_for_them_chinese_characters_are_written_as_code_points(monkeypatch):
    monkeypatch.setattr(raster, "FONT_DIRS", ())
    monkeypatch.setattr(raster, "SHIPPED_FONTS", ())
    caches = (raster.fallback_fonts, raster.face_for, raster.font)
    for cached in caches:
        cached.cache_clear()
    try:
        drawn = _drawn_texts(monkeypatch, _zh_lab())
    finally:
        for cached in caches:
            cached.cache_clear()
    _no_box_anywhere(drawn)
    assert [text for _p, _i, text in drawn if "<U+68AF U+5EA6" in text], "梯度, as code points"
    assert not [text for _p, _i, text in drawn if "梯" in text]


def test_the_notdef_check_sees_an_empty_box():
    """The check itself: DejaVu Sans has no Chinese, and a character no font has is a box."""
    dejavu = raster._font_file(False)
    assert _notdef_glyphs(dejavu, 0, "梯度 abc") and not _notdef_glyphs(dejavu, 0, "abc \u2713")


def test_a_zh_grading_of_the_stubs_draws_its_chinese_messages_without_boxes(tmp_path):
    """The real path: `grade --lang zh` of the stubs puts the translated messages in the panels
    (the PNG's metadata keeps what each panel wrote); each is drawn with a font that has it."""
    from helpers import STUBS, grade, make_submission

    proc, _score = grade(make_submission(tmp_path / "sub", base=STUBS), tmp_path / "out",
                         "--topic", "fault_injection", "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    notes = [n for p in fault_figure.panels_of_png((tmp_path / "out" / "fault_injection.png").read_bytes())
             for n in p["notes"]]
    chinese = [n for n in notes if re.search(r"[\u4e00-\u9fff]", n)]
    assert chinese, notes
    for note in chinese:
        face, shown = raster.face_for(note)
        path, index = face or (raster._font_file(False), 0)
        assert not _notdef_glyphs(path, index, shown), (path, shown)


def _outside_the_image(drawn: list[dict]) -> list:
    return [(d["text"], d["box"], d["size"]) for d in drawn
            if d["box"][0] < 0 or d["box"][1] < 0 or d["box"][2] > d["size"][0] or d["box"][3] > d["size"][1]]


def test_no_text_of_a_stub_grading_runs_off_the_figure(tmp_path, monkeypatch):
    """The stubs' figure (the longest title: no stars, every experiment on the grader's own
    primitives, the reason under it), in English and in Chinese: every text lies inside the image,
    measured with the font it is drawn with (a title wider than the figure was cut at its edge)."""
    from helpers import STUBS, grade, make_submission

    submission = make_submission(tmp_path / "sub", base=STUBS)
    for language in ("en", "zh"):
        drawn = _recording_texts(monkeypatch)
        proc, _score = grade(submission, tmp_path / language, "--topic", "fault_injection", "--lang", language)
        assert proc.returncode == 0, proc.stderr
        assert any(d["text"].startswith("Fault-injection lab") for d in drawn), drawn
        assert not _outside_the_image(drawn), (language, _outside_the_image(drawn))


def test_the_characters_drawn_without_reading_a_character_map_are_glyphs_of_both_dejavu_faces():
    """raster.IN_DEJAVU: texts made of these and ASCII skip fontTools and DejaVu's character map
    (~0.075 s of CPU per grading); each must be a real glyph of the regular and the bold face."""
    text = "".join(sorted(raster.IN_DEJAVU))
    for bold in (False, True):
        assert not _notdef_glyphs(raster._font_file(bold), 0, text), bold


def test_a_figure_of_ticks_and_crosses_loads_no_character_map():
    """The figures' own labels (a signal's ✓ or ✗) are drawn without importing fontTools; a text
    with a character outside IN_DEJAVU still reads the map (and finds a font for it)."""
    import subprocess
    import sys

    script = ("import sys\n"
              "from autograder.units.rnn_prehistory import raster\n"
              "fig = raster.Figure((4, 2), dpi=50)\n"
              "ax = fig.subplots(1, 1)[0]\n"
              "ax.plot([0, 1], [0, 1])\n"
              "fig.suptitle('rho = 0.5: \u2713 held, \u2717 not held \u2264 1e-10')\n"
              "assert fig.render().size\n"
              "print('fontTools' in sys.modules)\n"
              "raster.face_for('\u68af\u5ea6')\n"
              "print('fontTools' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
