"""Report writers, one module per format, each an exporter of one `GradeResult`:
score.json, score.md, junit.xml, results.json (Gradescope) and the terminal table.

Student-derived text goes through the sanitiser of its format (`autograder.reports.text`);
what a student may see of the hidden tests is cut once, before any format renders
(`autograder.reports.detail`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.grading.score import GradeResult
from autograder.reports import gradescope_results, junit, markdown, score_json
from autograder.reports.detail import visible

__all__ = ["FILES", "atomic_write", "visible", "write_all"]
from autograder.reports.files import atomic_write

FILES: dict[str, Callable[..., str]] = {"score.md": markdown.render, "junit.xml": junit.render, "results.json": gradescope_results.render,
         "score.json": score_json.render}


def write_all(out_dir: Path, result: GradeResult, images: Sequence[tuple[str, str]] = (),
              hidden_detail: str = "hints") -> list[Path]:
    """Write every format into `out_dir`; `images` are (file name, caption) shown in score.md,
    `hidden_detail` how much of the hidden tests every format shows (see reports.detail)."""
    shown = visible(result, hidden_detail)
    texts = {name: (render(shown, images, hidden_detail) if name == "score.md" else render(shown))
             for name, render in FILES.items()}
    # score.json last: a reader that sees the new score also finds the other new files.
    for name, text in texts.items():
        atomic_write(Path(out_dir) / name, text)
    return [Path(out_dir) / n for n in texts]


def remove_earlier(out_dir: Path) -> None:
    """Remove the reports an earlier grading wrote into `out_dir`: a grading that did not
    finish (Ctrl-C) leaves none, rather than an older one that looks like its own."""
    for name in FILES:
        (Path(out_dir) / name).unlink(missing_ok=True)
