"""reports/fault_injection.png: one small panel per signal of the fault-injection lab.

Each panel has its own axis range and says what to look for; its header carries the
grading of the signal (PASS, FAIL with the way that failed, or not graded). The lines are
the grader's own runs of the experiment through the student's primitives (LabRecord.curves,
.loss_curves, .experiments, filled by the hidden suite); the stars are the figure keys
the student's own run_fault_injection returned (LabRecord.returned), drawn on the same
axes, so a lab whose numbers do not come from its primitives shows the gap, and a broken
primitive shows in its curve (per-tensor clipping: update norms above tau).

    draw_fault_figure(lab) -> (Figure, [Panel, ...])   the figure and what each panel shows
    render_fault_plot(lab) -> PNG bytes | None          the PNG (panels also in its metadata)

The signal clipping_caps_norm_keeps_training_alive has two panels (loss, update norm): 8
panels, 7 signals. Student-facing text only: it names the student's functions and the
signals.
"""

from __future__ import annotations

import io
import json
import math
import re
import unicodedata
from dataclasses import asdict, dataclass, field

import numpy as np

from autograder.units.rnn_prehistory.lab.record import LabRecord, join_sentences, sentences
from autograder.units.rnn_prehistory.raster import Figure, nice_ticks, printable

PLOT_SIZE_IN, PLOT_DPI = (16.0, 8.8), 100      # 1600 x 880 pixels
# The lab's settings, restated: lab/fault_lab.py is not shipped to students, this module is
# (a public-only run draws the figure too). tests/content/test_evidence.py checks they agree.
TAU, T_STEPS = 5.0, 100
METADATA_KEY = "Panels"                         # PNG text chunk: json of the panels

TANH, LINEAR = "tab:orange", "tab:blue"
CLIP, NOCLIP = "tab:green", "tab:red"
# The first panel's three factor distributions: colours of their own, none that the legend
# gives to something else (a public run draws only their stars, without a curve to name them).
FACTORS = {"near_one": "#17becf", "below_one": "#8c564b", "above_one": "#e377c2"}   # cyan, brown, pink
MARK_COLOURS = {"PASS": "tab:green", "FAIL": "tab:red", "not graded": "0.45"}
CLIPPED_LOSS, CLIPPED_UPDATE = "clipped at tau = 5", "||update||, clipped"    # the clipped curves' labels
WHY_COLUMNS, WHY_LINES, TITLE_LINE = 200, 2, 0.018      # why there are no stars: under the title
WAYS = {"measured": "your run_fault_injection", "rerun": "the grader's rerun"}


@dataclass
class Panel:
    """What one panel shows, for tests and the PNG's metadata."""

    signal: str
    mark: str                                       # "PASS", "FAIL" or "not graded"
    title: str
    lines: dict[str, dict] = field(default_factory=dict)     # label -> {"points", "min", "max"} drawn
    student: dict[str, float] = field(default_factory=dict)  # returned figure key -> value drawn
    notes: list[str] = field(default_factory=list)           # text written on the panel


# ------------------------------------------------------------------------------ data
def _floats(values) -> np.ndarray:
    """A float array of plain data; what is not a number ("inf" as text, None) is nan."""
    if isinstance(values, np.ndarray):
        return values.astype(float).ravel()
    return np.array([float(v) if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) else np.nan
                     for v in (values if values is not None else [])], dtype=float)


def _positive(values, top: float = 1e200) -> np.ndarray:
    """Values for a log axis: 0, negatives, inf, nan and values above `top` are not drawn
    (log ticks would overflow near the float64 limit)."""
    arr = _floats(values)
    arr[~(np.isfinite(arr) & (arr > 0) & (arr <= top))] = np.nan
    return arr


def _log10(values) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(_positive(values, top=np.finfo(float).max))


def _returned(lab: LabRecord, key: str, log: bool = False) -> float | None:
    """A figure key of the student's run_fault_injection, when it is a number that can be drawn."""
    run = lab.returned if isinstance(lab.returned, dict) else {}
    v = run.get(key)
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    if log and not 0 < v <= 1e200:
        return None
    return float(v)


