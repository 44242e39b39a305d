"""The table printed after `make grade`."""

from __future__ import annotations

from pathlib import Path

from autograder.grading.score import GradeResult
from autograder.i18n import _
from autograder.reports.markdown import STATUS_WORDS, pct, seed_note, tamper_note
from autograder.reports.text import one_line, terminal


def stopped(topic) -> str:
    """", 2 tests timed out": what a graded topic's score alone does not say."""
    n = sum(x.outcome == "timeout" for x in topic.tests)
    if topic.status != "graded" or not n:
        return ""
    return _(", 1 test timed out") if n == 1 else _(", {n} tests timed out").format(n=n)


def table(result: GradeResult, out_dir: Path | None = None) -> str:
    width = max([len(t.id) for t in result.topics] + [5])
    rows = [f"{_('topic'):<{width}}  {_('score'):>13}  {_('status')}", f"{'-' * width}  {'-' * 13}  {'-' * 16}"]
    for t in result.topics:
        pts = f"{t.earned:g} / {t.possible:g}"
        rows.append(f"{t.id:<{width}}  {pts:>13}  {_(STATUS_WORDS[t.status])}{stopped(t)}")
        if t.message:
            rows.append(f"{'':<{width}}  {'':>13}  -> {one_line(terminal(t.message), 400)}")
    total = f"{result.earned:g} / {result.possible:g}"
    rows += [f"{'-' * width}  {'-' * 13}", f"{_('total'):<{width}}  {total:>13}  "
             f"({pct(result.earned, result.possible)}, {result.duration_s:.2f} s)"]
    if result.graded_later:
        rows.append(_("hidden tests worth {points} more points are graded later by your instructor").format(
            points=f"{result.graded_later:g}"))
    if result.tampered:
        rows.append(terminal(tamper_note(result)))
    if out_dir is not None:
        rows.append(_("details and hints: {path}").format(path=out_dir / "score.md"))
    rows.append(seed_note(result))
    return "\n".join(rows)
