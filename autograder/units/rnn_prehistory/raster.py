"""A small raster plotter for fault_figure.py and sequence_figure.py: the part of matplotlib's
Figure and Axes API that the figures use, drawn with Pillow.

Why not matplotlib: importing its Figure and Agg backend alone costs ~0.55 s of CPU, before
anything is drawn; this draws the same figure, PNG included, in ~0.06 s of CPU (~0.15 s for
the first figure of a process, which loads the fonts). Both measured on the reference's
grading. What it offers is what the figure needs and no more:

    fig = Figure((16, 8.8), dpi=100)
    ax = fig.subplots(2, 4)[0]
    ax.plot(x, y, color="tab:blue", linestyle="--", linewidth=1.3, marker="*", zorder=3)
    ax.set_yscale("log"); ax.set_ylim(lo, hi); ax.set_yticks(values, labels)
    ax.annotate(text, xy, xycoords=..., xytext=(dx, dy), textcoords="offset points")
    ax.text(x, y, text, transform=ax.transAxes, bbox={...}); ax.axhline / axvline / axhspan / vlines
    ax.heatmap(matrix, color=...)                                      # cells, shade by value
    fig.suptitle(...); fig.legend(entries); image = fig.render()      # a PIL RGB image

Sizes are in points (1/72 inch) as in matplotlib; the image is drawn at twice its size and
scaled down, which smooths lines and text. Data artists are clipped to their axes.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

SUPERSAMPLE = 2
COLOURS = {"tab:blue": "#1f77b4", "tab:orange": "#ff7f0e", "tab:green": "#2ca02c", "tab:red": "#d62728",
           "tab:purple": "#9467bd", "black": "#000000", "white": "#ffffff"}
DASHES = {"-": None, "--": (3.7, 1.6), ":": (1.0, 1.65), "-.": (6.4, 1.6, 1.0, 1.6)}   # in line widths
MARGIN = 0.05                 # autoscaled limits: the data range and 5 % on each side, as matplotlib
TICK_PT, TICK_PAD_PT = 3.5, 3.5


def rgba(colour, alpha: float = 1.0) -> tuple[int, int, int, int]:
    """"tab:blue", "#rrggbb" or a grey level "0.35" as an RGBA tuple."""
    colour = COLOURS.get(colour, colour)
    if colour.startswith("#"):
        r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    else:
        r = g = b = round(255 * float(colour))
    return r, g, b, round(255 * alpha)


def _package_folder(name: str) -> Path | None:
    """The folder of an installed package, found without importing it (None: not installed)."""
    spec = importlib.util.find_spec(name)
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None


@cache
def _font_file(bold: bool) -> str:
    # matplotlib's DejaVu Sans, found without importing matplotlib
    package = _package_folder("matplotlib")
    if package is None:
        raise ImportError("matplotlib (whose DejaVu Sans fonts the figures use) is not installed")
    return str(package / "mpl-data" / "fonts" / "ttf" / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"))


@cache
def font(points: float, bold: bool, dpi: float, face: tuple[str, int] | None = None):
    """DejaVu Sans (bold or not) at `points`, or the font file and index `face` (a fallback)."""
    path, index = face or (_font_file(bold), 0)
    return _memo_font_class()(path, max(1, round(points * dpi / 72 * SUPERSAMPLE)), index=index)


# ---------------------------------------------------------------- glyphs DejaVu lacks
# A character DejaVu Sans has no glyph for (Chinese in a message graded with --lang zh) would
# be drawn as the font's .notdef, an empty box. Such a text is drawn whole with the first font
# that has every glyph of it (a CJK font has Latin too): the Noto Sans CJK SC face that the
# package installs beside matplotlib (so that a Chinese figure is the same on every machine, with
# or without fonts of its own), then the usual font folders, CJK fonts first; a character no
# font has is written as its code point, "<U+4E2D>", visibly.
SHIPPED_FONTS = (("noto_cjk_sans_otc", "NotoSansCJK-Regular.ttc", 2),)   # (package, file, face: SC)
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts", "~/Library/Fonts",
             "/Library/Fonts", "/System/Library/Fonts", "C:/Windows/Fonts")
FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
CJK_FONT_NAMES = re.compile(r"cjk|sourcehan|source-han|wqy|droidsansfallback|notosans(sc|tc|hk|jp|kr)|pingfang|"
                            r"hiragino|heiti|msyh|msjh|simhei|simsun|yahei|ukai|uming|arphic|wenquanyi|unifont")
MOST_FONT_FILES = 300          # the fallback fonts looked at, at most (their character maps are read once)


@cache
def _cmap(path: str, index: int = 0) -> frozenset[int]:
    """The code points that the font (a face `index` of a collection) has a glyph for."""
    from fontTools.ttLib import TTFont

    try:
        with TTFont(path, fontNumber=index, lazy=True) as face:
            return frozenset(face.getBestCmap() or ())
    except Exception:  # noqa: BLE001 - a font file fontTools cannot read is no fallback
        return frozenset()


def _shipped_fonts() -> list[tuple[str, int]]:
    """The installed packages' font faces of SHIPPED_FONTS, found without importing them."""
    folders = [(_package_folder(package), name, index) for package, name, index in SHIPPED_FONTS]
    return [(str(folder / name), index) for folder, name, index in folders
            if folder is not None and (folder / name).is_file()]