def _fmt(v) -> str:
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.2g}"


def grading_mark(lab: LabRecord, key: str) -> tuple[str, str]:
    """("PASS" | "FAIL" | "not graded", the line shown above the signal's name: the ways of
    grading that passed, or those that failed, and the signal the student's run reported)."""
    entry = lab.signals.get(key)
    checks = entry.checks if entry is not None else {}
    run = lab.returned if isinstance(lab.returned, dict) else {}
    said = f"; you say {run[key]}" if isinstance(run.get(key), bool) else ""
    if not checks:
        return "not graded", "NOT GRADED here (the hidden tests grade)" + said
    assert entry is not None                      # the checks are its own
    failed = [WAYS.get(way, way) for way, ok in checks.items() if not ok]
    cause = entry.details.get("cause") or {}
    if not failed and entry.details.get("value") is False and cause:
        # The lab measured faithfully with a wrong primitive: right to report False, and the
        # panel shows the signal that does not hold (the primitive's own tests charge it).
        return "FAIL", f"FAIL: your {', '.join(cause)} is wrong; your lab measured it faithfully" + said
    if not failed:
        return "PASS", "PASS: " + ", ".join(WAYS.get(way, way) for way in checks) + said
    return "FAIL", "FAIL: " + ", ".join(failed) + said


# ------------------------------------------------------------------------ drawing helpers
def _tick_text(v) -> str:
    """A tick label of a linear axis as plain text ("500", "2.5")."""
    return f"{v:g}"


