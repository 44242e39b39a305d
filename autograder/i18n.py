"""Student-facing text in English or Chinese (zh-CN), through gettext catalogues.

Code marks text with `_()`, looked up when it is called, in the language of the grading run,
or with `N_()`, which only marks a constant for extraction (translate it where it is shown).
Placeholders are named `str.format` fields, so a translation may reorder them:

    _("{what} has shape {got}, expected {want}").format(what=what, got=got, want=want)

Catalogues (PO files, the usual gettext format; edit them with any PO editor or Babel):

    autograder/locale/<lang>/LC_MESSAGES/autograder.po     the engine's text
    <unit folder>/locale/<lang>/LC_MESSAGES/unit.po         one unit's shared text
    <unit folder>/topics/<topic>/locale/<lang>/LC_MESSAGES/unit.po   the text only that topic uses
                                                            (its hints, suite and public-test messages)

`python -m autograder.i18n compile` writes the .mo files next to them (`make` does this at
install); a missing or stale .mo is compiled in memory instead, so a checkout always works.
English is the source language: it needs no catalogue.
"""

from __future__ import annotations

import ast
import contextlib
import gettext
import io
import os
import struct
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "zh")
LOCALE_NAMES = {"zh": "zh_CN"}          # our language code -> gettext's folder name
ENGINE_LOCALE = Path(__file__).resolve().parent / "locale"
ENGINE_DOMAIN, UNIT_DOMAIN = "autograder", "unit"

_active: gettext.NullTranslations = gettext.NullTranslations()
_language = "en"


def language_from_environment(environ=None) -> str:
    """"zh" when the locale asks for Chinese (LANGUAGE, LC_ALL, LC_MESSAGES or LANG, in
    gettext's order of precedence), else "en"."""
    environ = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            first = value.split(":")[0].lower()
            return "zh" if first.startswith("zh") else "en"
    return "en"


def _unquote(text: str) -> str:
    return ast.literal_eval(text) if text.startswith('"') else ""


def read_po(text: str) -> dict[str, str]:
    """msgid -> msgstr of a PO file (single forms; fuzzy and obsolete entries left out;
    the header entry, msgid "", is kept)."""
    entries: dict[str, str] = {}
    current: dict[str, str] = {}
    field, fuzzy = None, False

    def flush():
        nonlocal current, fuzzy
        if "msgid" in current and not fuzzy:
            entries[current["msgid"]] = current.get("msgstr", "")
        current, fuzzy = {}, False

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
            field = None
        elif line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid "):
            if "msgid" in current:
                flush()
            field, current["msgid"] = "msgid", _unquote(line[6:].strip())
        elif line.startswith("msgstr "):
            field, current["msgstr"] = "msgstr", _unquote(line[7:].strip())
        elif line.startswith('"') and field:
            current[field] += _unquote(line)
    flush()
    return entries


def compile_mo(messages: dict[str, str]) -> bytes:
    """The GNU .mo file of `messages` (untranslated entries left out, as msgfmt does)."""
    pairs = sorted((k.encode(), v.encode()) for k, v in messages.items() if v or not k)
    n = len(pairs)
    keys_start = 7 * 4
    values_start = keys_start + n * 8
    data_start = values_start + n * 8
    ids, strs, key_table, value_table = b"", b"", [], []
    for k, _v in pairs:
        key_table.append((len(k), len(ids)))
        ids += k + b"\0"
    strs_start = data_start + len(ids)
    for _k, v in pairs:
        value_table.append((len(v), strs_start + len(strs)))
        strs += v + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, n, keys_start, values_start, 0, data_start)
    out += b"".join(struct.pack("<2I", length, data_start + offset) for length, offset in key_table)
    out += b"".join(struct.pack("<2I", length, offset) for length, offset in value_table)
    return out + ids + strs


def catalogue(locale_dir: Path, domain: str, language: str) -> Path:
    return Path(locale_dir) / LOCALE_NAMES.get(language, language) / "LC_MESSAGES" / f"{domain}.po"


