"""reports/sequence_models.png: causality and the inference bill, as the grading measured them.

Five panels, drawn from what the hidden suites of `causality` and `inference_cost` left in
the run's `report_extras` (nothing to draw after a public-only run):

- four dependency matrices D[t, s] (how far output t moved when only input s moved), of
  your unidirectional RNN (the forward half of birnn_forward), your bidirectional RNN, and
  your self_attention with and without the causal mask: a causal map is white above the
  diagonal, exactly;
- the bytes each decoder holds after T tokens, T = 16 ... 1024, on linear axes: your RNN's
  state (flat) against your attention's KV cache (a straight line, N (Dk + Dv) 8 bytes a token).

    render_sequence_plot(report_extras) -> PNG bytes | None
    evidence_notes(report_extras) -> [str]   the same measurements, as lines for evidence.yaml

Student-facing text only: it names the student's functions.
"""

from __future__ import annotations

import io

import numpy as np

from autograder.units.rnn_prehistory.raster import Figure, nice_ticks

PLOT_SIZE_IN, PLOT_DPI = (16.0, 4.0), 100
MAPS = (("rnn", "unidirectional RNN"), ("birnn", "bidirectional RNN"),
        ("causal_attention", "self_attention, causal=True"), ("open_attention", "self_attention, causal=False"))
RNN, CACHE = "tab:orange", "tab:blue"


def first_leak(D) -> tuple[int, int] | None:
    """The first (t, s), s > t in row order, where output t moved when input s moved."""
    leaks = np.argwhere(np.triu(np.asarray(D, dtype=float) != 0.0, k=1))
    return None if not leaks.size else (int(leaks[0][0]), int(leaks[0][1]))


def _matrix_panel(ax, D, title):
    D = np.asarray(D, dtype=float)
    T = len(D)
    ax.heatmap(D, color="tab:purple")
    ax.plot([-0.5, T - 0.5], [-0.5, T - 0.5], color="0.35", linestyle=":", linewidth=1.0, zorder=3)
    ax.set_xlim(-0.5, T - 0.5)
    ax.set_ylim(T - 0.5, -0.5)                       # row 0 at the top, as the matrix is written
    ticks = list(range(0, T, max(1, T // 4)))
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.tick_params(labelsize=8)
    leak = first_leak(D)
    verdict = "causal: nothing above the diagonal" if leak is None else f"reads the future: first at (t, s) = {leak}"
    ax.set_title(f"{title}\n{verdict}", fontsize=9, color="tab:green" if leak is None else "tab:red")
    ax.set_xlabel("input moved, s", fontsize=8)
    ax.set_ylabel("output t", fontsize=8)


def _bytes_panel(ax, bill):
    lengths = [float(t) for t in bill["T"]]
    for key, label, colour in (("rnn_bytes", "your RNN state", RNN), ("cache_bytes", "your KV cache", CACHE)):
        ax.plot(lengths, bill[key], color=colour, marker="o", markersize=4, linewidth=2.0)
        ax.annotate(f"{label}: {int(bill[key][-1])} B at T = {int(lengths[-1])}", (lengths[-1], bill[key][-1]),
                    xytext=(-4, 6), color=colour, fontsize=8, ha="right")
    top = max(max(bill["cache_bytes"]), max(bill["rnn_bytes"]))
    ax.set_ylim(-0.04 * top, top * 1.15)          # linear axes: a straight line is linear growth
    kib = [t for t in nice_ticks(0, top / 1024, 4) if t * 1024 <= top * 1.15]
    ax.set_yticks([t * 1024 for t in kib], [f"{t:g} KiB" for t in kib])
    ax.set_xlim(0, lengths[-1] * 1.05)
    xticks = nice_ticks(0, lengths[-1], 4)
    ax.set_xticks(xticks, [f"{t:g}" for t in xticks])
    ax.tick_params(labelsize=8)
    ax.grid(True)
    ax.set_title(f"Bytes held after T tokens\ncache: +{bill['bytes_per_cached_token']} B per token, RNN: +0",
                 fontsize=9)
    ax.set_xlabel("T (tokens decoded)", fontsize=8)


def render_sequence_plot(report_extras: dict) -> bytes | None:
    """The PNG of sequence_models.png, or None when neither suite left its measurements."""
    from PIL import Image

    matrices, bill = report_extras.get("causality"), report_extras.get("inference_cost")
    if not matrices and not bill:
        return None
    fig = Figure(figsize=PLOT_SIZE_IN, dpi=PLOT_DPI)
    axes = fig.subplots(1, 5)
    unmeasured = report_extras.get("causality_unmeasured") or {}
    for ax, (key, title) in zip(axes, MAPS):
        if matrices and key in matrices:
            _matrix_panel(ax, matrices[key], title)
        else:
            why = f"not measured:\n{unmeasured[key]}" if key in unmeasured else "not measured in this run"
            ax.set_title(f"{title}\n{why}", fontsize=9)
    if bill:
        _bytes_panel(axes[4], bill)
    else:
        axes[4].set_title("Bytes held after T tokens\nnot measured in this run", fontsize=9)
    readout = report_extras.get("causality_readout") or {}
    heading = "Who reads whom: D[t, s] = how far output t moved when only input s moved (white: not at all)."
    if readout:
        heading += (f"   Next-token readout error from your states: bidirectional {readout['birnn']:.3f}, "
                    f"forward only {readout['rnn']:.3f} (guessing: about 1 - 1/V).")
    fig.suptitle(heading, fontsize=10, x=0.005, ha="left", y=0.99)
    fig.subplots_adjust(left=0.035, right=0.995, bottom=0.16, top=0.76, wspace=0.3)
    png = io.BytesIO()
    fig.render().quantize(64, method=Image.Quantize.FASTOCTREE).save(png, format="png", compress_level=3,
                                                                      dpi=(PLOT_DPI, PLOT_DPI))
    return png.getvalue()


def evidence_notes(report_extras: dict) -> list[str]:
    """What the causality and inference-bill suites measured, one line each (comments in evidence.yaml)."""
    lines = []
    for key, title in MAPS:
        D = (report_extras.get("causality") or {}).get(key)
        why = (report_extras.get("causality_unmeasured") or {}).get(key)
        if D is None and why:
            lines.append(f"causality, {title}: not measured ({why})")
        if D is not None:
            leak = first_leak(D)
            lines.append(f"causality, {title}: " + ("causal (no output moved when a later input moved)"
                                                    if leak is None else f"reads the future, first at (t, s) = {leak}"))
    readout = report_extras.get("causality_readout")
    if readout:
        lines.append(f"causality, next-token readout error: bidirectional {readout['birnn']:.4f}, "
                     f"forward only {readout['rnn']:.4f}")
    bill = report_extras.get("inference_cost")
    if bill:
        lines.append(f"inference bill, T = {list(bill['T'])}: RNN state bytes {list(bill['rnn_bytes'])}, "
                     f"KV cache bytes {list(bill['cache_bytes'])}")
    return lines