def _fixed_ticks(ax, log: bool, subs=(1.0,), xticks: bool = True) -> None:
    """A few ticks inside the view, with plain-text labels ("1e-30"), and no minor ticks."""
    def inside(values, lo, hi):
        return [float(v) for v in values if lo - 1e-9 * abs(lo) <= v <= hi + 1e-9 * abs(hi)]

    lo, hi = ax.get_xlim()
    xs = inside(nice_ticks(lo, hi, 2, steps=(1, 2.5, 5, 10)), lo, hi)
    if xticks:
        ax.set_xticks(xs, [_tick_text(v) for v in xs])
    lo, hi = ax.get_ylim()
    if log and lo > 0:
        a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
        for step in (1, 2, 3, 5, 10, 15, 20, 25, 50, 100):
            exponents = range(-(-a // step) * step, b + 1, step)      # multiples of the step
            if len(exponents) <= 6:
                break
        labels = [f"1e{e}" if e else "1" for e in exponents]
        ys = [10.0 ** e for e in exponents]
        if b - a < 2:                                                  # under 2 decades: 1, 2, 5 ...
            ys = sorted(inside([m * 10.0 ** e for e in range(a - 1, b + 1) for m in subs], lo, hi))
            labels = [f"{v:g}" for v in ys]
    else:
        ys = inside(nice_ticks(lo, hi, 5), lo, hi)
        labels = [_tick_text(v) for v in ys]
    ax.set_yticks(ys, labels)
    ax.set_ylim(lo, hi)


class _Drawer:
    """One panel: its header (mark and signal), what to look for, lines and stars."""

    def __init__(self, ax, lab: LabRecord, signal: str, title: str, look_for: str, log: bool):
        self.ax, self.lab, self.log = ax, lab, log
        mark, detail = grading_mark(lab, signal)
        self.panel = Panel(signal=signal, mark=mark, title=title)
        symbol = {"PASS": "\u2713", "FAIL": "\u2717"}.get(mark, "\u2013")
        for text, offset, style in ((detail, 33, {"fontsize": 7}),
                                    (f"{symbol} {signal}", 21, {"fontsize": 8.5, "fontweight": "bold"})):
            ax.annotate(text, xy=(0, 1), xycoords="axes fraction", xytext=(0, offset), textcoords="offset points",
                        color=MARK_COLOURS[mark], va="bottom", annotation_clip=False, **style)
        ax.set_title(f"{title}. {look_for}", fontsize=6.5, color="0.15", pad=3)
        if log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.25)
        ax.tick_params(labelsize=7)

    def line(self, x, y, label, **style):
        y = _positive(y) if self.log else _floats(y)
        x = np.asarray(x, dtype=float)[: len(y)]
        y = y[: len(x)]
        if np.isfinite(y).any():
            self.ax.plot(x, y, label=label, **style)
            self.keep(label, y)
        return y

    def keep(self, label, y):
        finite = np.asarray(y, dtype=float)[np.isfinite(y)]
        if finite.size:
            self.panel.lines[label] = {"points": int(finite.size), "min": float(finite.min()),
                                       "max": float(finite.max())}

    def star(self, x, key, colour="black"):
        """The student's returned figure key `key` at x (nothing when it cannot be drawn)."""
        v = _returned(self.lab, key, log=self.log)
        if v is None:
            return None
        self.ax.plot([x], [v], marker="*", markersize=12, color=colour, markeredgecolor="black",
                     markeredgewidth=0.8, linestyle="none", zorder=5)
        self.panel.student[key] = v
        return v

    def hline(self, y, text, colour="0.35", style="-.", where=0.98, va="bottom"):
        """A criterion's threshold as a line, labelled at `where` (axes fraction)."""
        self.ax.axhline(y, color=colour, linestyle=style, linewidth=1.0, zorder=1.5)   # under the curves
        self.ax.annotate(text, xy=(where, y), xycoords=("axes fraction", "data"), fontsize=6.5, color=colour,
                         ha="right", va=va, xytext=(0, 1.5 if va == "bottom" else -1.5), textcoords="offset points")

    def note(self, text, x=0.02, y=0.03, colour="0.15", ha="left", va="bottom"):
        self.ax.text(x, y, text, transform=self.ax.transAxes, fontsize=6.5, color=colour, ha=ha, va=va,
                     bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "alpha": 0.8, "edgecolor": "0.8"})
        self.panel.notes.append(text)

    def empty(self, text):
        self.ax.text(0.5, 0.5, text, transform=self.ax.transAxes, fontsize=7, ha="center", va="center",
                     color="0.2", bbox={"boxstyle": "round,pad=0.4", "facecolor": "white", "edgecolor": "0.7"})
        self.panel.notes.append(text)

    def finish(self, xlabel, ylabel, source_line="", subs=(1.0,), xticks=True, xmax=None):
        self.ax.set_xlabel(xlabel + source_line, fontsize=7)
        self.ax.set_ylabel(ylabel, fontsize=7)
        if xmax is not None:       # the same range with or without curves
            self.ax.set_xlim(-0.03 * xmax, 1.03 * xmax)
        _fixed_ticks(self.ax, self.log, subs, xticks)
        return self.panel


def _no_run(lab: LabRecord, name: str) -> str:
    """Why the grader's curves of experiment `name` are missing."""
    exp = lab.experiments.get(name)
    if exp is not None and exp.error:
        return "no curve: the grader's run of this experiment\nthrough your primitives failed:\n" + _wrap(exp.error, 50, 6)
    return "no curve: the grader runs the experiments\nwith the hidden tests (stars: your own run)"


