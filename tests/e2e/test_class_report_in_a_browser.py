"""class.html as an instructor sees it: laid out by headless Chromium at a laptop's width, every
image loaded and no message cut off (issue 23). A small class graded on the public tests of two
topics: a full solution, the stubs, and a module that raises a long message when imported."""

from __future__ import annotations

import shutil

import pytest
from helpers import (
    CHROMIUM,
    NO_CHROMIUM,
    STUBS,
    make_submission,
    measured_in_chromium,
    run_grader,
    screenshot_in_chromium,
)

# The scenarios of one delivery path run in `make sweep` (CI runs it after `make test`);
# `make test` sends half-finished work through every path once (test_journey.py).
pytestmark = [pytest.mark.sweep, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

LONG_NAME = "my_rnn_helper_state_" * 20          # one word of 400 characters: no space to wrap at
NOTHING_CUT_OFF = r"""(() => {
  const clipping = [...document.querySelectorAll("body *")]
    .filter(e => ["hidden", "auto", "scroll", "clip"].includes(getComputedStyle(e).overflowX));
  return {
    missing_images: [...document.images].filter(i => !(i.naturalWidth > 0)).map(i => i.getAttribute("src")),
    cut: clipping.filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent.slice(0, 80)),
    wider_than_window: document.documentElement.scrollWidth - window.innerWidth,
    words_split: [...document.querySelectorAll("th, td")]
      .filter(c => c.children.length === 0 && /^\S{1,40}$/.test(c.textContent.trim()))
      .filter(c => { const r = document.createRange(); r.selectNodeContents(c);
                     return new Set([...r.getClientRects()].map(line => Math.round(line.top))).size > 1; })
      .map(c => c.textContent),
    text: document.body.innerText,
  };
})()"""


@pytest.fixture(scope="module")
def class_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    make_submission(tmp / "class" / "ann")
    shutil.copytree(STUBS, tmp / "class" / "bob", ignore=shutil.ignore_patterns("tests"))
    make_submission(tmp / "class" / "cy", files={"bptt.py": f"raise RuntimeError({LONG_NAME!r})\n"})
    proc = run_grader("batch", tmp / "class", "--out", tmp / "out", "--suite", "public", "--topic", "bptt",
                      "--topic", "attention", "--jobs", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr
    return tmp / "out"


def test_the_class_report_shows_every_image_and_message_whole(class_report, tmp_path):
    measured = measured_in_chromium(class_report / "class.html", NOTHING_CUT_OFF)
    assert "RuntimeError" in measured["text"], "the topic lost to an error is not in the report"
    assert measured["missing_images"] == []
    assert measured["cut"] == []
    assert measured["wider_than_window"] <= 0, "a message runs off the window's right edge"
    assert measured["words_split"] == [], "a short word is broken over lines"
    screenshot_in_chromium(class_report / "class.html", tmp_path / "class.png")
    assert (tmp_path / "class.png").read_bytes().startswith(b"\x89PNG")


def test_a_missing_figure_is_noticed(class_report, tmp_path):
    """The measure itself: without class.png beside it, the page shows a broken image."""
    page = tmp_path / "class.html"
    shutil.copyfile(class_report / "class.html", page)
    assert measured_in_chromium(page, NOTHING_CUT_OFF)["missing_images"] == ["class.png"]
