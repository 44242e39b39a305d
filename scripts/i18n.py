"""Keep the translation catalogues in step with the code: `make i18n`.

Collects every student-facing English text (the msgids) and merges them into the PO files:

- the engine (autograder/, units excluded): `_("...")` and `N_("...")` calls;
- each unit: those calls in its Python files (hidden suites, lab, artefacts, helpers), the
  rubric's hints and titles, the manifest's `signals_title`, the oral-exam title, and the
  stubs' text: each solution function's docstring summary and its `# TODO:` comment.

A unit's msgids are split between its catalogues: a text used only by one topic's files (its
rubric, hidden suite, public test, solution module) goes to that topic's catalogue
(topics/<topic>/locale/), any other to the unit's own (locale/), so a topic's folder carries
its translations. A msgid already translated keeps its translation (wherever it was before);
a new one gets an empty msgstr (a test fails until it is translated); one no longer used is
dropped. Run it after changing text.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "scripts"))

import make_stubs  # noqa: E402

from autograder import i18n  # noqa: E402
from autograder.unit.load import load_unit  # noqa: E402
from autograder.unit.model import TOPICS  # noqa: E402

MARKERS = ("_", "N_")


def calls(path: Path) -> list[tuple[str, int]]:
    """(text, line) of every _("...") and N_("...") with a literal argument in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


def stub_texts(module: Path) -> list[tuple[str, int]]:
    """The docstring summary of every public function, and every `# TODO:` comment, of a
    solution module: what the generated stubs show in both languages."""
    text = module.read_text(encoding="utf-8")
    found = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            doc = ast.get_docstring(node)
            if doc:
                found.append((make_stubs.summary(doc), node.lineno))
    for first, _last, _indent, comment in make_stubs.todo_comments(text.splitlines(keepends=True)):
        found.append((comment, first + 1))
    return found



def engine_messages() -> dict[str, list[str]]:
    root = REPO / "autograder"
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if "units" in path.relative_to(root).parts:
            continue
        for text, line in calls(path):
            found.setdefault(text, []).append(f"{path.relative_to(REPO)}:{line}")
    return found


def unit_messages(unit) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}

    def add(text, where):
        if text:
            found.setdefault(text, []).append(where)

    paths = sorted(unit.path.rglob("*.py")) + sorted(unit.dirs["public_tests"].glob("*.py"))   # rglob skips links
    for path in paths:
        rel = path.relative_to(unit.path) if path.is_relative_to(unit.path) else Path("public") / path.name
        if rel.parts[0] == "reference" or "__pycache__" in rel.parts:
            continue
        for text, line in calls(path):
            add(text, f"{rel}:{line}")
    for topic in unit.rubric.topics:
        add(topic.title, f"topics/{topic.id}/rubric.yaml")
        for test in topic.tests:
            add(test.hint, f"topics/{topic.id}/rubric.yaml:{test.test}")
    add(unit.signals_title, "unit.yaml")
    if unit.oral_exam is not None:
        add(unit.oral_exam.title, "oral_exam.yaml")
    for module in sorted(unit.dirs["reference"].glob("*.py")):
        for text, line in stub_texts(module):
            add(text, f"reference/{module.name}:{line}")
    return found


def topic_of(unit, where: str) -> str | None:
    """The topic whose files alone hold the location `where` ("path:line" relative to the
    unit), or None for the unit's shared files."""
    rel = Path(where.partition(":")[0])
    if rel.parts[0] == TOPICS and len(rel.parts) > 2:
        return rel.parts[1]
    if rel.parts[0] == "public" and rel.stem.removeprefix("test_") in {t.id for t in unit.topics}:
        return rel.stem.removeprefix("test_")
    if rel.parts[0] == "reference" and rel.stem in unit.modules:
        return unit.modules[rel.stem].id
    return None


def by_catalogue(unit, messages: dict[str, list[str]]) -> dict[Path, dict[str, list[str]]]:
    """The unit's messages per locale folder: a topic's when only that topic uses the text,
    else the unit's (`locale/`). Every folder of `unit.locale_dirs()` is a key."""
    folders = {None: unit.path / "locale"} | {t.id: t.folder / "locale" for t in unit.topics}
    out: dict[Path, dict[str, list[str]]] = {folder: {} for folder in folders.values()}
    for text, wheres in messages.items():
        owners = {topic_of(unit, where) for where in wheres}
        out[folders[owners.pop() if len(owners) == 1 else None]][text] = wheres
    return out


def _quote(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


def _files(wheres: list[str]) -> list[str]:
    """The files of "path:line" locations, once each: a catalogue names where a text is, not
    its line, so an edit elsewhere in the file leaves the catalogue as it was."""
    return list(dict.fromkeys(re.sub(r":\d+$", "", where) for where in wheres))


def render_po(messages: dict[str, list[str]], translations: dict[str, str], language: str) -> str:
    header = (f"Content-Type: text/plain; charset=UTF-8\\nLanguage: {i18n.LOCALE_NAMES.get(language, language)}\\n")
    out = ['# Generated by `make i18n` from the code; translate the msgstr lines.',
           'msgid ""', f'msgstr "{header}"', ""]
    for text in messages:
        out += [f"#: {' '.join(_files(messages[text])[:3])}", f"msgid {_quote(text)}",
                f"msgstr {_quote(translations.get(text, ''))}", ""]
    return "\n".join(out)


def update(po: Path, messages: dict[str, list[str]], language: str, known: dict[str, str] | None = None) -> list[str]:
    """Merge `messages` into `po`, translated from `known` (default: `po` itself); returns
    the msgids still untranslated."""
    old = known if known is not None else i18n.read_po(po.read_text(encoding="utf-8")) if po.is_file() else {}
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(render_po(messages, old, language), encoding="utf-8")
    return [m for m in messages if not old.get(m)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a catalogue is out of date")
    args = parser.parse_args(argv)
    stale = []
    languages = [lang for lang in i18n.LANGUAGES if lang != "en"]
    catalogues = [(i18n.catalogue(i18n.ENGINE_LOCALE, i18n.ENGINE_DOMAIN, lang), engine_messages(), lang, None)
                  for lang in languages]
    for unit_dir in sorted((REPO / "autograder" / "units").iterdir()):
        if (unit_dir / "unit.yaml").is_file():
            unit = load_unit(unit_dir)
            split = by_catalogue(unit, unit_messages(unit))
            for lang in languages:
                known = i18n.unit_translations(unit.locale_dirs(), lang)   # a text may move between them
                catalogues += [(i18n.catalogue(folder, i18n.UNIT_DOMAIN, lang), messages, lang, known)
                               for folder, messages in split.items()]
    for po, messages, lang, known in catalogues:
        if not messages and not po.is_file():
            continue                    # a topic with no text of its own needs no catalogue
        if args.check:
            old = i18n.read_po(po.read_text(encoding="utf-8")) if po.is_file() else {}
            if set(messages) != set(old) - {""}:
                stale.append(str(po.relative_to(REPO)))
            continue
        missing = update(po, messages, lang, known)
        print(f"{po.relative_to(REPO)}: {len(messages)} messages, {len(missing)} untranslated")
    if stale:
        print("out of date (run make i18n):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