def _columns(text: str) -> int:
    """How wide `text` is in columns: a CJK character (East Asian wide or full-width) takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap_lines(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken at spaces or between two CJK
    characters, never inside a word (a word longer than a line gets a line of its own)."""
    tokens = re.findall(r"[^\S\n]+|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]|[^\s\u2e80-\u9fff"
                        r"\uf900-\ufaff\uff00-\uffef\u3000-\u303f]+", text)
    lines, line = [], ""
    for token in tokens:
        if token.isspace():
            if line:
                line += " "
            continue
        if line and _columns(line + token) > width:
            lines.append(line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _wrap(text: str, width: int = 50, lines: int = 3) -> str:
    """A message in lines of `width` columns: the whole sentences that fit in `lines` lines,
    and "[… n more]" for the sentences left out (the whole message is in score.md). A word or
    a sentence is never cut; a first sentence longer than `lines` lines is left out whole.
    Wrapped as drawn: with the escapes of characters no font of the machine has (raster.printable)."""
    parts = [printable(part) for part in sentences(text)]
    for shown in range(len(parts), -1, -1):
        wrapped = _wrap_lines(join_sentences(parts[:shown], len(parts) - shown), width)
        if len(wrapped) <= lines or not shown:
            return "\n".join(wrapped)
    return ""


def _source(lab: LabRecord, name: str, seed) -> str:
    exp = lab.experiments.get(name)
    if exp is not None and exp.source != "student":
        return f"\nyour primitives raised; lines drawn with the grader's own (seed {seed})"
    return f"   (seed {seed})" if seed is not None else ""


def _last(y):
    if y is None:
        return None
    finite = np.asarray(y)[np.isfinite(y)]
    return float(finite[-1]) if finite.size else None


def _data(lab: LabRecord, name: str) -> tuple[dict, int | None]:
    exp = lab.experiments.get(name)
    return (exp.data or {}, exp.seed) if exp is not None else ({}, None)


# ---------------------------------------------------------------------------- the panels
def _products(ax, lab):
    d = _Drawer(ax, lab, "near_one_product_stays_bounded", "log|product| of 500 factors",
                "Look for: near-1 factors\nstay inside +-20 (band); below 1 ends under -100, above 1 over +20",
                log=False)
    data, seed = _data(lab, "products")
    stride = int(data.get("stride") or 5)
    drawn = False
    for name, label, where, above in (("near_one", "U(0.8, 1.2)", 0.75, False),
                                      ("below_one", "U(0, 0.8)", 0.5, True),
                                      ("above_one", "U(1, 1.2)", 0.35, True)):
        colour = FACTORS[name]
        values = data.get(name)
        if values:
            y = d.line(stride * np.arange(1, len(values) + 1), values, label, color=colour, linewidth=1.4)
            drawn = drawn or bool(np.isfinite(y).any())
            i = int(where * (len(y) - 1))
            if np.isfinite(y[i]):
                ax.annotate(label, xy=(stride * (i + 1), y[i]), xytext=(2, 4 if above else -4),
                            textcoords="offset points", fontsize=6.5, color=colour, ha="left",
                            va="bottom" if above else "top")
        mine = d.star(500, f"{name}_log_final", colour)
        if mine is not None and not values:          # no curve to carry the label: the star does
            ax.annotate(label, xy=(500, mine), xytext=(-8, 0), textcoords="offset points", fontsize=6.5,
                        color=colour, ha="right", va="center")
    ax.axhspan(-20, 20, color=FACTORS["near_one"], alpha=0.15, linewidth=0)
    d.hline(-100, "-100", va="top", where=0.98)
    if not drawn:
        d.empty(_no_run(lab, "products"))
    return d.finish("factors t", "log|product|", _source(lab, "products", seed), xmax=500)


def _chain_panel(d, lab, rho, tanh_label="tanh"):
    curves = lab.curves
    norms = (curves.norms or {}) if curves is not None else {}
    steps = np.asarray(curves.steps_back or [], dtype=float) if curves is not None else np.zeros(0)
    ys = {}
    for act, label, style in (("tanh", tanh_label, {"color": TANH, "linewidth": 2.6}),
                              ("linear", "linear (weights only)", {"color": LINEAR, "linestyle": "--",
                                                                   "linewidth": 1.3, "zorder": 3})):
        values = norms.get(f"rho{rho}_{act}")
        if values is not None:
            x = steps if len(steps) == len(values) else np.arange(1, len(values) + 1)
            ys[act] = d.line(x, values, label, **style)
    d.star(T_STEPS, f"rho{rho}_tanh_norm", TANH)
    d.star(T_STEPS, f"rho{rho}_linear_norm", LINEAR)
    if not ys:
        d.empty(_no_run(lab, "spectral"))
    return ys


def _spectral_source(lab):
    return _source(lab, "spectral", lab.curves.seed if lab.curves is not None else None)


def _rho_below(ax, lab):
    d = _Drawer(ax, lab, "rho_below_one_gradient_decays", "rho = 0.5: ||dh_T/dh_(T-k)||",
                "Look for: both chains\nfall in a straight line (geometric decay), to ~1e-30; tanh must be < 1e-10",
                log=True)
    ys = _chain_panel(d, lab, 0.5)
    d.hline(1e-10, "1e-10", where=0.98)
    if ys:
        d.note(f"k = 100: tanh {_fmt(_last(ys.get('tanh')))}, linear {_fmt(_last(ys.get('linear')))}")
    return d.finish("steps back k", "||dh_T / dh_(T-k)||", _spectral_source(lab), xmax=T_STEPS)


def _rho_above(ax, lab):
    d = _Drawer(ax, lab, "rho_above_one_gradient_explodes", "rho = 1.5",
                "Look for: the linear chain (weight factor)\ngrows at least like 1.5^k, past 1e10; "
                "tanh does not explode (saturation)", log=True)
    ys = _chain_panel(d, lab, 1.5)
    k = np.arange(1, T_STEPS + 1)
    ax.plot(k, 1.5 ** k, ":", color="0.3", linewidth=1.0, label="1.5^k")
    d.hline(1e10, "1e10", where=0.12)
    if ys:
        d.note(f"k = 100: linear {_fmt(_last(ys.get('linear')))}, tanh {_fmt(_last(ys.get('tanh')))}",
               y=0.97, va="top")
    return d.finish("steps back k", "||dh_T / dh_(T-k)||", _spectral_source(lab), xmax=T_STEPS)


def _rho_one(ax, lab):
    d = _Drawer(ax, lab, "rho_one_tanh_saturation_still_decays", "rho = 1",
                "Look for: linear stays >= 1; the tanh chain\n(median of 8 starts) ends clearly below it: "
                "saturation alone decays it", log=True)
    ys = _chain_panel(d, lab, 1.0, tanh_label="tanh (median of 8)")
    ax.axhline(1.0, color="0.3", linestyle=":", linewidth=1.0)
    if ys:
        t, lin = _last(ys.get("tanh")), _last(ys.get("linear"))
        verdict = "tanh < linear" if t is not None and lin is not None and t < lin else "tanh NOT below linear"
        d.note(f"k = 100: tanh {_fmt(t)}, linear {_fmt(lin)}: {verdict}")
    return d.finish("steps back k", "||dh_T / dh_(T-k)||", _spectral_source(lab), subs=(1.0, 2.0, 5.0),
                    xmax=T_STEPS)


def _clip_source(lab):
    return _source(lab, "clipping", lab.loss_curves.seed if lab.loss_curves is not None else None)


def _clip_loss(ax, lab):
    d = _Drawer(ax, lab, "clipping_caps_norm_keeps_training_alive", "Linear RNN, rho = 1.5, SGD",
                "Look for: unclipped,\nthe loss is inf/nan within 3 steps; clipped, it falls under 1/100 of its start",
                log=False)
    losses = lab.loss_curves
    if losses is not None:
        clip, noclip = _log10(losses.clip), _log10(losses.noclip)
        d.line(np.arange(len(clip)), clip, CLIPPED_LOSS, color=CLIP, linewidth=1.6)
        d.line(np.arange(len(noclip)), noclip, "no clipping", color=NOCLIP, marker="o", markersize=4)
        shown = np.concatenate([clip[np.isfinite(clip)], noclip[:1][np.isfinite(noclip[:1])]])
        if shown.size:     # the clipped curve readable; the unclipped one leaves the chart
            ax.set_ylim(shown.min() - 1.0, shown.max() + 2.5)
        if clip.size and np.isfinite(clip[0]):
            d.hline(clip[0] - 2, "start / 100", va="top", where=0.98)
        first = losses.noclip_first_nonfinite_step
        end = _last(clip)
        d.note(f"no clipping: inf/nan at step {first if first is not None else 'never'}\n"
               f"clipped: {_fmt(10 ** end if end is not None else None)} after {len(clip) - 1} steps",
               x=0.98, y=0.97, ha="right", va="top")
    else:
        d.empty(_no_run(lab, "clipping"))
    for x, key in ((0, "clip_loss_start"), (T_STEPS, "clip_loss_end")):     # drawn as log10, like the lines
        v = _returned(lab, key, log=True)
        if v is not None:
            ax.plot([x], [math.log10(v)], "*", markersize=12, color=CLIP, markeredgecolor="black", zorder=5)
            d.panel.student[key] = v
    step = _returned(lab, "noclip_first_nonfinite_step")
    if step is not None:
        d.panel.student["noclip_first_nonfinite_step"] = step
        if step <= T_STEPS:
            ax.axvline(step, color="black", linestyle=":", linewidth=1.0)      # the student's step
    return d.finish("SGD step", "log10 loss", _clip_source(lab), xmax=T_STEPS)


def _clip_norm(ax, lab):
    d = _Drawer(ax, lab, "clipping_caps_norm_keeps_training_alive", "Same run: each clipped update",
                "Look for: every update's\nglobal norm (Wx, Wh, b together) <= tau = 5; above: not one shared factor",
                log=False)
    data, _ = _data(lab, "clipping")
    updates, grads = _floats(data.get("update_norms")), _floats(data.get("grad_norms"))
    top = 2.0 * TAU
    finite = updates[np.isfinite(updates)]
    if finite.size:
        d.line(np.arange(len(updates)), updates, CLIPPED_UPDATE, color=CLIP, linewidth=1.6,
               marker=".", markersize=3)
        top = max(top, 1.15 * float(finite.max()))
        over = int(np.sum(finite > TAU * (1 + 1e-9)))
        d.note(f"{over} of {finite.size} updates above tau" + (f", max {finite.max():.3g}" if over else ""),
               colour=NOCLIP if over else "0.15", x=0.98, y=0.97, ha="right", va="top")
        g = grads[np.isfinite(grads)]
        if g.size:
            d.note(f"gradient before clipping: up to {g.max():.2g},\nabove tau in {int(np.sum(g > TAU))} "
                   f"of {g.size} steps", x=0.98, y=0.03, ha="right")
    else:
        d.empty(_no_run(lab, "clipping"))
    mine = _returned(lab, "clip_max_update_norm")
    if mine is not None and mine < 1e6:
        top = max(top, 1.15 * mine)
        d.star(len(updates) if updates.size else T_STEPS, "clip_max_update_norm", "white")
    if mine is not None:
        d.note(f"your clip_max_update_norm: {mine:.4g}", x=0.93, y=0.86, ha="right", va="top",
               colour=NOCLIP if mine > TAU * (1 + 1e-9) else "0.15")
    ax.axhspan(TAU, top * 2, color=NOCLIP, alpha=0.08, linewidth=0)
    d.hline(TAU, "tau = 5", colour="black", style="--", where=0.15)
    ax.set_ylim(0, top)
    return d.finish("SGD step", "||update||_2", _clip_source(lab), xmax=T_STEPS)


def _vanishing(ax, lab):
    d = _Drawer(ax, lab, "clipping_does_not_rescue_vanishing", "tanh RNN, rho = 0.5, loss on h_T",
                "Look for: ~1 at t = T,\nunder 1e-10 at t = 1, the same after clipping (it only ever scales down)",
                log=True)
    data, seed = _data(lab, "vanishing")
    drawn = False
    for key, label, style in (("dx_noclip", "no clipping", {"color": NOCLIP, "linewidth": 2.6}),
                              ("dx_clip", "after clip_grad_norm", {"color": CLIP, "linestyle": "--",
                                                                   "linewidth": 1.3})):
        values = data.get(key)
        if values:
            y = d.line(np.arange(1, len(values) + 1), values, label, **style)
            drawn = drawn or bool(np.isfinite(y).any())
    d.star(1, "vanish_dx1_noclip", NOCLIP)
    d.star(1, "vanish_dx1_clip", CLIP)
    d.star(T_STEPS, "vanish_dxT", NOCLIP)
    d.hline(1e-10, "1e-10", where=0.98)
    if drawn:
        firsts = [_floats(data.get(k))[:1] for k in ("dx_noclip", "dx_clip")]
        d.note("t = 1: " + " vs ".join(_fmt(f[0] if f.size else None) for f in firsts) + " with clipping",
               x=0.98, y=0.03, ha="right")
    else:
        d.empty(_no_run(lab, "vanishing"))
    return d.finish("input step t", "||dL / dx_t||", _source(lab, "vanishing", seed), xmax=T_STEPS)


def _bptt(ax, lab):
    d = _Drawer(ax, lab, "bptt_matches_finite_difference", "Your rnn_backward vs central differences",
                "Look for:\nevery relative error far under 1e-6 (about 1e-10)", log=True)
    data, seed = _data(lab, "bptt")
    floor = 1e-16
    xs, labels = [], []
    for name in ("dWx", "dWh", "db", "all"):
        if isinstance(data.get(name), (int, float)):
            ax.vlines(len(xs), floor, max(float(data[name]), floor), color=LINEAR if name != "all" else "tab:purple",
                      linewidth=8)
            d.keep(name, [float(data[name])])
            xs.append(len(xs))
            labels.append(name)
    if not xs:
        d.empty(_no_run(lab, "bptt"))
    mine = _returned(lab, "bptt_rel_error")
    if mine is not None:
        i = len(xs)
        ax.vlines(i, floor, max(mine, floor), color="0.6", linewidth=8)
        ax.plot([i], [max(mine, floor)], "*", markersize=12, color="0.6", markeredgecolor="black", zorder=5)
        d.panel.student["bptt_rel_error"] = mine
        xs.append(i)
        labels.append("yours")
    d.hline(1e-6, "1e-6", colour=NOCLIP, where=0.98)
    ax.set_xticks(xs, labels)
    ax.set_xlim(-0.7, max(len(xs), 2) - 0.3)
    ax.set_ylim(floor / 3, 30)
    return d.finish("relative error of the gradient", "||g - g_num|| / (||g|| + ||g_num||)",
                    _source(lab, "bptt", seed), xticks=False)


PANELS = (_products, _rho_below, _rho_above, _rho_one, _clip_loss, _clip_norm, _vanishing, _bptt)


def _key(fig, panels, lab, y: float) -> None:
    """One legend for all panels (the colours mean the same everywhere): the curves drawn, and
    for the clipped curves whose clip_grad_norm drew them (the grader's own when yours raised)."""
    star = {"marker": "*", "markersize": 11, "color": "white", "markeredgecolor": "black"}
    drawn = {label for p in panels for label in p.lines}
    clipping = lab.experiments.get("clipping")
    whose = "the grader's clip_grad_norm (yours raised)" if clipping is not None and clipping.source != "student" \
        else "your clip_grad_norm"
    entries = [(drawn & {"tanh", "tanh (median of 8)"}, {"color": TANH, "linewidth": 2.6}, "tanh chain"),
               (drawn & {"linear (weights only)"}, {"color": LINEAR, "linestyle": "--", "linewidth": 1.3},
                "linear chain (weight factor only)"),
               (True, {"color": "0.3", "linestyle": ":"}, "1.5^k"),
               (drawn & {CLIPPED_LOSS, CLIPPED_UPDATE, "after clip_grad_norm"}, {"color": CLIP, "linewidth": 1.6},
                f"clipped at tau = 5, with {whose}"),
               (drawn & {"no clipping"}, {"color": NOCLIP, "linewidth": 2.0}, "no clipping"),
               (True, {"color": "0.35", "linestyle": "-."}, "criterion threshold"),
               (any(p.student for p in panels), star, "what your run_fault_injection returned (colour: its curve)")]
    fig.legend([(style, label) for shown, style, label in entries if shown], x=0.005, y=y, fontsize=7)


def draw_fault_figure(lab: LabRecord):
    """(Figure, [Panel]): one panel per entry of PANELS, in a 2 x 4 grid."""
    fig = Figure(figsize=PLOT_SIZE_IN, dpi=PLOT_DPI)
    axes = fig.subplots(2, 4)
    panels = [draw(ax, lab) for draw, ax in zip(PANELS, axes)]
    seed = lab.seed if lab.seed is not None else "?"
    graded = {p.signal: p.mark for p in panels if p.mark != "not graded"}
    for p in panels:                       # a signal with two panels passes when both do
        if p.mark == "FAIL":
            graded[p.signal] = "FAIL"
    signals = len({p.signal for p in panels})
    count = (f"{sum(m == 'PASS' for m in graded.values())} of {signals} signals pass" if graded
             else "signals not graded in this run")
    why = ""
    if isinstance(lab.returned, dict):
        stars = f"Stars: what your run_fault_injection({seed}) returned."
    else:
        stars = f"No stars: your run_fault_injection({seed}) gave no dict, because:"
        # on lines of their own, under the title: whole sentences, the rest marked as left out
        why = _wrap(lab.returned_error or (f"it returned {lab.returned}" if lab.returned else "no result"),
                    WHY_COLUMNS, WHY_LINES)
    own = [name for name, exp in lab.experiments.items() if exp.source != "student"]
    if any(p.lines for p in panels):
        lines = "Lines: the grader's runs of each experiment through your primitives"
        lines += (f" (the grader's own primitives in {', '.join(own)}: yours raised)." if own else ".")
    else:
        lines = "No lines: the grader runs the experiments with the hidden tests."
    head = f"Fault-injection lab: {count}.   {lines}   {stars}"
    if _columns(printable(head)) > WHY_COLUMNS:       # as wide as the figure: the stars on a line of their own
        head = f"Fault-injection lab: {count}.   {lines}\n{stars}"
    title = head + (f"\n{why}" if why else "")
    fig.suptitle(title, fontsize=10, x=0.005, ha="left", y=0.995)
    extra = title.count("\n")                      # the lines the title takes beyond its first
    _key(fig, panels, lab, y=0.968 - extra * TITLE_LINE)
    fig.subplots_adjust(left=0.045, right=0.993, bottom=0.07, top=0.87 - extra * TITLE_LINE, wspace=0.25,
                        hspace=0.6)
    return fig, panels


def render_fault_plot(lab: LabRecord) -> bytes | None:
    """The PNG of fault_injection.png (its panels as json in the PNG text chunk "Panels");
    None when the run has neither curves nor a result of run_fault_injection to draw.
    A 128-colour palette PNG: half the size of the RGB one, and faster to encode (zlib level
    3: twice as fast as the default 6, for a file 20 % larger, ~75 KB)."""
    from PIL import Image, PngImagePlugin

    if lab.curves is None and lab.loss_curves is None and not lab.experiments and not isinstance(lab.returned, dict):
        return None
    fig, panels = draw_fault_figure(lab)
    rgb = fig.render()
    info = PngImagePlugin.PngInfo()
    info.add_text(METADATA_KEY, json.dumps([asdict(p) for p in panels], allow_nan=False, default=str))
    png = io.BytesIO()
    rgb.quantize(128, method=Image.Quantize.FASTOCTREE).save(png, format="png", pnginfo=info, compress_level=3,
                                                             dpi=(PLOT_DPI, PLOT_DPI))
    return png.getvalue()


def panels_of_png(png: bytes) -> list[dict]:
    """The panels a rendered fault_injection.png describes (its "Panels" text chunk)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        # type: ignore: Image.open is typed as any image file; a PNG's (PngImageFile) has .text
        return json.loads(image.text.get(METADATA_KEY, "[]"))  # type: ignore[attr-defined]
