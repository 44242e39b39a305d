"""Instructor paths out of student-visible text.

A student's exception message or traceback can name where the grader keeps its files: the
unit's folder (its hidden suites and solutions sit beside it), the grader's install, the
Python environment, the temporary folders of the workers, the machine's home and working
folders (student code reads them from module `__file__`s, `__path__`s and frames). Every
message the grader builds from a worker reply passes through a `Redactor`, which puts a
label in place of each such folder: "<unit>/oracles.py", "<python>/lib/...".

That catches a folder written as it is. Student code can also write one encoded (base64,
hex, rot13, reversed, split by zero-width characters, in full-width letters). So the text a
report shows of a student (`Redactor.report_text`) is held to what it may carry: normalised
(NFKC) and printable (no control or format character but newline and tab); a run of more than
64 characters without a space is cut in the middle (a message needs no such run: encoded data
is one); and a text from which one of the folders can be decoded — reversed, rot13, or the
base64 or hex its characters spell, spaces and punctuation between them ignored — is withheld.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import os
import re
import sys
import sysconfig
import tempfile
import unicodedata
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
        self._shown: dict[str, str] = {}     # report_text's answers: a grading sends the same texts many times

    def __call__(self, text: str) -> str:
        if not self._pattern or not isinstance(text, str):
            return text
        return self._pattern.sub(lambda m: self._labels[m.group(0)], text)

    def strings(self, value):
        """`value` (a decoded reply: dicts, lists, tuples, arrays) with every string in it
        held to what a report may show (`report_text`), results included (a check's message
        may quote what a function returned). Arrays are left alone: their bytes are data, not
        text. Short strings (a token, a key) are only labelled: nothing can be encoded in them."""
        if isinstance(value, str):
            return self.report_text(value) if len(value) > SHORT else self(value)
        if isinstance(value, dict):
            return type(value)({self.strings(k): self.strings(v) for k, v in value.items()})
        if isinstance(value, (list, tuple)):
            return type(value)(self.strings(v) for v in value)
        return value


    # ------------------------------------------------------ text shown in reports
    def report_text(self, text: str) -> str:
        """`text` (built from what student code sent) as a report may show it: folders
        labelled, normalised, printable, no opaque run, nothing encoded (see the module)."""
        if not isinstance(text, str) or not text:
            return text
        shown = self._shown.get(text)
        if shown is None:
            shown = self._report_text(text)
            if len(self._shown) < SHOWN_KEPT and len(text) <= SHOWN_LONGEST:     # bounded: student code sends them
                self._shown[text] = shown
        return shown

    def _report_text(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        text = "".join(c for c in text if c in "\n\t" or unicodedata.category(c)[0] not in "CZ" or c == " ")
        text = self(text)
        if self._encodes_a_folder(text):
            return WITHHELD
        return _OPAQUE.sub(lambda m: f"{m.group(0)[:24]}…{m.group(0)[-16:]}", text)

    def _encodes_a_folder(self, text: str) -> bool:
        if not self._bytes:
            return False
        for variant in (text, text[::-1], codecs.encode(text, "rot13"), codecs.encode(text[::-1], "rot13")):
            if variant is not text and self._pattern and self._pattern.search(variant):
                return True
            for data in _decodings(variant):
                if self._bytes.search(data) or self._bytes.search(data[::-1]):
                    return True
        return False


SHOWN_KEPT, SHOWN_LONGEST = 4096, 1024    # texts report_text remembers (a stub's message comes once per test)
SHORT = 12           # the shortest encoding of a folder of two names is longer
WITHHELD = "<text withheld: it held the grader's folders in encoded form>"
_OPAQUE = re.compile(r"\S{65,}")
_B64 = re.compile(r"[A-Za-z0-9+/_-]")
_HEX = re.compile(r"[0-9a-fA-F]")


def _decodings(text: str):
    """What the base64 and the hex that the characters of `text` spell decode to, at every
    alignment (what lies between them, spaces or punctuation, dropped)."""
    letters = "".join(_B64.findall(text))
    if len(letters) >= 8:
        for start in range(4):
            chunk = letters[start:]
            chunk = chunk[:len(chunk) - len(chunk) % 4]
            for alphabet in (None, b"-_"):
                try:
                    yield base64.b64decode(chunk, altchars=alphabet) if alphabet else base64.b64decode(chunk)
                except (binascii.Error, ValueError):
                    pass
    digits = "".join(_HEX.findall(text))
    if len(digits) >= 8:
        for start in range(2):
            chunk = digits[start:]
            try:
                yield bytes.fromhex(chunk[:len(chunk) - len(chunk) % 2])
            except ValueError:
                pass


redact_paths = Redactor({})
