"""Student-derived text is inert in every report format (unit level; end to end in
tests/containment/test_attacks.py): Markdown/HTML escaped in score.md, no control characters in
the terminal or in junit.xml, no formula in a CSV cell."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET

from autograder.grading.score import GradeResult, TestOutcome, TopicResult
from autograder.reports import gradescope_results, junit, markdown, terminal
from autograder.reports.text import csv_cell, plain
from autograder.reports.text import markdown as md_text
from autograder.unit.test_ids import TestId

HOSTILE = ("boom\n# Fake heading\n| bptt | 20 / 20 | graded |\n<img src=http://x.invalid/beacon>"
           "<script>alert(1)</script> ![x](http://x.invalid/i.png) [link](http://x.invalid) "
           "\x1b[2J\x1b]8;;http://x.invalid\x07click\x1b]8;;\x07 \x00nul \x07bell \x9bcsi \ud800")


def hostile_result() -> GradeResult:
    test = TestOutcome(TestId.parse("public::test_x"), 0.0, 1.0, "error", HOSTILE, "a hint")
    topic = TopicResult("bptt", "t", "bptt", "error", HOSTILE, [test])
    return GradeResult("unit", "sub", seed=1, duration_s=0.1, topics=[topic])


def test_markdown_has_no_raw_html_heading_table_or_link():
    md = markdown.render(hostile_result())
    assert not re.search(r"<[A-Za-z/!]", md), md
    assert "\x1b" not in md and "\x00" not in md
    own = ("## Autograder:", "### `bptt`")
    assert all(line.startswith(own) for line in md.splitlines() if line.lstrip("> -").startswith("#")), md
    assert "\n| bptt | 20 / 20" not in md
    assert "![x](" not in md and "[link](" not in md


def test_junit_parses_and_holds_no_control_character():
    text = junit.render(hostile_result())
    root = ET.fromstring(text.split("\n", 1)[1])
    message = root.find(".//error").get("message") + root.find(".//error").text
    assert "boom" in message and not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", message)


def test_terminal_and_gradescope_hold_no_escape_sequence():
    table = terminal.table(hostile_result())
    assert "\x1b" not in table and "\x07" not in table and "\x9b" not in table
    output = json.loads(gradescope_results.render(hostile_result()))["tests"][0]["output"]
    assert "\x1b" not in output and "\x00" not in output


def test_csv_cells_never_start_a_formula():
    for value in ['=HYPERLINK("http://x.invalid","y")', "+1", "-1+2", "@SUM(A1)", "\t=1"]:
        cell = csv_cell(value)
        assert cell[0] not in "=+-@\t\r", cell
        row = next(csv.reader(io.StringIO(cell.replace('"', '""').join('""'))))
        assert row[0] == cell


def test_sanitisers_keep_ordinary_text():
    assert plain("dWh = x^T da, shape (H, H)\nnext line") == "dWh = x^T da, shape (H, H)\nnext line"
    assert md_text("relative error 1.2e-03 (allowed 1e-07)") == "relative error 1.2e-03 (allowed 1e-07)"
    assert csv_cell("alice") == "alice" and csv_cell(20.0) == "20.0"


def test_every_report_of_a_hostile_result_can_be_written(tmp_path):
    from autograder import reports

    written = reports.write_all(tmp_path, hostile_result())
    assert {p.name for p in written} == {"score.md", "junit.xml", "results.json", "score.json"}
    assert json.loads((tmp_path / "score.json").read_text())["topics"][0]["tests"][0]["message"].startswith("boom")


# What GitHub would link or notify in a comment: a bidi override, bare URLs, @mentions,
# an e-mail address and an issue reference, in a message the student's code raised.
GITHUB_BAIT = ("\u202eevil\u202c see https://x.invalid/a, www.x.invalid, ping @octocat and "
               "mallory@x.invalid, closes #12; \u2066isolate\u2069 \u200fmark")
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# GitHub's mention and issue-reference patterns, applied to the text it renders.
MENTION = re.compile(r"(?<![\w/-])@[A-Za-z0-9][A-Za-z0-9-]*")
ISSUE_REF = re.compile(r"(?<![\w/-])#\d+")


def _github_html(markdown_text: str) -> str:
    """HTML as GitHub's own Markdown library (cmark-gfm, autolink extension on) renders it."""
    import cmarkgfm

    return cmarkgfm.github_flavored_markdown_to_html(markdown_text)


def test_markdown_outputs_make_no_link_mention_or_bidi_override():
    test = TestOutcome(TestId.parse("public::test_x"), 0.0, 1.0, "error", GITHUB_BAIT, "a hint")
    topic = TopicResult("bptt", "t", "bptt", "error", GITHUB_BAIT, [test])
    graded = TopicResult("attention", "t", "attention", "graded", "", [test])
    result = GradeResult("unit", "sub", seed=1, duration_s=0.1, topics=[topic, graded])
    results_json = json.loads(gradescope_results.render(result))
    for text in (markdown.render(result), results_json["tests"][0]["output"]):
        assert "x.invalid" in text and "octocat" in text, "the student's text is kept, readable"
        rendered = _github_html(text)
        assert "<a " not in rendered and "href" not in rendered, rendered
        visible_text = re.sub(r"<[^>]+>", "", rendered).replace("\u2060", "")   # what a reader sees
        assert "@octocat" in visible_text, "the text reads as written"
        assert not MENTION.search(re.sub(r"<[^>]+>", "", rendered)), rendered
        assert not ISSUE_REF.search(re.sub(r"<[^>]+>", "", rendered)), rendered
        assert not BIDI.search(text), ascii(text)
    for text in (terminal.table(result), junit.render(result), csv_cell(GITHUB_BAIT)):
        assert not BIDI.search(text), ascii(text)


def test_markdown_shows_comparisons_and_ampersands_as_written():
    """score.md is read as text too (an editor, a terminal): `>=` and a lone `&` stay as they
    are; `<` and an `&` that would start a character reference are escaped, so no tag starts."""
    from autograder.reports.text import markdown
    assert markdown("keep |g| >= 1e-3 & clip") == r"keep \|g\| >= 1e-3 & clip"
    shown = markdown("<script>alert(1)</script> &lt; &#60;")
    assert "<" not in shown and "&lt;" in shown and "&amp;lt;" in shown
