"""reports/score.md: for a pull-request comment or a CI job summary (rendered as Markdown).

`hidden_detail` is the instructor's choice of how much of the hidden tests students see:
"hints" (names, messages and hints), "tests" (names and messages), "total" (per topic only).
"""

from __future__ import annotations

from autograder.grading.score import GradeResult, Outcome, TopicStatus
from autograder.i18n import N_, _
from autograder.reports.detail import visible
from autograder.reports.text import markdown, one_line
from autograder.unit.oral_exam import Readiness
from autograder.unit.test_ids import HIDDEN_TOTAL

STATUS_WORDS: dict[str, str] = {
    TopicStatus.GRADED: N_("graded"), TopicStatus.NOT_IMPLEMENTED: N_("not implemented"),
    TopicStatus.ERROR: N_("error"), TopicStatus.TIMEOUT: N_("timeout"), TopicStatus.CRASHED: N_("crashed")}
OUTCOME_WORDS: dict[str, str] = {Outcome.PASSED: N_("passed"), Outcome.FAILED: N_("failed"), Outcome.ERROR: N_("error"),
                                 Outcome.TIMEOUT: N_("timeout")}
READINESS_WORDS = {Readiness.READY: N_("ready"), Readiness.NOT_YET: N_("not yet"),
                   Readiness.NOT_GRADED: N_("not graded"), Readiness.NO_EXERCISE: N_("no exercise")}


def pct(earned: float, possible: float) -> str:
    return f"{100 * earned / possible:.0f}%" if possible else "-"


def seed_note(result: GradeResult) -> str:
    """Where this run's random inputs came from, in every format ("" when nothing was graded)."""
    if result.refused:
        return ""
    if result.seed_given:
        return _("inputs drawn with seed {seed}, as asked (--seed {seed})").format(seed=result.seed)
    return _("inputs drawn with seed {seed}, derived from your files: the same files always get the same "
             "inputs and score (replay: --seed {seed})").format(seed=result.seed)


def percent(value: float) -> str:
    return f"{round(value, 2):g}%"


def pass_mark_note(result: GradeResult) -> str:
    """Whether the score reached the pass mark (--fail-under), in every format that shows the score."""
    if result.pass_mark is None:
        return ""
    if result.below_pass_mark:
        return _("Below the pass mark: {score} of the points, {mark} needed.").format(
            score=percent(result.percent), mark=percent(result.pass_mark))
    return _("Pass mark reached: {score} of the points, {mark} needed.").format(
        score=percent(result.percent), mark=percent(result.pass_mark))


def tamper_note(result: GradeResult, name=str, label: str | None = None) -> str:
    """The tampering notice of every format; `name` formats each file name (the names come
    from the instructor's manifest, not from the student)."""
    if not result.tampered:
        return ""
    files = ", ".join(map(name, result.tampered[:20])) + (" …" if len(result.tampered) > 20 else "")
    return _("{label} {n} file(s) outside your modules differ from the instructor's copy or were added: "
             "{files}. The score was computed with the original files.").format(
        label=label or _("TAMPERED:"), n=len(result.tampered), files=files)


def refusal_note(result: GradeResult) -> str:
    """Why nothing was graded (a refused submission), in every format."""
    return _("Not graded, every test counts 0: {why}").format(why=markdown(result.refused, 1000)) \
        if result.refused else ""


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
    backed = [r for r in rows if r["status"] != Readiness.NO_EXERCISE]
    if not any(r["status"] == Readiness.READY for r in rows):
        return [_("**{title}:** none of the {n} questions backed by this assignment's tests is ready yet "
                  "({m} have no exercise).").format(title=_(result.oral_exam_title), n=len(backed),
                                                    m=len(rows) - len(backed)), ""]
    lines = [f"### {_(result.oral_exam_title)}", "",
             _("_ready: every test that backs the question passes, so your code can show the answer; the "
               "explanation is still yours to give._"), "",
             _("| # | question | status |"), "|---:|---|---|"]
    for r in rows:
        status = _(READINESS_WORDS[r["status"]])
        if r["failing"]:
            status += _(" ({n} of {m} tests fail)").format(n=len(r["failing"]), m=len(r["tests"]))
        lines.append(f"| {r['question']} | {one_line(r['text'])} | {status} |")
    return lines + [""]


def render(result: GradeResult, images=(), hidden_detail: str = "hints") -> str:
    """score.md, showing of the hidden tests what `hidden_detail` allows (reports.detail)."""
    result = visible(result, hidden_detail)
    lines = [_("## Autograder: {assignment} — {earned} / {possible} ({pct})").format(
        assignment=result.unit, earned=f"{result.earned:g}", possible=f"{result.possible:g}",
        pct=pct(result.earned, result.possible)), ""]
    if result.pass_mark is not None:
        lines += [f"**{pass_mark_note(result)}**", ""]
    if result.tampered:
        lines += [f"> {tamper_note(result, name=lambda f: f'`{f}`', label=_('**TAMPERED:**'))}", ""]
    if result.refused:
        lines += [f"> **{refusal_note(result)}**", ""]
    later = result.graded_later
    lines += [_("| topic | score | status |"), "|---|---:|---|"]
    for t in result.topics:
        extra = _(" (+{points} graded later)").format(points=f"{t.graded_later:g}") if t.graded_later else ""
        lines.append(f"| `{t.id}` | {t.earned:g} / {t.possible:g}{extra} | {_(STATUS_WORDS[t.status])} |")
    lines.append("")
    if later:
        lines += [_("These are the public tests. Hidden tests worth {points} more points are graded later, "
                    "by your instructor's grader.").format(points=f"{later:g}"), ""]
    for t in result.topics:
        failed = [x for x in t.tests if not x.passed and x.id != HIDDEN_TOTAL]
        hidden_total = next((x for x in t.tests if x.id == HIDDEN_TOTAL), None)
        if not failed and not t.message and (hidden_total is None or hidden_total.passed):
            continue
        lines.append(f"### `{t.id}` ({t.earned:g} / {t.possible:g})")
        if t.message:
            lines += ["", f"> {markdown(t.message)}"]
        lines.append("")
        if t.status != TopicStatus.GRADED:      # nothing ran (not implemented, does not import, ...): the line above says why
            continue
        for group in same_message(failed):
            x = group[0]
            names = ", ".join(f"**{g.id}**" for g in group)
            points = sum(g.possible for g in group)
            lines.append(f"- {names} ({_(OUTCOME_WORDS.get(x.outcome, x.outcome))}, 0 / {points:g}): {markdown(x.message)}")
            hints = list(dict.fromkeys(g.hint for g in group if g.hint))
            lines += [_("  - hint: {hint}").format(hint=one_line(h)) for h in hints]
        if hidden_total is not None:
            lines.append(_("- hidden tests: {earned} / {possible}").format(earned=f"{hidden_total.earned:g}",
                                                                           possible=f"{hidden_total.possible:g}"))
        lines.append("")
    if result.signals:
        lines += [f"### {_(result.signals_title)}", "", _("| signal | holds |"), "|---|---|"]
        lines += [f"| `{k}` | {_('yes') if v else _('no')} |" for k, v in result.signals.items()]
        lines.append("")
    lines += oral_exam(result)
    for name, caption in images:      # an image, or ("", why a file is not there), already translated
        lines += [f"![{_(caption)}]({name})" if name else f"> {markdown(caption)}", ""]
    lines.append(_("_graded in {seconds} s; {seed_note}_").format(seconds=f"{result.duration_s:.2f}",
                                                                 seed_note=seed_note(result)))
    return "\n".join(lines) + "\n"
