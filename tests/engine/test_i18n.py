"""English and Chinese: every student-facing text has both, through gettext catalogues."""

from __future__ import annotations

import gettext
import io
import re
import subprocess
import sys

import pytest
from helpers import REPO, STUBS, grade

from autograder import i18n

sys.path.insert(0, str(REPO / "scripts"))
import i18n as catalogues  # noqa: E402  (scripts/i18n.py: extraction and merge)

PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _all_catalogues():
    """Per part (the engine, the unit): (catalogue file, the messages it must translate) of
    each of its catalogues; the unit has its own and one per topic (scripts/i18n.py splits them)."""
    engine = [(i18n.catalogue(i18n.ENGINE_LOCALE, i18n.ENGINE_DOMAIN, "zh"), catalogues.engine_messages())]
    from autograder.unit.load import load_unit
    unit = load_unit("rnn_prehistory")
    split = catalogues.by_catalogue(unit, catalogues.unit_messages(unit))
    return [engine, [(i18n.catalogue(folder, i18n.UNIT_DOMAIN, "zh"), messages) for folder, messages in split.items()]]


def test_the_catalogues_are_in_step_with_the_code():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "i18n.py"), "--check"], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("index", [0, 1], ids=["engine", "unit"])
def test_every_message_has_a_chinese_translation_with_the_same_placeholders(index):
    for po, messages in _all_catalogues()[index]:
        _check_translated(po, messages)


def _check_translated(po, messages):
    translated = i18n.read_po(po.read_text(encoding="utf-8")) if po.is_file() else {}
    missing = [m for m in messages if not translated.get(m)]
    assert not missing, f"{len(missing)} untranslated in {po}, e.g. {missing[:5]}"
    wrong = [m for m in messages if sorted(set(PLACEHOLDER.findall(m))) != sorted(set(PLACEHOLDER.findall(translated[m])))]
    assert not wrong, f"placeholders differ: {wrong[:5]}"
    untranslated = [m for m in messages if not re.search(r"[\u4e00-\u9fff]", translated[m])
                    and re.search(r"[A-Za-z]{4,}", PLACEHOLDER.sub("", m))]
    assert not untranslated, f"translations without Chinese: {untranslated[:5]}"


def test_a_topics_own_text_is_in_its_folders_catalogue():
    """A text only one topic uses (its rubric's hint, its suite's message) travels with the
    topic's folder; a text two topics use stays in the unit's catalogue."""
    from autograder.unit.load import load_unit
    unit = load_unit("rnn_prehistory")
    split = catalogues.by_catalogue(unit, catalogues.unit_messages(unit))
    hint = next(t.hint for t in unit.rubric.topic("bleu").tests if t.visibility == "hidden")
    assert hint in split[unit.topic("bleu").folder / "locale"]
    assert unit.signals_title in split[unit.path / "locale"]
    shared = [text for text, wheres in catalogues.unit_messages(unit).items()
              if len({catalogues.topic_of(unit, w) for w in wheres}) > 1]
    assert shared and all(text in split[unit.path / "locale"] for text in shared)
    bleu_po = i18n.catalogue(unit.topic("bleu").folder / "locale", i18n.UNIT_DOMAIN, "zh")
    assert i18n.read_po(bleu_po.read_text(encoding="utf-8")).get(hint)


def test_compiled_catalogues_read_back_through_the_standard_gettext():
    """Our .mo writer against Python's own gettext reader (the outside oracle)."""
    messages = {"": "Content-Type: text/plain; charset=UTF-8\n", "hint": "提示", "a {x} b": "甲 {x} 乙",
                "untranslated": "", "line\nbreak": "换\n行"}
    tr = gettext.GNUTranslations(io.BytesIO(i18n.compile_mo(messages)))
    assert tr.gettext("hint") == "提示" and tr.gettext("a {x} b") == "甲 {x} 乙"
    assert tr.gettext("line\nbreak") == "换\n行"
    assert tr.gettext("untranslated") == "untranslated" and tr.gettext("other") == "other"


def test_po_files_round_trip_through_our_reader():
    po = catalogues.render_po({"say \"hi\"\n": ["x.py:1"], "plain": ["y.py:2"]}, {"say \"hi\"\n": "说“嗨”\n"}, "zh")
    assert i18n.read_po(po)["say \"hi\"\n"] == "说“嗨”\n"
    assert i18n.read_po(po)["plain"] == ""
    assert i18n.read_po('#, fuzzy\nmsgid "a"\nmsgstr "b"\n\nmsgid "c"\nmsgstr ""\n"d"\n') == {"c": "d"}


@pytest.mark.parametrize("environ,expected", [
    ({}, "en"), ({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANGUAGE": "zh_TW:en", "LANG": "en_US.UTF-8"}, "zh"), ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LC_MESSAGES": "zh_CN.UTF-8"}, "zh"),
])
def test_the_language_follows_the_locale(environ, expected):
    assert i18n.language_from_environment(environ) == expected


def test_a_chinese_report(tmp_path):
    proc, score = grade(STUBS, tmp_path / "out", "--topic", "bptt", "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    assert score["lang"] == "zh"
    md = (tmp_path / "out" / "score.md").read_text()
    assert "自动评分" in md and "未实现" in md and "请填写" in md
    assert "fill in" not in md and "graded in" not in md
    assert "总计" in proc.stdout


def test_the_locale_chooses_chinese_when_no_lang_is_given(tmp_path):
    proc, score = grade(STUBS, tmp_path / "out", "--topic", "bptt", env={"LANGUAGE": "", "LC_ALL": "",
                                                                        "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"})
    assert proc.returncode == 0, proc.stderr
    assert score["lang"] == "zh"