def _translations(po: Path) -> gettext.NullTranslations:
    if not po.is_file():
        return gettext.NullTranslations()
    mo = po.with_suffix(".mo")
    newest = max(po.stat().st_mtime, mo.stat().st_mtime if mo.is_file() else 0.0)
    return _read_catalogue(po, newest)


@lru_cache(maxsize=16)
def _read_catalogue(po: Path, _newest: float) -> gettext.GNUTranslations:
    """The catalogue of `po`, read once per process (a batch job grades many submissions)
    and again only when a file changed (`_newest` is in the cache key)."""
    mo = po.with_suffix(".mo")
    if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as fp:
            return gettext.GNUTranslations(fp)
    return gettext.GNUTranslations(io.BytesIO(compile_mo(read_po(po.read_text(encoding="utf-8")))))


def unit_translations(unit_locales: Sequence[Path], language: str) -> dict[str, str]:
    """English text -> its translation, over all of a unit's catalogues (`Unit.locale_dirs`)."""
    table: dict[str, str] = {}
    for locale_dir in unit_locales:
        po = catalogue(locale_dir, UNIT_DOMAIN, language)
        if po.is_file():
            table.update(read_po(po.read_text(encoding="utf-8")))
    return table


def activate(language: str | None = None, unit_locales: Sequence[Path] = ()) -> str:
    """Make `language` (None: from the locale) the language of `_`: the unit's catalogues
    (`Unit.locale_dirs`: the unit's and its topics') first, then the engine's. Returns the
    language chosen."""
    global _active, _language
    language = language or language_from_environment()
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}")
    chain = gettext.NullTranslations()
    if language != "en":
        chain = _translations(catalogue(ENGINE_LOCALE, ENGINE_DOMAIN, language))
        if unit_locales:
            chain = _Chain(*(_translations(catalogue(d, UNIT_DOMAIN, language)) for d in unit_locales), chain)
    _active, _language = chain, language
    return language


class _Chain(gettext.NullTranslations):
    """The first catalogue that translates a message wins. (gettext's add_fallback would
    change the catalogues, which are shared: they are read once per process.)"""

    def __init__(self, *catalogues):
        super().__init__()
        self._catalogues = catalogues

    def gettext(self, message):
        for catalogue_ in self._catalogues:
            translated = catalogue_.gettext(message)
            if translated != message:
                return translated
        return message


@contextlib.contextmanager
def speaking(language: str | None):
    """`language` (None: the locale's) as the language of `_` inside the block, the one
    before it after (a batch coordinator writes the class report in the run's language)."""
    before = _active, _language
    activate(language)
    try:
        yield
    finally:
        _restore(*before)


def _restore(active: gettext.NullTranslations, language: str) -> None:
    global _active, _language
    _active, _language = active, language


def current_language() -> str:
    return _language


def _(message: str) -> str:
    return _active.gettext(message)


def N_(message: str) -> str:
    return message


def compile_all(roots) -> list[Path]:
    """Write the .mo of every .po under `roots`; returns the files written."""
    written = []
    for root in roots:
        for po in sorted(Path(root).rglob("*.po")):
            mo = po.with_suffix(".mo")
            mo.write_bytes(compile_mo(read_po(po.read_text(encoding="utf-8"))))
            written.append(mo)
    return written


def main(argv=None) -> int:
    """python -m autograder.i18n compile [PO ...]: write the .mo of those PO files (default: all)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["compile"]:
        print("usage: python -m autograder.i18n compile [PO ...]", file=sys.stderr)
        return 2
    if argv[1:]:
        for po in map(Path, argv[1:]):
            po.with_suffix(".mo").write_bytes(compile_mo(read_po(po.read_text(encoding="utf-8"))))
    else:
        compile_all([ENGINE_LOCALE, Path(__file__).resolve().parent / "units"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
