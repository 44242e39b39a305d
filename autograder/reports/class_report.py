"""The class report of a batch run (or of merged shards): class.md, class.html and
class.png, from class.csv's rows and the score.json of every graded submission.

What an instructor reads it for, in this order: how each topic went (its score
distribution), which tests failed most often, which misconceptions the hints and the
diagnoses named across the class (what to reteach), which submissions could not be graded,
and which were tampered with. The files are plain and static: no script, no network.
Student-derived text (folder names, messages) goes through the sanitiser of its format.
"""

from __future__ import annotations

import html
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import i18n
from autograder.grading.score import TopicStatus
from autograder.i18n import _
from autograder.reports import histograms
from autograder.reports.files import atomic_write
from autograder.reports.similarity import excerpt
from autograder.reports.submission_status import NOT_GRADED
from autograder.reports.text import csv_cell, markdown, one_line, plain

FILES = ("class.md", "class.html", "class.png")
STUDENTS = "students"         # DIR/students/<submission>/: apart from the class files, whatever a student is called
LOST = (TopicStatus.ERROR, TopicStatus.TIMEOUT, TopicStatus.CRASHED)   # a topic's statuses that cost it for another reason than its answers
TOP = 15                      # rows of the failing-tests table
TOP_PER_TOPIC = 4             # misconceptions shown per topic (every topic gets its own)
BINS = 10                     # score distribution: tenths of the topic's points
SHOWN_PAIRS = 30              # similar pairs in the report (similarity.csv has them all)
SHOWN_REGIONS = 4             # matching regions shown side by side per pair
# A number standing alone (N=3, 9.1e-01), not one inside a name (d2l, h_T1).
# Word characters are ASCII here: a number beside a Chinese character (第3步) stands alone.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d+(\.\d+)?(e[-+]?\d+)?(?![A-Za-z0-9_.])", re.IGNORECASE)


def student_folder(out: Path, submission: str) -> Path:
    """Where batch writes one submission's reports (and merge copies them)."""
    return Path(out) / STUDENTS / submission


@dataclass
class TopicStats:
    id: str
    possible: float
    scores: list[float] = field(default_factory=list)       # one per graded submission

    def histogram(self) -> list[int]:
        counts = [0] * BINS
        for s in self.scores:
            counts[min(BINS - 1, int(BINS * s / self.possible)) if self.possible else 0] += 1
        return counts


@dataclass
class ClassSummary:
    unit: str                                    # the unit's name
    grader_version: str
    submissions: int
    topics: list[TopicStats]
    totals: list[float]                          # percent, one per graded submission
    failing: list[tuple[str, int]]               # (topic/test id, students failing it)
    misconceptions: list[tuple[str, str, int]]   # (topic, what was named, students): rubric order, commonest first
    not_graded: list[tuple[str, str, str]]       # (submission, status, detail)
    lost: list[tuple[str, str, str, str]]        # (submission, topic, status, message): graded, a topic lost
    tampered: list[tuple[str, str]]              # (submission, files)
    similar: list = field(default_factory=list)  # similarity.Pair, most alike first
    prints: dict = field(default_factory=dict)   # submission -> its fingerprints.json (the regions' text)


def _misconception(test: dict, hints: dict[str, str]) -> tuple[str, str] | None:
    """(identity, text) of what a failing test told the student was wrong: the diagnosis its
    message names (the figures of the student's own numbers left out, so that equal diagnoses
    count together) or the rubric's misconception hint of a wrong value. A hint's identity is
    its rubric entry (the English msgid, `hints` maps test ids to them), not its translation:
    the same students count the same hints whatever the language of the run."""
    if test.get("kind") == "diagnosed":
        text = _NUMBER.sub("#", one_line(test.get("message", ""), 300))
        return "diagnosis: " + text, text
    if test.get("kind") == "value" and test.get("hint"):
        return "hint: " + hints.get(test.get("id", ""), test["hint"]), one_line(test["hint"], 300)
    return None