@cache
def fallback_fonts() -> tuple[tuple[str, int], ...]:
    """The fonts to draw what DejaVu Sans lacks with, as (file, face): the shipped ones, then the
    font files of this machine, CJK ones first (by name), each folder in sorted order."""
    found: list[Path] = []
    for folder in FONT_DIRS:
        root = Path(folder).expanduser()
        try:
            if root.is_dir():
                found += sorted(p for p in root.rglob("*") if p.suffix.lower() in FONT_SUFFIXES)
        except OSError:
            continue
    found = sorted((p for p in found if p.is_file()), key=lambda p: not CJK_FONT_NAMES.search(p.name.lower()))
    return tuple(_shipped_fonts() + [(str(p), 0) for p in found[:MOST_FONT_FILES]])


MEMO_TEXTS = 4096          # masks and boxes one font keeps (texts of data values come and go)


def _needed(text: str) -> set[int]:
    return {ord(c) for c in text if not c.isspace()}


# Characters beyond ASCII that every DejaVu Sans has, regular and bold (tests/content/
# test_figure_text.py reads both character maps to check): the figures' own labels use some
# (a signal's ✓ and ✗). A text made of these and ASCII is drawn without reading the font's
# character map, which costs fontTools' import and a table's decoding: ~0.075 s of CPU, a
# twelfth of a stub grading, paid once per process by any text beyond ASCII.
IN_DEJAVU = frozenset("✓✗·–—…→←↑↓×−±≤≥≠≈°‖′″αβγδεηθλμρστφω²³")


def _in_dejavu(text: str) -> bool:
    return text.isascii() or all(c.isascii() or c in IN_DEJAVU for c in text)


@lru_cache(maxsize=MEMO_TEXTS)      # texts of data values come and go in a batch job: bounded
def face_for(text: str, bold: bool = False) -> tuple[tuple[str, int] | None, str]:
    """(None: DejaVu Sans, or the (file, index) of the fallback font to draw `text` with; the
    text, where a character that font lacks is written "<U+4E2D>")."""
    if _in_dejavu(text):
        return None, text
    needed = _needed(text)
    if needed <= _cmap(_font_file(bold)):
        return None, text
    best: tuple[int, tuple[str, int]] | None = None
    for face in fallback_fonts():
        covered = len(needed & _cmap(*face))
        if covered == len(needed):
            return face, text
        if covered > len(needed & _cmap(_font_file(bold))) and (best is None or covered > best[0]):
            best = (covered, face)
    if best is None:
        return None, escape_missing(text, _cmap(_font_file(bold)))
    return best[1], escape_missing(text, _cmap(*best[1]))


