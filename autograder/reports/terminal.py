"""The table printed after `make grade`."""

from __future__ import annotations

from pathlib import Path

from autograder.grading.score import GradeResult
from autograder.reports.markdown import STATUS_WORDS, pct, seed_note, tamper_note
from autograder.reports.text import one_line, terminal


def stopped(topic) -> str:
    """", 2 tests timed out": what a graded topic's score alone does not say."""
    n = sum(x.outcome == "timeout" for x in topic.tests)
    return f", {n} test{'s' if n > 1 else ''} timed out" if topic.status == "graded" and n else ""


def table(result: GradeResult, out_dir: Path | None = None) -> str:
    width = max([len(t.id) for t in result.topics] + [5])
    rows = [f"{'topic':<{width}}  {'score':>13}  status", f"{'-' * width}  {'-' * 13}  {'-' * 16}"]
    for t in result.topics:
        pts = f"{t.earned:g} / {t.possible:g}"
        rows.append(f"{t.id:<{width}}  {pts:>13}  {STATUS_WORDS[t.status]}{stopped(t)}")
        if t.message:
            rows.append(f"{'':<{width}}  {'':>13}  -> {one_line(terminal(t.message), 400)}")
    total = f"{result.earned:g} / {result.possible:g}"
    rows += [f"{'-' * width}  {'-' * 13}", f"{'total':<{width}}  {total:>13}  "
             f"({pct(result.earned, result.possible)}, {result.duration_s:.2f} s)"]
    if result.graded_later:
        rows.append(f"hidden tests worth {result.graded_later:g} more points are graded later by your instructor")
    if result.tampered:
        rows.append(terminal(tamper_note(result)))
    if out_dir is not None:
        rows.append(f"details and hints: {out_dir / 'score.md'}")
    rows.append(seed_note(result))
    return "\n".join(rows)
