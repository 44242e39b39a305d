"""The table printed after `make grade`."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from autograder.grading.score import GradeResult, Outcome, TopicStatus
from autograder.i18n import _
from autograder.reports.markdown import STATUS_WORDS, pct, seed_note, tamper_note
from autograder.reports.text import one_line, terminal


def stopped(topic) -> str:
    """", 2 tests timed out": what a graded topic's score alone does not say."""
    n = sum(x.outcome == Outcome.TIMEOUT for x in topic.tests)
    if topic.status != TopicStatus.GRADED or not n:
        return ""
    return _(", 1 test timed out") if n == 1 else _(", {n} tests timed out").format(n=n)


def columns(text: str) -> int:
    """The terminal columns `text` takes: a wide or full-width character (Chinese) takes two,
    a combining mark none (len() would misalign a translated table)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def left(text: str, width: int) -> str:
    return text + " " * max(0, width - columns(text))


def right(text: str, width: int) -> str:
    return " " * max(0, width - columns(text)) + text


SCORE = 13      # columns of the score column


def table(result: GradeResult, out_dir: Path | None = None) -> str:
    width = max(columns(text) for text in [t.id for t in result.topics] + [_("topic"), _("total"), "-" * 5])
    rows = [f"{left(_('topic'), width)}  {right(_('score'), SCORE)}  {_('status')}",
            f"{'-' * width}  {'-' * SCORE}  {'-' * 16}"]
    for t in result.topics:
        pts = f"{t.earned:g} / {t.possible:g}"
        rows.append(f"{left(t.id, width)}  {right(pts, SCORE)}  {_(STATUS_WORDS[t.status])}{stopped(t)}")
        if t.message:
            rows.append(f"{'':<{width}}  {'':>{SCORE}}  -> {one_line(terminal(t.message), 400)}")
    total = f"{result.earned:g} / {result.possible:g}"
    rows += [f"{'-' * width}  {'-' * SCORE}", f"{left(_('total'), width)}  {right(total, SCORE)}  "
             f"({pct(result.earned, result.possible)}, {result.duration_s:.2f} s)"]
    if result.graded_later:
        rows.append(_("hidden tests worth {points} more points are graded later by your instructor").format(
            points=f"{result.graded_later:g}"))
    if result.tampered:
        rows.append(terminal(tamper_note(result)))
    if result.refused:
        rows.append(terminal(_("Not graded, every test counts 0: {why}").format(why=result.refused)))
    if out_dir is not None:
        rows.append(_("details and hints: {path}").format(path=out_dir / "score.md"))
    if not result.refused:
        rows.append(seed_note(result))
    return "\n".join(rows)
