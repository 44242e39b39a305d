"""reports/score.md: for a pull-request comment or a CI job summary (rendered as Markdown).

`hidden_detail` is the instructor's choice of how much of the hidden tests students see:
"hints" (names, messages and hints), "tests" (names and messages), "total" (per topic only).
"""

from __future__ import annotations

from autograder.grading.score import GradeResult
from autograder.reports.text import markdown, one_line

STATUS_WORDS = {"graded": "graded", "not_implemented": "not implemented", "error": "error",
                "timeout": "timeout", "crashed": "crashed"}
HIDDEN_DETAIL = ("hints", "tests", "total")


def pct(earned: float, possible: float) -> str:
    return f"{100 * earned / possible:.0f}%" if possible else "-"


def seed_note(result: GradeResult) -> str:
    """Where this run's random inputs came from, in every format."""
    if result.seed_given:
        return f"inputs drawn with seed {result.seed}, as asked (--seed {result.seed})"
    return (f"inputs drawn with seed {result.seed}, derived from your files: the same files always get the same "
            f"inputs and score (replay: --seed {result.seed})")


def tamper_note(result: GradeResult, name=str, label: str = "TAMPERED:") -> str:
    """The tampering notice of every format; `name` formats each file name (the names come
    from the instructor's manifest, not from the student)."""
    if not result.tampered:
        return ""
    files = ", ".join(map(name, result.tampered[:20])) + (" …" if len(result.tampered) > 20 else "")
    return (f"{label} {len(result.tampered)} protected file(s) differ from the instructor's copy: {files}. "
            "The score was computed with the original files.")


def same_message(tests) -> list[list]:
    """Failed tests grouped by outcome and message, in order: a message that many tests
    share (a syntax error, a missing function) is shown once, with the tests it covers."""
    groups: dict[tuple[str, str], list] = {}
    for x in tests:
        groups.setdefault((x.outcome, x.message), []).append(x)
    return list(groups.values())


def oral_exam(result: GradeResult) -> list[str]:
    """Per oral-exam question: ready, not yet (how many backing tests fail), not graded, or no
    exercise. One line when nothing is ready yet (a fresh start needs no table of "not yet")."""
    rows = result.oral_exam
    if not rows:
        return []
    backed = [r for r in rows if r["status"] != "no exercise"]
    if not any(r["status"] == "ready" for r in rows):
        return [f"**{result.oral_exam_title}:** none of the {len(backed)} questions backed by this assignment's "
                f"tests is ready yet ({len(rows) - len(backed)} have no exercise).", ""]
    lines = [f"### {result.oral_exam_title}", "", "_ready: every test that backs the question passes, so your code "
             "can show the answer; the explanation is still yours to give._", "",
             "| # | question | status |", "|---:|---|---|"]
    for r in rows:
        status = r["status"]
        if r["failing"]:
            status += f" ({len(r['failing'])} of {len(r['tests'])} tests fail)"
        lines.append(f"| {r['question']} | {one_line(r['text'])} | {status} |")
    return lines + [""]


def render(result: GradeResult, images=(), hidden_detail: str = "hints") -> str:
    lines = [f"## Autograder: {result.assignment} — {result.earned:g} / {result.possible:g} "
             f"({pct(result.earned, result.possible)})", ""]
    if result.tampered:
        lines += [f"> {tamper_note(result, name=lambda f: f'`{f}`', label='**TAMPERED:**')}", ""]
    later = result.graded_later
    lines += ["| topic | score | status |", "|---|---:|---|"]
    for t in result.topics:
        extra = f" (+{t.graded_later:g} graded later)" if t.graded_later else ""
        lines.append(f"| `{t.id}` | {t.earned:g} / {t.possible:g}{extra} | {STATUS_WORDS[t.status]} |")
    lines.append("")
    if later:
        lines += [f"These are the public tests. Hidden tests worth {later:g} more points are graded later, "
                  "by your instructor's grader.", ""]
    for t in result.topics:
        failed = [x for x in t.tests if not x.passed]
        shown = [x for x in failed if hidden_detail != "total" or not x.id.startswith("hidden::")]
        summary = [x for x in t.tests if x.id.startswith("hidden::")] if hidden_detail == "total" else []
        if not shown and not t.message and not (summary and any(not x.passed for x in summary)):
            continue
        lines.append(f"### `{t.id}` ({t.earned:g} / {t.possible:g})")
        if t.message:
            lines += ["", f"> {markdown(t.message)}"]
        lines.append("")
        if t.status != "graded":      # nothing ran (not implemented, does not import, ...): the line above says why
            continue
        for group in same_message(shown):
            x = group[0]
            names = ", ".join(f"**{g.id}**" for g in group)
            points = sum(g.possible for g in group)
            lines.append(f"- {names} ({x.outcome}, 0 / {points:g}): {markdown(x.message)}")
            hints = list(dict.fromkeys(g.hint for g in group if g.hint and (hidden_detail == "hints"
                                                                              or not g.id.startswith("hidden::"))))
            lines += [f"  - hint: {one_line(h)}" for h in hints]
        if summary:
            earned, possible = sum(x.earned for x in summary), sum(x.possible for x in summary)
            lines.append(f"- hidden tests: {earned:g} / {possible:g}")
        lines.append("")
    if result.signals:
        lines += [f"### {result.signals_title}", "", "| signal | holds |", "|---|---|"]
        lines += [f"| `{k}` | {'yes' if v else 'no'} |" for k, v in result.signals.items()]
        lines.append("")
    lines += oral_exam(result)
    for name, caption in images:
        lines += [f"![{caption}]({name})", ""]
    lines.append(f"_graded in {result.duration_s:.2f} s; {seed_note(result)}_")
    return "\n".join(lines) + "\n"