def escape_missing(text: str, has: frozenset[int]) -> str:
    """`text` with each run of characters the font lacks written as their code points: "<U+4E2D U+6587>"."""
    out, run = [], []
    for c in text + "\0":
        if c != "\0" and not c.isspace() and ord(c) not in has:
            run.append(f"U+{ord(c):04X}")
            continue
        if run:
            out.append("<" + " ".join(run) + ">")
            run = []
        if c != "\0":
            out.append(c)
    return "".join(out)


def printable(text: str) -> str:
    """`text` as it will be drawn: with the escapes face_for puts in for glyphs no font of the
    machine has (so a text can be wrapped as it is drawn)."""
    return face_for(str(text))[1]


@cache
def _memo_font_class():
    from PIL import ImageFont

    class MemoFont(ImageFont.FreeTypeFont):
        """A FreeType font that keeps the glyph masks and text boxes it made. Pillow's
        draw.text asks the font for a mask, then stamps it: rendering the masks was a third
        of the figure's cost, and the same labels come back in every grading of a batch job
        (texts are placed on whole pixels, so a mask does not depend on where it lands)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._memo: dict = {}

    def kept(name: str):
        """The font's method `name`, its answers kept by their arguments."""
        make = getattr(ImageFont.FreeTypeFont, name)

        def method(self, *args, **kwargs):
            key = (name, args, tuple(sorted(kwargs.items())))
            try:
                return self._memo[key]
            except KeyError:
                pass
            except TypeError:          # an unhashable argument: nothing to keep
                return make(self, *args, **kwargs)
            if len(self._memo) >= MEMO_TEXTS:
                self._memo.clear()
            value = self._memo[key] = make(self, *args, **kwargs)
            return value

        return method

    for name in ("getmask2", "getbbox", "getlength"):
        setattr(MemoFont, name, kept(name))
    return MemoFont


class _Text:
    def __init__(self, text, fontsize, colour, ha, va, bold=False, rotation=0, bbox=None):
        self.text, self.fontsize, self.colour, self.ha, self.va = str(text), fontsize, colour, ha, va
        self.bold, self.rotation, self.bbox = bold, rotation, bbox

    def draw(self, fig: Figure, draw, image, x: float, y: float) -> None:
        """Draw with its anchor (ha, va) at pixel (x, y) of the supersampled image."""
        face, text = face_for(self.text, self.bold)
        f = font(self.fontsize, self.bold, fig.dpi, face)
        spacing = round(0.2 * self.fontsize * fig.px)
        left, top, right, bottom = draw.multiline_textbbox((0, 0), text, font=f, spacing=spacing)
        w, h = right - left, bottom - top
        if self.rotation:
            w, h = h, w
        # on whole pixels (of the supersampled image): the font's masks are then reusable
        x0 = round(x - {"left": 0, "center": w / 2, "right": w}[self.ha])
        y0 = round(y - {"top": 0, "center": h / 2, "baseline": h, "bottom": h}[self.va])
        if self.bbox is not None:
            pad = self.bbox.get("pad", 0.3) * self.fontsize * fig.px
            box = [x0 - pad, y0 - pad, x0 + w + pad, y0 + h + pad]
            draw.rounded_rectangle(box, radius=pad, fill=rgba(self.bbox.get("facecolor", "white"),
                                                               self.bbox.get("alpha", 1.0)),
                                   outline=rgba(self.bbox.get("edgecolor", "black")), width=fig.px_width(0.8))
        if self.rotation:
            from PIL import Image, ImageDraw

            label = Image.new("RGBA", (h + 2, w + 2), (0, 0, 0, 0))
            ImageDraw.Draw(label).multiline_text((-left, -top), text, font=f, spacing=spacing,
                                                 fill=rgba(self.colour), align=self.ha)
            label = label.rotate(self.rotation, expand=True)
            image.paste(label, (x0, y0), label)
        else:
            draw.multiline_text((x0 - left, y0 - top), text, font=f, spacing=spacing, fill=rgba(self.colour),
                                align=self.ha)


