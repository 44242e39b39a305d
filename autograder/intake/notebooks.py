"""The module files a folder of notebooks holds: the answer cells of the course's nbgrader
notebooks (grade_id `module_<module>`), or a student's own cells that start with
`%%writefile <module>.py`. Notebooks are read as JSON (nothing in them runs) and never
through a link."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.intake.files import read_regular

ANSWER_PREFIX = "module_"          # grade_id of a topic's answer cell: module_<module>
MAX_NOTEBOOK_BYTES = 20 << 20


def answer_module(cell) -> str | None:
    """The module an nbgrader answer cell writes, or None for any other cell."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    grade_id = str(meta.get("grade_id", ""))
    if cell.get("cell_type") == "code" and meta.get("solution") and grade_id.startswith(ANSWER_PREFIX):
        return grade_id[len(ANSWER_PREFIX):]
    return None


def answer_body(source: str) -> str:
    """The module text of an answer cell: its source without a leading `%%writefile` line."""
    first, _nl, rest = source.partition("\n")
    return rest if first.strip().startswith("%%writefile") else source


def _writefile_module(source: str) -> str | None:
    """`attention` for a cell whose first line is `%%writefile attention.py` (no option)."""
    words = source.partition("\n")[0].split()
    if len(words) == 2 and words[0] == "%%writefile" and words[1].endswith(".py"):
        return words[1][:-3]
    return None


def _cells(path: Path) -> list:
    data = read_regular(path, limit=MAX_NOTEBOOK_BYTES)      # a FIFO or a link is never read
    try:
        cells = json.loads(data or b"{}").get("cells", [])
    except (ValueError, AttributeError):
        return []
    return cells if isinstance(cells, list) else []


def modules_in(folder: Path, wanted: set[str] | None = None) -> dict[str, str]:
    """module name -> source, from the answer cells of the notebooks in `folder` (with
    `wanted`, module names: also from `%%writefile <module>.py` cells of those modules)."""
    modules = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        for cell in _cells(path):
            if not isinstance(cell, dict):
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            module = answer_module(cell)
            if module is None and wanted and cell.get("cell_type") == "code":
                module = _writefile_module(source)
                module = module if module in wanted else None
            if module and module.isidentifier():
                modules[module] = answer_body(source)
    return modules
