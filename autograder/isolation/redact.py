"""Instructor paths out of student-visible text.

A student's exception message or traceback can name where the grader keeps its files: the
unit's folder (its hidden suites and solutions sit beside it), the grader's install, the
Python environment, the temporary folders of the workers, the machine's home and working
folders (student code reads them from module `__file__`s, `__path__`s and frames). Every
message the grader builds from a worker reply passes through a `Redactor`, which puts a
label in place of each such folder: "<unit>/oracles.py", "<python>/lib/...".
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import autograder


def _variants(path) -> set[str]:
    """The path as given, absolute and with links resolved (any of them can appear)."""
    out = set()
    for p in (str(path), os.path.abspath(path), os.path.realpath(path)):
        p = p.rstrip(os.sep)
        if len(Path(p).parts) >= 2:            # never "/" itself
            out.add(p)
    return out


def host_paths() -> dict[str, str]:
    """The grader's own folders, whatever the unit: path -> label."""
    labels = {}
    for path in (tempfile.gettempdir(), os.getcwd(), Path.home()):
        labels[str(path)] = {str(Path.home()): "~", tempfile.gettempdir(): "<tmp>"}.get(str(path), "<cwd>")
    # The environment and every folder imports come from (site-packages a .pth file adds too).
    for path in {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values(),
                 *(p for p in sys.path if os.path.isabs(p))}:
        labels[str(path)] = "<python>"
    labels[str(Path(autograder.__file__).resolve().parent.parent)] = "<grader>"
    return labels


class Redactor:
    """Replaces each of `paths` (path -> label) by its label; longer paths first, so the
    unit folder inside the grader's install reads "<unit>", not "<grader>/autograder/...".
    A path matches only as a whole folder name ("/tmp" never eats "/tmpfiles")."""

    def __init__(self, paths: dict):
        labels: dict[str, str] = {}
        for path, label in {**host_paths(), **{str(k): v for k, v in paths.items()}}.items():
            for variant in _variants(path):
                labels.setdefault(variant, label)
        self._labels = labels
        ordered = sorted(labels, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(p) + r"(?![\w.-])" for p in ordered)) if ordered else None
        self._bytes = re.compile("|".join(re.escape(p) for p in ordered).encode()) if ordered else None

    def __call__(self, text: str) -> str:
        if not self._pattern or not isinstance(text, str):
            return text
        return self._pattern.sub(lambda m: self._labels[m.group(0)], text)

    def may_name(self, raw: bytes) -> bool:
        """Whether a frame's bytes hold one of the paths (a quick test before `strings`)."""
        return bool(self._bytes and self._bytes.search(raw))

    def strings(self, value):
        """`value` (a decoded reply: dicts, lists, tuples, arrays) with every string in it
        redacted, results included (a check's message may quote what a function returned).
        Arrays are left alone: their bytes are data, not text."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return type(value)({self.strings(k): self.strings(v) for k, v in value.items()})
        if isinstance(value, (list, tuple)):
            return type(value)(self.strings(v) for v in value)
        return value


redact_paths = Redactor({})