def nice_ticks(lo: float, hi: float, bins: int, steps=(1, 2, 2.5, 5, 10)) -> list[float]:
    """At most `bins` + 1 round values covering [lo, hi] (matplotlib's MaxNLocator, simplified)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    raw = (hi - lo) / bins
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(s * magnitude for s in steps if s * magnitude >= raw * (1 - 1e-9))
    first = math.floor(lo / step + 1e-9) * step
    return [round(first + i * step, 12) for i in range(int((hi - first) / step + 1e-9) + 2)]


class Axes:
    """One panel: data artists (clipped to the panel) and its texts, drawn at `Figure.render`."""

    transAxes = "axes fraction"

    def __init__(self, fig: Figure, box: tuple[float, float, float, float]):
        self.fig, self.box = fig, box            # (left, bottom, width, height), figure fraction
        self._artists: list[tuple[float, int, Callable]] = []     # (zorder, order, draw(layer, draw))
        self._texts: list[tuple[tuple, object, tuple, _Text]] = []     # (coords, xy, offset, text)
        self._xlim: tuple[float, float] | None = None
        self._ylim: tuple[float, float] | None = None
        self._data_x: list[float] = []
        self._data_y: list[float] = []
        self.log = False
        self.labelsize = 10.0
        self._grid: float | None = None      # the grid lines' alpha; None: no grid
        self._xticks: tuple[list, list] = ([], [])     # (values, labels)
        self._yticks: tuple[list, list] = ([], [])
        self.title: tuple[_Text, float] | None = None  # (text, pad)
        self.xlabel: _Text | None = None
        self.ylabel: _Text | None = None

    # ------------------------------------------------------------------ scales and limits
    def set_yscale(self, scale: str) -> None:
        self.log = scale == "log"

    def _ty(self, y):
        y = np.asarray(y, dtype=float)
        if not self.log:
            return y
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y > 0, np.log10(np.where(y > 0, y, 1.0)), np.nan)

    def _auto(self, data, fallback):
        data = np.asarray(data, dtype=float)
        data = data[np.isfinite(data)]
        if not data.size:
            return fallback
        lo, hi = float(data.min()), float(data.max())
        span = hi - lo or (abs(lo) or 1.0)
        return lo - MARGIN * span, hi + MARGIN * span

    def get_xlim(self):
        return self._xlim or self._auto(self._data_x, (0.0, 1.0))

    def get_ylim(self):
        if self._ylim is not None:
            return self._ylim
        lo, hi = self._auto(self._ty(self._data_y), (0.0, 1.0))
        return (10 ** lo, 10 ** hi) if self.log else (lo, hi)

    def set_xlim(self, lo, hi) -> None:
        self._xlim = (float(lo), float(hi))

    def set_ylim(self, lo, hi) -> None:
        self._ylim = (float(lo), float(hi))

    def set_xticks(self, ticks, labels) -> None:
        self._xticks = (list(ticks), list(labels))

    def set_yticks(self, ticks, labels) -> None:
        self._yticks = (list(ticks), list(labels))

    def grid(self, on: bool = True, alpha: float = 0.25) -> None:
        self._grid = alpha if on else None

    def tick_params(self, labelsize: float) -> None:
        self.labelsize = labelsize

    def set_title(self, text, fontsize=10, color="black", pad=6.0, **_ignored) -> None:
        self.title = (_Text(text, fontsize, color, "left", "bottom"), pad)

    def set_xlabel(self, text, fontsize=10) -> None:
        self.xlabel = _Text(text, fontsize, "black", "center", "top")

    def set_ylabel(self, text, fontsize=10) -> None:
        self.ylabel = _Text(text, fontsize, "black", "center", "center", rotation=90)

    # ------------------------------------------------------------------------ artists
    def _add(self, zorder: float, paint) -> None:
        self._artists.append((zorder, len(self._artists), paint))

    def plot(self, x, y, fmt: str = "", color="tab:blue", linewidth=1.5, linestyle=None, marker=None,
             markersize=6.0, markeredgecolor=None, markeredgewidth=1.0, zorder=2, label=None) -> None:
        if fmt in DASHES:
            linestyle = fmt
        elif fmt:
            marker, linestyle = fmt, "none"
        linestyle = linestyle or "-"
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self._data_x += x[np.isfinite(x)].tolist()
        self._data_y += y[np.isfinite(y)].tolist()

        def paint(ax, draw):
            px, py = ax._to_px(x, ax._ty(y))
            if linestyle != "none":
                for run in _finite_runs(px, py):
                    _polyline(draw, run, rgba(color), ax.fig.px_width(linewidth), DASHES[linestyle])
            if marker:
                for cx, cy in zip(px, py):
                    if math.isfinite(cx) and math.isfinite(cy):
                        _marker(draw, marker, cx, cy, markersize * ax.fig.px, rgba(color),
                                rgba(markeredgecolor or color), ax.fig.px_width(markeredgewidth))
        self._add(zorder, paint)

    def axhline(self, y, color="black", linestyle="-", linewidth=1.0, zorder=2) -> None:
        def paint(ax, draw):
            _, py = ax._to_px(np.zeros(1), ax._ty([y]))
            w = ax._w
            _polyline(draw, [(0, py[0]), (w, py[0])], rgba(color), ax.fig.px_width(linewidth), DASHES[linestyle])
        self._add(zorder, paint)

    def axvline(self, x, color="black", linestyle="-", linewidth=1.0, zorder=2) -> None:
        def paint(ax, draw):
            px, _ = ax._to_px(np.array([x], dtype=float), np.zeros(1))
            _polyline(draw, [(px[0], 0), (px[0], ax._h)], rgba(color), ax.fig.px_width(linewidth),
                      DASHES[linestyle])
        self._add(zorder, paint)

    def axhspan(self, y0, y1, color="black", alpha=1.0, linewidth=0, zorder=1) -> None:
        self._data_y += [y0, y1]

        def paint(ax, draw):
            _, py = ax._to_px(np.zeros(2), ax._ty([y0, y1]))
            draw.rectangle([0, min(py), ax._w, max(py)], fill=rgba(color, alpha))
        self._add(zorder, paint)

    def vlines(self, x, ymin, ymax, color="black", linewidth=1.0, zorder=2) -> None:
        self._data_x.append(float(x))
        self._data_y += [ymin, ymax]

        def paint(ax, draw):
            px, py = ax._to_px(np.array([x, x], dtype=float), ax._ty([ymin, ymax]))
            half = ax.fig.px_width(linewidth) / 2
            draw.rectangle([px[0] - half, min(py), px[0] + half, max(py)], fill=rgba(color))
        self._add(zorder, paint)

    def heatmap(self, values, color="tab:blue", zorder=1) -> None:
        """A matrix as coloured cells (matplotlib's imshow, in the spirit): entry [i, j] fills the
        unit square around (x = j, y = i); its shade is sqrt(value / largest value), so weak
        entries still show, and an entry that is exactly 0 (or not finite) stays white. Set
        ylim to (rows - 0.5, -0.5) for row 0 at the top."""
        values = np.asarray(values, dtype=float)
        rows, cols = values.shape
        self._data_x += [-0.5, cols - 0.5]
        self._data_y += [-0.5, rows - 0.5]
        finite = values[np.isfinite(values)]
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0

        def paint(ax, draw):
            for (i, j), v in np.ndenumerate(values):
                if np.isfinite(v) and v > 0:
                    px, py = ax._to_px(np.array([j - 0.5, j + 0.5]), ax._ty([i - 0.5, i + 0.5]))
                    draw.rectangle([min(px), min(py), max(px), max(py)], fill=rgba(color, min(1.0, (v / top) ** 0.5)))
        self._add(zorder, paint)

    def annotate(self, text, xy, xycoords="data", xytext=(0, 0), textcoords="offset points", color="black",
                 fontsize=10, ha="left", va="baseline", fontweight="normal", **_ignored) -> None:
        coords = (xycoords, xycoords) if isinstance(xycoords, str) else tuple(xycoords)
        self._texts.append((coords, xy, xytext, _Text(text, fontsize, color, ha, va, fontweight == "bold")))

    def text(self, x, y, text, transform=None, fontsize=10, color="black", ha="left", va="baseline",
             bbox=None) -> None:
        coords = ("axes fraction",) * 2 if transform == self.transAxes else ("data", "data")
        if bbox is not None:
            bbox = {"pad": float(bbox.get("boxstyle", "round,pad=0.3").split("pad=")[-1]), **bbox}
        self._texts.append((coords, (x, y), (0, 0), _Text(text, fontsize, color, ha, va, bbox=bbox)))

    # --------------------------------------------------------------------------- drawing
    def _to_px(self, x, y_transformed):
        """Data (y already log10 on a log axis) -> pixels of the panel's own layer."""
        (x0, x1), (y0, y1) = self.get_xlim(), self.get_ylim()
        if self.log:
            y0, y1 = math.log10(y0), math.log10(y1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            px = (np.asarray(x, dtype=float) - x0) / (x1 - x0) * self._w
            py = (1 - (np.asarray(y_transformed, dtype=float) - y0) / (y1 - y0)) * self._h
        return px, py

    def _point(self, coords, xy) -> tuple[float, float]:
        """A point in coordinates ("axes fraction" or "data", per axis) -> image pixels."""
        fx = xy[0] if coords[0] == "axes fraction" else None
        fy = xy[1] if coords[1] == "axes fraction" else None
        px, py = self._to_px(np.array([xy[0] if fx is None else 0.0]), self._ty([xy[1] if fy is None else 1.0]))
        x = self._left + (fx * self._w if fx is not None else px[0])
        y = self._top + ((1 - fy) * self._h if fy is not None else py[0])
        return x, y

    def render(self, image, draw) -> None:
        from PIL import ImageDraw

        fig = self.fig
        left, bottom, width, height = self.box
        self._left, self._top = left * fig.width, (1 - bottom - height) * fig.height
        self._w, self._h = width * fig.width, height * fig.height
        # Data artists are drawn on a copy of the panel's area and pasted back: clipped to it.
        corner = (round(self._left), round(self._top))
        layer = image.crop((*corner, corner[0] + math.ceil(self._w), corner[1] + math.ceil(self._h)))
        layer_draw = ImageDraw.Draw(layer, "RGBA")
        (x0, x1), (y0, y1) = self.get_xlim(), self.get_ylim()
        xticks = [(t, s) for t, s in zip(*self._xticks) if min(x0, x1) <= t <= max(x0, x1)]
        yticks = [(t, s) for t, s in zip(*self._yticks) if min(y0, y1) <= t <= max(y0, y1)]
        if self._grid is not None:
            grey, w = rgba("0.69", self._grid), fig.px_width(0.8)
            for t, _s in xticks:
                px, _ = self._to_px(np.array([t]), np.zeros(1))
                layer_draw.line([(px[0], 0), (px[0], self._h)], fill=grey, width=w)
            for t, _s in yticks:
                _, py = self._to_px(np.zeros(1), self._ty([t]))
                layer_draw.line([(0, py[0]), (self._w, py[0])], fill=grey, width=w)
        for _z, _order, paint in sorted(self._artists, key=lambda a: (a[0], a[1])):
            paint(self, layer_draw)
        image.paste(layer, corner)
        # the frame, the ticks and their labels
        l, t, r, b = self._left, self._top, self._left + self._w, self._top + self._h
        draw.rectangle([l, t, r, b], outline=rgba("black"), width=fig.px_width(0.8))
        tick, pad = TICK_PT * fig.px, TICK_PAD_PT * fig.px
        for value, label in xticks:
            px, _ = self._to_px(np.array([value]), np.zeros(1))
            x = l + px[0]
            draw.line([(x, b), (x, b + tick)], fill=rgba("black"), width=fig.px_width(0.8))
            _Text(label, self.labelsize, "black", "center", "top").draw(fig, draw, image, x, b + tick + pad)
        for value, label in yticks:
            _, py = self._to_px(np.zeros(1), self._ty([value]))
            y = t + py[0]
            draw.line([(l - tick, y), (l, y)], fill=rgba("black"), width=fig.px_width(0.8))
            _Text(label, self.labelsize, "black", "right", "center").draw(fig, draw, image, l - tick - pad, y)
        if self.title is not None:
            text, title_pad = self.title
            text.draw(fig, draw, image, l, t - title_pad * fig.px)
        if self.xlabel is not None:           # fixed places, below the tick labels and left of them
            self.xlabel.draw(fig, draw, image, l + self._w / 2, b + 0.085 * self._h)
        if self.ylabel is not None:
            self.ylabel.draw(fig, draw, image, l - 0.15 * self._w, t + self._h / 2)
        for coords, xy, offset, text in self._texts:
            x, y = self._point(coords, xy)
            # as matplotlib: a text placed at data coordinates is not drawn when they are out of view
            outside = "data" in coords and not (l - 0.5 <= x <= r + 0.5 and t - 0.5 <= y <= b + 0.5)
            if math.isfinite(x) and math.isfinite(y) and not outside:
                text.draw(fig, draw, image, x + offset[0] * fig.px, y - offset[1] * fig.px)


def _finite_runs(px, py):
    """The polyline split where a point is not finite (not drawn, like matplotlib)."""
    run = []
    for x, y in zip(px, py):
        if math.isfinite(x) and math.isfinite(y) and abs(x) < 1e6 and abs(y) < 1e6:
            run.append((float(x), float(y)))
        else:
            if run:
                yield run
            run = []
    if run:
        yield run


def _polyline(draw, points, colour, width: int, dashes) -> None:
    if len(points) == 1:
        return
    if dashes is None:
        draw.line(points, fill=colour, width=width, joint="curve")
        return
    pattern = [d * width for d in dashes]
    i, left, on = 0, pattern[0], True          # position in the pattern
    for (xa, ya), (xb, yb) in zip(points, points[1:]):
        length = math.hypot(xb - xa, yb - ya)
        done = 0.0
        while done < length:
            step = min(left, length - done)
            if on:
                f0, f1 = done / length, (done + step) / length
                draw.line([(xa + (xb - xa) * f0, ya + (yb - ya) * f0), (xa + (xb - xa) * f1, ya + (yb - ya) * f1)],
                          fill=colour, width=width)
            done += step
            left -= step
            if left <= 1e-9:
                i = (i + 1) % len(pattern)
                left, on = pattern[i], not on


def _marker(draw, kind: str, x: float, y: float, size: float, face, edge, edge_width: int) -> None:
    r = size / 2
    if kind == "*":
        points = [(x + (r if k % 2 == 0 else 0.4 * r) * math.sin(k * math.pi / 5),
                   y - (r if k % 2 == 0 else 0.4 * r) * math.cos(k * math.pi / 5)) for k in range(10)]
        draw.polygon(points, fill=face, outline=edge, width=edge_width)
    else:                                       # "o" and "." (a smaller dot)
        r = r if kind == "o" else r / 2
        draw.ellipse([x - r, y - r, x + r, y + r], fill=face)


class Figure:
    def __init__(self, figsize: tuple[float, float], dpi: float):
        self.dpi = dpi
        self.px = dpi / 72 * SUPERSAMPLE                         # pixels per point, supersampled
        self.size = (round(figsize[0] * dpi), round(figsize[1] * dpi))
        self.width, self.height = self.size[0] * SUPERSAMPLE, self.size[1] * SUPERSAMPLE
        self.axes: list[Axes] = []
        self._texts: list[tuple[float, float, _Text]] = []
        self._legend: tuple[list, float, float, float, float, float] | None = None
        self._adjust = {"left": 0.125, "right": 0.9, "bottom": 0.11, "top": 0.88, "wspace": 0.2, "hspace": 0.2}

    def px_width(self, points: float) -> int:
        return max(1, round(points * self.px))

    def subplots(self, rows: int, cols: int) -> list[Axes]:
        self._grid = (rows, cols)
        self.axes = [Axes(self, (0, 0, 0, 0)) for _ in range(rows * cols)]
        self._place()
        return self.axes

    def subplots_adjust(self, **margins) -> None:
        self._adjust.update(margins)
        self._place()

    def _place(self) -> None:
        """Each panel's box, as matplotlib's GridSpec places it (wspace, hspace: fractions of a panel)."""
        rows, cols = self._grid
        a = self._adjust
        w = (a["right"] - a["left"]) / (cols + (cols - 1) * a["wspace"])
        h = (a["top"] - a["bottom"]) / (rows + (rows - 1) * a["hspace"])
        for i, ax in enumerate(self.axes):
            r, c = divmod(i, cols)
            ax.box = (a["left"] + c * w * (1 + a["wspace"]), a["top"] - h - r * h * (1 + a["hspace"]), w, h)

    def suptitle(self, text, fontsize=12, x=0.5, y=0.98, ha="center") -> None:
        self._texts.append((x, y, _Text(text, fontsize, "black", ha, "top")))

    def legend(self, entries, x: float, y: float, fontsize: float = 7, handlelength: float = 2.2,
               columnspacing: float = 1.6) -> None:
        """One row of keys from the top-left corner (x, y) (figure fraction). `entries`:
        (style, label), style the keyword arguments of `Axes.plot` for a line or a marker."""
        self._legend = (entries, x, y, fontsize, handlelength, columnspacing)

    def _draw_legend(self, image, draw, legend: tuple[list, float, float, float, float, float]) -> None:
        entries, x, y, fontsize, handlelength, columnspacing = legend
        em = fontsize * self.px
        left, middle = x * self.width, (1 - y) * self.height + em
        for style, label in entries:
            length = handlelength * em
            if style.get("marker"):
                _marker(draw, style["marker"], left + length / 2, middle, style.get("markersize", 6) * self.px,
                        rgba(style.get("color", "white")), rgba(style.get("markeredgecolor", "black")),
                        self.px_width(1.0))
            else:
                _polyline(draw, [(left, middle), (left + length, middle)], rgba(style["color"]),
                          self.px_width(style.get("linewidth", 1.5)), DASHES[style.get("linestyle", "-")])
            text = _Text(label, fontsize, "black", "left", "center")
            text.draw(self, draw, image, left + length + 0.8 * em, middle)
            face, shown = face_for(label)
            left += length + 0.8 * em + draw.textlength(shown, font=font(fontsize, False, self.dpi, face)) + \
                columnspacing * em

    def render(self):
        """The figure as a PIL RGB image of `size` pixels."""
        from PIL import Image, ImageDraw

        # RGB, drawn with RGBA inks (blended): the figure is opaque, so no alpha channel to
        # carry through the full-size image and convert away at the end
        image = Image.new("RGB", (self.width, self.height), (255, 255, 255))
        draw = ImageDraw.Draw(image, "RGBA")
        for ax in self.axes:
            ax.render(image, draw)
        for x, y, text in self._texts:
            text.draw(self, draw, image, x * self.width, (1 - y) * self.height)
        if self._legend is not None:
            self._draw_legend(image, draw, self._legend)
        return image.reduce(SUPERSAMPLE)
