"""One sanitiser per output format for text that may come from student code.

Exception messages, type names and printed output are the student's: they pass through
the sanitiser of the format they are written into, never raw.
"""

from __future__ import annotations

import re

# C0/C1 control characters except tab and newline (ANSI/OSC escapes start with ESC), lone
# surrogates (valid in a JSON string, but no file or terminal can encode them), and the
# bidirectional controls (marks, embeddings, overrides, isolates), which make text display
# in an order other than the one it is read in ("Trojan source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Characters XML 1.0 cannot hold at all.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Markdown characters that start code, emphasis, links, images, tables, headings or HTML
# (`<` and `&` are HTML-escaped first).
_MARKDOWN = re.compile(r"([\\`*_\[\]!|#~])")
# Where GitHub would make a link or a notification of Markdown text: a URL (before its
# "://", after "www"), an @mention or e-mail address (after the "@"), an issue reference
# (after the "#"). An invisible WORD JOINER there keeps the text readable but inert.
_AUTOLINK = re.compile(r"(?<=\w)(?=://)|(?i:(?<=www)(?=\.))|(?<=@)(?=\w)|(?<=#)(?=\d)")
WORD_JOINER = "\u2060"
_ENTITY = re.compile(r"&(?=#?\w+;)")
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")


def plain(text: str) -> str:
    """Printable text: escape sequences and control characters removed (tab and newline kept)."""
    return _CONTROL.sub("", _ANSI.sub("", str(text)))


def one_line(text: str, limit: int = 800) -> str:
    text = " ".join(plain(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def terminal(text: str) -> str:
    return plain(text)


def markdown(text: str, limit: int = 800) -> str:
    """One line of inert Markdown: no heading, table, link, image, HTML, autolink or
    @mention can start in it."""
    # Only `<` and an `&` that starts an entity are escaped: with them no tag or character
    # reference can start, while "&gt;=" or "&amp;" would show as such where score.md is read
    # as text (an editor, a terminal).
    escaped = _MARKDOWN.sub(r"\\\1", _ENTITY.sub("&amp;", one_line(text, limit)).replace("<", "&lt;"))
    return _AUTOLINK.sub(WORD_JOINER, escaped)


def xml_text(text: str) -> str:
    """Text an XML 1.0 document can hold (the XML library escapes markup)."""
    return _NOT_XML.sub("", plain(text))


def csv_cell(value) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    text = one_line(str(value), 2000)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
