"""The class report in English and Chinese (issue 34.6): the same commonest hints in both (a
hint counted by its rubric entry, not its translation; ties in the order the class showed
them), equal diagnoses counted together beside Chinese text, statistics with one decimal,
headings in the run's language, and no literal backtick in class.html."""

from __future__ import annotations

import json
import re

from helpers import UNIT

from autograder import i18n
from autograder.reports import class_report

TOPIC = "bptt"
HINTS = list(UNIT.rubric.topic(TOPIC).tests)       # every test's rubric hint (an English msgid)


def _class(out, lang: str) -> list[dict]:
    """Twelve students: every hint of the topic shown by the same number of students (ties
    everywhere: which TOP_PER_TOPIC are shown is the tie-break's choice), one diagnosis with
    each student's own numbers, and a lost topic whose message has a command in backticks."""
    rows = []
    with i18n.speaking(lang):
        diagnosis = i18n._("{where} = {got} where {right} is right")
        for k in range(12):
            name = f"s{k:02d}"
            tests = [{"id": str(t.id), "outcome": "failed", "kind": "value", "message": "wrong",
                      "hint": i18n._(t.hint), "earned": 0.0, "possible": t.points}
                     for i, t in enumerate(HINTS) if (i + k) % 3 == 0]
            tests.append({"id": str(HINTS[0].id), "outcome": "failed", "kind": "diagnosed", "hint": "",
                          "message": (f"第{k}步: " if lang == "zh" else f"step {k}: ")
                          + diagnosis.format(where="dh", got=f"{k}.5", right="2"), "earned": 0.0, "possible": 1.0})
            score = {"topics": [{"id": TOPIC, "status": "graded", "tests": tests},
                                {"id": "bleu", "status": "error", "message": "run `python -c \"import bleu\"`"}]}
            folder = class_report.student_folder(out, name)
            folder.mkdir(parents=True)
            (folder / "score.json").write_text(json.dumps(score, ensure_ascii=False), encoding="utf-8")
            rows.append({"submission": name, "status": "graded", "earned": f"{37.2807 + k:.4f}", "possible": "100",
                         TOPIC: f"{k + 0.2807:.4f}", f"{TOPIC}_status": "graded", "bleu": "0", "bleu_status": "error"})
    return rows


def _shown(out, lang: str):
    rows = _class(out, lang)
    with i18n.speaking(lang):
        return class_report.summarise(out, UNIT, rows, "v"), rows


def test_the_same_hints_are_the_commonest_in_english_and_chinese(tmp_path):
    en, _rows = _shown(tmp_path / "en", "en")
    zh, _rows = _shown(tmp_path / "zh", "zh")
    en_hints = [(w, n) for t, w, n in en.misconceptions if t == TOPIC]
    zh_hints = [(w, n) for t, w, n in zh.misconceptions if t == TOPIC]
    assert len(en_hints) == class_report.TOP_PER_TOPIC and len(en_hints) < len(HINTS), "ties cut the list"
    with i18n.speaking("zh"):
        translated = [(i18n._(w) if w in {t.hint for t in HINTS} else None, n) for w, n in en_hints]
    diagnosed = [i for i, (w, _n) in enumerate(en_hints) if "where # is right" in w]
    assert [n for _w, n in en_hints] == [n for _w, n in zh_hints]
    for i, ((want, _n), (got, _m)) in enumerate(zip(translated, zh_hints)):
        if i in diagnosed:
            assert "#" in got and "第" in got, got
        else:
            assert got == want, (i, en_hints[i][0][:60], got[:40])


def test_one_diagnosis_with_each_students_numbers_counts_once_per_student_beside_chinese(tmp_path):
    for lang in ("en", "zh"):
        summary, _rows = _shown(tmp_path / lang, lang)
        diagnoses = [(w, n) for t, w, n in summary.misconceptions if t == TOPIC and "#" in w]
        assert diagnoses and diagnoses[0][1] == 12, (lang, diagnoses)


def test_the_class_files_in_chinese_have_chinese_headings_one_decimal_and_no_backtick(tmp_path):
    out = tmp_path / "zh"
    rows = _class(out, "zh")
    class_report.write(out, UNIT, rows, "v", None, "zh")
    md = (out / "class.md").read_text(encoding="utf-8")
    page = (out / "class.html").read_text(encoding="utf-8")
    headings = re.findall(r"^##? (.*)$", md, re.MULTILINE)
    assert headings and all(re.search(r"[\u4e00-\u9fff]", h) for h in headings), headings
    numbers = re.findall(r"\d+\.\d+", " ".join(line for line in md.splitlines() if "最低" in line))
    assert numbers and all(len(n.split(".")[1]) == 1 for n in numbers), numbers
    text = re.sub(r"<style>.*?</style>", "", page, flags=re.DOTALL)
    assert "`" not in text, re.findall(r".{40}`.{40}", text)
    assert "<code>python -c &quot;import bleu&quot;</code>" in page


def test_class_png_bars_are_as_tall_as_their_counts_and_the_axis_counts_whole_students():
    """class.png is drawn with Pillow (reports/histograms.py). Read back, each band's bar is
    as tall as its count of students on the panel's scale, empty bands have no bar, and the
    count axis has whole numbers only, up to at least the tallest bar."""
    import io

    from PIL import Image

    from autograder.reports import histograms

    counts = [0, 1, 2, 3, 0, 5, 8, 1, 0, 4]
    edges = list(range(0, 101, 10))
    image = Image.open(io.BytesIO(histograms.png("t", [("one", counts)], edges, "%"))).convert("RGB")
    pixels = image.load()
    w, h = round(histograms.PANEL_W * histograms.DPI), round(histograms.PANEL_H * histograms.DPI)
    left, right, top, bottom = 34, w - 10, 30 + 22, 30 + h - 34
    heights = []
    for band in range(10):
        x = round(left + (right - left) * (band + 0.5) / 10)
        heights.append(sum(pixels[x, y] == histograms.BAR for y in range(top, bottom + 1)))
    assert [h > 0 for h in heights] == [c > 0 for c in counts], heights
    per_student = heights[counts.index(1)]
    for h_px, c in zip(heights, counts):
        assert abs(h_px - c * per_student) <= c, (heights, counts)     # a white edge line per bar at most
    for top_count in (0, 1, 2, 3, 7, 11, 40, 199, 1234):
        ticks = histograms.integer_ticks(top_count)
        assert all(type(t) is int for t in ticks) and ticks[0] == 0 and ticks[-1] >= top_count
        assert 2 <= len(ticks) <= 6


def test_the_class_report_is_drawn_without_matplotlib(tmp_path):
    """Importing matplotlib and drawing the ten panels with it cost ~1 CPU-s of every batch run."""
    import subprocess
    import sys

    code = ("import sys; from autograder.reports import class_report; "
            "s = class_report.ClassSummary('u', '', 2, [class_report.TopicStats('a', 10.0, [5.0, 10.0])], [50.0, 100.0],"
            " [], [], [], [], []); "
            "assert class_report.render_png(s)[:8] == b'\\x89PNG\\r\\n\\x1a\\n'; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
