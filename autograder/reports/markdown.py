"""reports/score.md: for a pull-request comment or a CI job summary (rendered as Markdown)."""

from __future__ import annotations

from autograder.grading.score import GradeResult
from autograder.reports.text import markdown, one_line

STATUS_WORDS = {"graded": "graded", "not_implemented": "not implemented", "error": "error",
                "timeout": "timeout", "crashed": "crashed"}


def pct(earned: float, possible: float) -> str:
    return f"{100 * earned / possible:.0f}%" if possible else "-"


def render(result: GradeResult, images=()) -> str:
    lines = [f"## Autograder: {result.assignment} — {result.earned:g} / {result.possible:g} "
             f"({pct(result.earned, result.possible)})", "",
             "| topic | score | status |", "|---|---:|---|"]
    for t in result.topics:
        lines.append(f"| `{t.id}` | {t.earned:g} / {t.possible:g} | {STATUS_WORDS[t.status]} |")
    lines.append("")
    for t in result.topics:
        failed = [x for x in t.tests if not x.passed]
        if not failed and not t.message:
            continue
        lines.append(f"### `{t.id}` ({t.earned:g} / {t.possible:g})")
        if t.message:
            lines += ["", f"> {markdown(t.message)}"]
        lines.append("")
        for x in failed:
            lines.append(f"- **{x.id}** ({x.outcome}, 0 / {x.possible:g}): {markdown(x.message)}")
            if x.hint:
                lines.append(f"  - hint: {one_line(x.hint)}")
        lines.append("")
    if result.signals:
        lines += [f"### {result.signals_title}", "", "| signal | holds |", "|---|---|"]
        lines += [f"| `{k}` | {'yes' if v else 'no'} |" for k, v in result.signals.items()]
        lines.append("")
    for name, caption in images:
        lines += [f"![{caption}]({name})", ""]
    lines.append(f"_graded in {result.duration_s:.2f} s; inputs drawn with seed {result.seed} "
                 f"(replay: `--seed {result.seed}`)_")
    return "\n".join(lines) + "\n"