def summarise(out: Path, unit, rows: list[dict], version: str = "") -> ClassSummary:
    topics = [TopicStats(t.id, unit.rubric.topic(t.id).points) for t in unit.topics]
    failing: Counter[str] = Counter()                 # topic/test -> submissions failing it
    named: Counter[tuple[str, str]] = Counter()      # (topic, misconception's identity) -> submissions showing it
    texts: dict[tuple[str, str], str] = {}           # its text, in the run's language
    first: dict[tuple[str, str], tuple[int, int]] = {}   # where it was first seen: (student, test), class order
    hints = {t.id: {str(test.id): test.hint for test in unit.rubric.topic(t.id).tests} for t in topics}   # by score.json's id
    totals, not_graded, tampered, lost = [], [], [], []
    for student, row in enumerate(in_class_order(rows)):
        name = row["submission"]
        if row.get("tampered"):
            tampered.append((name, row["tampered"]))
        if row["status"] in NOT_GRADED:
            not_graded.append((name, row["status"], row.get("detail", "")))
            continue
        if row.get("possible"):
            totals.append(100.0 * float(row["earned"]) / float(row["possible"]))
        for t in topics:
            if row.get(t.id, "") != "":
                t.scores.append(float(row[t.id]))
        try:
            score = json.loads((student_folder(out, name) / "score.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            score = {}
        messages = {t.get("id"): t.get("message", "") for t in score.get("topics", [])}
        lost += [(name, t.id, row[f"{t.id}_status"], messages.get(t.id, "")) for t in topics
                 if row.get(f"{t.id}_status") in LOST]
        seen = set()
        for topic in score.get("topics", []):
            if topic.get("status") != TopicStatus.GRADED:      # not written, missing, or not importable: no misconception
                continue
            for place, test in enumerate(topic.get("tests", [])):
                # What is not written yet is not a misunderstanding: stubs are left out.
                if test.get("outcome") == "passed" or test.get("kind") == "not_implemented":
                    continue
                failing[f"{topic['id']}/{test['id']}"] += 1
                what = _misconception(test, hints.get(topic["id"], {}))
                if what is None:
                    continue
                key = (topic["id"], what[0])
                if key not in seen:      # once per student
                    seen.add(key)
                    named[key] += 1
                    texts.setdefault(key, what[1])
                    first.setdefault(key, (student, place))
    # The commonest of each topic, ties in the order the class first showed them: the same
    # set and order in every language (the texts' alphabetical order is not).
    shown = [(t.id, texts[key], n) for t in topics
             for key, n in sorted(((k, n) for k, n in named.items() if k[0] == t.id),
                                  key=lambda kn: (-kn[1], first[kn[0]]))[:TOP_PER_TOPIC]]
    return ClassSummary(unit.name, version, len(rows), topics, totals, _commonest(failing, TOP), shown,
                        not_graded, lost, tampered)


def _commonest(counter: Counter, top: int) -> list:
    """The `top` commonest entries, ties in name order (the same report whatever the row order)."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def in_class_order(rows: list[dict]) -> list[dict]:
    """The rows of a class in the order class.csv shows them: by the submission's cell, so
    that one run and merged shards give the same files."""
    return sorted(rows, key=lambda r: csv_cell(r["submission"]))


def _stats(values: list[float]) -> str:
    if not values:
        return "—"
    return _("mean {mean}, median {median}, min {low}, max {high}").format(
        mean=f"{statistics.fmean(values):.1f}", median=f"{statistics.median(values):.1f}", low=f"{min(values):.1f}",
        high=f"{max(values):.1f}")


def _bar(counts: list[int]) -> str:
    blocks = " ▁▂▃▄▅▆▇█"
    top = max(counts) or 1
    return "".join(blocks[round(8 * c / top)] if c else "·" for c in counts)


@dataclass
class Section:
    """One section of the report, as both formats show it: a table, or a sentence when empty."""
    heading: str
    columns: list[str]
    rows: list[list[str]]
    when_empty: str
    intro: str = ""
    numeric: frozenset = frozenset()        # columns aligned right
    code: frozenset = frozenset()           # columns shown as code (the histogram bars)
    wrap: frozenset = frozenset()           # columns of long words (test ids, paths, messages): they may
                                            # break anywhere rather than widen the table past the window


def sections(s: ClassSummary) -> list[Section]:
    topics = [[t.id, f"{t.possible:g}", str(len(t.scores)), str(sum(v >= t.possible for v in t.scores)),
               str(sum(v == 0 for v in t.scores)), _stats(t.scores), _bar(t.histogram())] for t in s.topics]
    return [
        Section(_("Score distribution per topic"),
                [_("topic"), _("points"), _("graded"), _("full marks"), _("zero"), _("statistics"),
                 _("0 → full (tenths)")], topics, _("No topic."), numeric=frozenset({1, 2, 3, 4}), code=frozenset({6})),
        Section(_("Most frequent failing tests"), [_("test"), _("students")], [[k, str(n)] for k, n in s.failing],
                _("No test failed."), numeric=frozenset({1}), wrap=frozenset({0})),
        Section(_("Misconceptions named across the class"), [_("topic"), _("misconception"), _("students")],
                [[t, w, str(n)] for t, w, n in s.misconceptions], _("None named."),
                intro=_("What the failing tests told students was wrong (a diagnosis, or the misconception hint of a "
                        "wrong value), counted once per student; the commonest few of each topic."),
                numeric=frozenset({2}), wrap=frozenset({1})),
        Section(_("Submissions that were not graded"), [_("submission"), _("status"), _("detail")],
                [list(row) for row in s.not_graded], _("Every submission was graded."), wrap=frozenset({2})),
        Section(_("Topics lost to an error, a timeout or a crash"),
                [_("submission"), _("topic"), _("status"), _("message")],
                [list(row) for row in s.lost], _("None: every graded topic ran to its tests' end."),
                intro=_("Graded submissions whose topic scored nothing for a reason other than its answers (a syntax "
                        "or import error, a hang, a crash): worth a look before the grades go out."),
                wrap=frozenset({3})),
        Section(_("Tampered submissions"), [_("submission"), _("protected files changed")],
                [list(row) for row in s.tampered],
                _("None: no protected file differs from the release (checked where a submission holds the "
                  "repository)."), wrap=frozenset({1})),
        Section(_("Similar submissions"),
                [_("submission"), _("submission"), _("alike"), _("shared fingerprints"), _("regions")],
                [[a, b, alike, str(n), where] for a, b, alike, n, where in _similar_rows(s)],
                _("No pair of submissions is unusually alike."),
                intro=_("Pairs whose own code (the stub and the code most of the class writes alike left out; names, "
                        "numbers, strings and layout ignored) is byte-identical, or shares at least 75 % of the "
                        "smaller one's fingerprints in 3 places or more, or 40 fingerprints in all. A lead to read, "
                        "not a verdict: the matching lines are below the table (class.html) and in similarity.csv."),
                numeric=frozenset({3}), wrap=frozenset({0, 1, 4})),
    ]


def _similar_rows(s: ClassSummary) -> list[tuple[str, str, str, int, str]]:
    return [(p.a, p.b, _("identical") if p.identical else f"{100 * p.score:.0f} %", p.shared,
             "; ".join(f"{r.module_a}.py {r.lines_a[0]}–{r.lines_a[1]} ~ {r.module_b}.py {r.lines_b[0]}–{r.lines_b[1]}"
                       for r in p.regions[:SHOWN_REGIONS]) + (" …" if len(p.regions) > SHOWN_REGIONS else ""))
            for p in s.similar[:SHOWN_PAIRS]]


def _summary_lines(s: ClassSummary) -> list[str]:
    return [_("{submissions} submission(s): {graded} graded, {not_graded} not graded, {lost} with a topic lost to "
              "an error, a timeout or a crash, {tampered} tampered, {similar} pair(s) unusually alike. "
              "Grader {version}.").format(
                submissions=s.submissions, graded=len(s.totals), not_graded=len(s.not_graded),
                lost=len({name for name, *_rest in s.lost}), tampered=len(s.tampered), similar=len(s.similar),
                version=s.grader_version),
            _("Total (percent): {stats}.").format(stats=_stats(s.totals))]


def render_md(s: ClassSummary) -> str:
    lines = ["# " + _("Class report: {assignment}").format(assignment=markdown(s.unit)), ""]
    lines += [line for text in _summary_lines(s) for line in (markdown(text), "")]
    lines += [f"![{_('score distribution per topic')}](class.png)", ""]
    for sec in sections(s):
        lines += [f"## {sec.heading}", ""] + ([sec.intro, ""] if sec.intro else [])
        if not sec.rows:
            lines += [sec.when_empty, ""]
            continue
        lines.append("| " + " | ".join(sec.columns) + " |")
        lines.append("|" + "|".join("---:" if i in sec.numeric else "---" for i in range(len(sec.columns))) + "|")
        for row in sec.rows:
            cells = [f"`{c}`" if i in sec.code else markdown(c, 300) for i, c in enumerate(row)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


STYLE = ("body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}"
         "table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #ccc;padding:.3rem .6rem;"
         "text-align:left;vertical-align:top}td.n{text-align:right}th{background:#f3f3f3}"
         "th,td{word-break:keep-all}td.w{overflow-wrap:anywhere;word-break:normal}"
         "img{max-width:100%}code{font-size:1.1em}"
         ".pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}figure{margin:.4rem 0;min-width:0}"
         "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:.4rem;margin:0}"
         "summary,figcaption{overflow-wrap:anywhere}")


def _cell(sec: Section, column: int, text: str) -> str:
    if column in sec.numeric:
        return f'<td class="n">{html.escape(text)}</td>'
    if column in sec.code:
        return f"<td><code>{html.escape(text)}</code></td>"
    wraps = ' class="w"' if column in sec.wrap else ""
    return f"<td{wraps}>{_inline_code(html.escape(one_line(text, 300)))}</td>"


_BACKTICKS = re.compile(r"`([^`]+)`")


def _inline_code(escaped: str) -> str:
    """Escaped text with its `code` spans (a message's command) as <code>, not literal backticks."""
    return _BACKTICKS.sub(r"<code>\1</code>", escaped)


def render_html(s: ClassSummary) -> str:
    title = html.escape(_("Class report: {assignment}").format(assignment=s.unit))
    lang = "zh-CN" if i18n.current_language() == "zh" else "en"
    parts = [f"<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{title}</title>"
             f"<style>{STYLE}</style></head><body>", f"<h1>{title}</h1>"]
    parts += [f"<p>{_inline_code(html.escape(text))}</p>" for text in _summary_lines(s)]
    parts.append(f"<img src=\"class.png\" alt=\"{html.escape(_('score distribution per topic'))}\">")
    for sec in sections(s):
        parts.append(f"<h2>{html.escape(sec.heading)}</h2>")
        if sec.intro:
            parts.append(f"<p>{_inline_code(html.escape(sec.intro))}</p>")
        if not sec.rows:
            parts.append(f"<p>{_inline_code(html.escape(sec.when_empty))}</p>")
            continue
        head = "".join(f"<th>{html.escape(c)}</th>" for c in sec.columns)
        body = "".join("<tr>" + "".join(_cell(sec, i, c) for i, c in enumerate(row)) + "</tr>" for row in sec.rows)
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts += _side_by_side(s)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _side_by_side(s: ClassSummary) -> list[str]:
    """The matching lines of each shown pair, the two submissions next to each other (escaped)."""
    parts = []
    for p in s.similar[:SHOWN_PAIRS]:
        parts.append(f"<details><summary>{html.escape(one_line(p.a, 120))} ~ {html.escape(one_line(p.b, 120))}"
                     "</summary>")
        for r in p.regions[:SHOWN_REGIONS]:
            left = excerpt(s.prints.get(p.a, {}), r.module_a, r.lines_a)
            right = excerpt(s.prints.get(p.b, {}), r.module_b, r.lines_b)
            parts.append("<div class=\"pair\">" + "".join(
                "<figure><figcaption>" + html.escape(_("{submission}: {module}.py, lines {first}–{last}").format(
                    submission=one_line(who, 120), module=m, first=a, last=b)) + "</figcaption>"
                f"<pre>{html.escape(plain(text))}</pre></figure>"
                for who, m, (a, b), text in ((p.a, r.module_a, r.lines_a, left), (p.b, r.module_b, r.lines_b, right)))
                + "</div>")
        parts.append("</details>")
    return parts


def render_png(s: ClassSummary) -> bytes:
    """One histogram per topic and one of the total (percent: a topic of 100 points); counts are whole students."""
    panels = [(f"{t.id} ({t.possible:g} pts)", t.histogram() if t.possible else [0] * BINS) for t in s.topics]
    panels.append(("total", TopicStats("total", 100.0, s.totals).histogram()))
    return histograms.png(f"{s.unit}: students per score band ({len(s.totals)} graded)", panels,
                          [100 * i // BINS for i in range(BINS + 1)], "% of the topic's points")


def write(out: Path, unit, rows: list[dict], version: str = "", similar: tuple | None = None,
          lang: str | None = None) -> list[Path]:
    """The class report, in `lang` (default: the locale's); `similar` is what similarity.write
    found: (pairs, fingerprints)."""
    with i18n.speaking(lang):
        return _write(out, unit, rows, version, similar)


def _write(out: Path, unit, rows: list[dict], version: str, similar: tuple | None) -> list[Path]:
    summary = summarise(out, unit, rows, version)
    if similar is not None:
        summary.similar, summary.prints = similar
    atomic_write(Path(out) / "class.png", render_png(summary))
    atomic_write(Path(out) / "class.md", render_md(summary))
    atomic_write(Path(out) / "class.html", render_html(summary))
    return [Path(out) / name for name in FILES]
