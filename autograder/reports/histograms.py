"""class.png: a grid of histograms (students per score band), drawn with Pillow.

matplotlib drew it before: importing it and drawing the ten panels of a class cost about
1 CPU-s at the end of every batch run, more than a student's whole grading; Pillow draws
them in a few hundredths. A panel is a title and the students in each band of `edges`
(percent of the topic's points): bars on a frame, the bands' edges under it, whole
numbers of students beside it.
"""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw, ImageFont

BAR, EDGE, INK, GRID = (76, 114, 176), (255, 255, 255), (38, 38, 38), (128, 128, 128)
DPI = 90
PANEL_W, PANEL_H = 3.2, 2.3          # inches, as the report has always been laid out
COLUMNS = 4


def _font(points: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(8, round(points * DPI / 72)))


def integer_ticks(top: int) -> list[int]:
    """Whole numbers from 0 to at least `top`, at most six of them, at a step of 1, 2 or 5 times a power of ten."""
    top = max(top, 1)
    step = next(s * 10 ** e for e in range(0, 12) for s in (1, 2, 5) if top / (s * 10 ** e) <= 5)
    return list(range(0, step * math.ceil(top / step) + 1, step))


def _text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, font, anchor: str) -> None:
    draw.text(xy, text, fill=INK, font=font, anchor=anchor)


def _panel(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], title: str, counts: list[int],
           edges: list[int], xlabel: str) -> None:
    left, top, right, bottom = box
    small, label = _font(7), _font(9)
    _text(draw, ((left + right) / 2, top - 4), title, label, "md")
    ticks = integer_ticks(max(counts, default=0))
    scale = (bottom - top) / ticks[-1]
    lo, hi = edges[0], edges[-1]

    def x_of(value: float) -> float:
        return left + (right - left) * (value - lo) / (hi - lo)

    for count, (a, b) in zip(counts, zip(edges, edges[1:])):
        if count:
            draw.rectangle((x_of(a), bottom - count * scale, x_of(b), bottom), fill=BAR, outline=EDGE)
    draw.rectangle(box, outline=INK)
    for tick in ticks:
        y = bottom - tick * scale
        draw.line((left - 3, y, left, y), fill=INK)
        _text(draw, (left - 5, y), str(tick), small, "rm")
    for value in edges[::2]:
        draw.line((x_of(value), bottom, x_of(value), bottom + 3), fill=INK)
        _text(draw, (x_of(value), bottom + 5), f"{value:g}", small, "mt")
    _text(draw, ((left + right) / 2, bottom + 16), xlabel, small, "mt")


def png(title: str, panels: list[tuple[str, list[int]]], edges: list[int], xlabel: str) -> bytes:
    """The grid of `panels` ((title, students per band)), `COLUMNS` a row, under `title`, as PNG bytes."""
    rows = max(1, -(-len(panels) // COLUMNS))
    w, h = round(PANEL_W * DPI), round(PANEL_H * DPI)
    image = Image.new("RGB", (COLUMNS * w, rows * h + 30), "white")
    draw = ImageDraw.Draw(image)
    _text(draw, (image.width / 2, 8), title, _font(10), "mt")
    for i, (name, counts) in enumerate(panels):
        x, y = (i % COLUMNS) * w, 30 + (i // COLUMNS) * h
        _panel(draw, (x + 34, y + 22, x + w - 10, y + h - 34), name, counts, edges, xlabel)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
