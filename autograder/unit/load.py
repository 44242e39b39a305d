"""Load a unit folder: `load_unit("<name>")` finds a unit shipped inside
`autograder/units/`, `load_unit(Path("some/folder"))` loads any folder; with no name, the
only unit installed. The engine loads a unit folder and never names one.

A unit folder holds `unit.yaml` (its manifest, read through `model.MANIFEST_KEYS`: limits,
preload list, secrets), one folder per topic under `topics/` (`topic.yaml`, read through
`model.TOPIC_KEYS`: order, module, kept outputs; its rubric and its hidden suite), the
helper objects passed to student functions, and optional hooks (extra report artefacts).

Every unit's Python code is importable as `autograder.units.<name>` (a unit outside the
package is registered under that name when it is loaded), so hidden suites, helpers and
the worker all import it by one name.
"""

from __future__ import annotations

import difflib
from dataclasses import fields, replace
from pathlib import Path

import yaml

from autograder.unit.model import (
    FUNCTION_KEYS,
    MANIFEST,
    MANIFEST_KEYS,
    TOPIC_KEYS,
    TOPIC_MANIFEST,
    TOPIC_RUBRIC,
    TOPICS,
    Limits,
    Topic,
    Unit,
    UnitError,
)
from autograder.unit.oral_exam import load as load_oral_exam
from autograder.unit.rubric import Rubric, SafeLoader, load_rubric

UNITS = Path(__file__).resolve().parents[1] / "units"


def _refuse_unknown(keys, allowed, where: str) -> None:
    """A UnitError naming the first key not in `allowed` and the nearest valid one."""
    for key in keys:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), list(allowed), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(allowed)}"
            raise UnitError(f"{where}: unknown key {key!r}{hint}")


def find_unit(name_or_path: str | Path) -> Path:
    """The folder of a unit given by name (a unit inside autograder/units/) or by path."""
    candidate = Path(name_or_path)
    if (candidate / MANIFEST).is_file():
        return candidate.resolve()
    if isinstance(name_or_path, str) and "/" not in name_or_path and (UNITS / name_or_path / MANIFEST).is_file():
        return UNITS / name_or_path
    known = sorted(p.name for p in UNITS.iterdir() if (p / MANIFEST).is_file())
    raise UnitError(f"no unit {str(name_or_path)!r}: give a folder holding {MANIFEST} "
                    f"or one of {known}")


def default_unit() -> str:
    """The unit used when none is named: the only one shipped, else an error."""
    shipped = sorted(p.name for p in UNITS.iterdir() if (p / MANIFEST).is_file())
    if len(shipped) != 1:
        raise UnitError(f"several units are installed ({shipped}): name one with --unit")
    return shipped[0]


def _strings(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UnitError(f"{what} must be a list of names")


def _yaml_mapping(file: Path, where: str) -> dict:
    try:
        data = yaml.load(file.read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    except yaml.YAMLError as exc:
        raise UnitError(f"{file}: {exc}") from None
    if not isinstance(data, dict):
        raise UnitError(f"{where}: must be a mapping of keys")
    return data


def load_topics(folder: Path, where: str) -> list[Topic]:
    """Every `<folder>/<id>/topic.yaml`, sorted by `order` (then id): the unit's topics in report order."""
    entries = []
    for manifest in sorted(folder.glob(f"*/{TOPIC_MANIFEST}")):
        tid, here = manifest.parent.name, f"{where}/{manifest.parent.name}/{TOPIC_MANIFEST}"
        if not tid.isidentifier():
            raise UnitError(f"{here}: the folder's name {tid!r} is the topic's id: it must be a Python identifier")
        data = _yaml_mapping(manifest, here)
        _refuse_unknown(data, TOPIC_KEYS, here)
        for function, spec in (data.get("functions") or {}).items():
            if isinstance(spec, dict):
                _refuse_unknown(spec, FUNCTION_KEYS, f"{here}: {function}")
        try:
            functions = {str(f): tuple(int(i) for i in (spec or {}).get("keep", ()))
                         for f, spec in (data.get("functions") or {}).items()}
            order = float(data.get("order", 0))
        except (TypeError, ValueError, AttributeError) as exc:
            raise UnitError(f"{here}: malformed ({exc!r})") from None
        entries.append((order, tid, Topic(tid, str(data.get("module", tid)), functions, manifest.parent,
                                          str(data.get("summary", "")), str(data.get("title", "")))))
    if not entries:
        raise UnitError(f"{where}: no topics (each is a folder holding {TOPIC_MANIFEST})")
    return [topic for _order, _tid, topic in sorted(entries, key=lambda e: e[:2])]


def _titled(rubric: Rubric, topics: list[Topic]) -> Rubric:
    """The rubric with each topic's title from its topic.yaml, where that holds one (the title is
    written in one place: topic.yaml beside the summary, or rubric.yaml, never both)."""
    titles = {t.id: t.title for t in topics if t.title}
    for rt in rubric.topics:
        if rt.id in titles and rt.title not in (rt.id, titles[rt.id]):
            raise UnitError(f"{TOPICS}/{rt.id}: a title in both {TOPIC_MANIFEST} and {TOPIC_RUBRIC}: keep one")
    return replace(rubric, topics=tuple(replace(rt, title=titles.get(rt.id, rt.title)) for rt in rubric.topics))


def load_unit(name_or_path: str | Path | None = None) -> Unit:
    path = find_unit(name_or_path if name_or_path is not None else default_unit())
    where = f"{path.name}/{MANIFEST}"
    data = _yaml_mapping(path / MANIFEST, where)
    _refuse_unknown(data, MANIFEST_KEYS, where)
    name = data.get("name") or path.name
    if not str(name).isidentifier():
        raise UnitError(f"{where}: the name {name!r} must be a Python identifier")
    topics = load_topics(path / TOPICS, f"{path.name}/{TOPICS}")
    dirs = {key: path / str(data.get(key, default_dir))
            for key, default_dir in (("reference", "reference"), ("public_tests", "public"))}
    dirs["topics"] = path / TOPICS
    limits_data = data.get("limits") or {}
    if isinstance(limits_data, dict):
        _refuse_unknown(limits_data, [f.name for f in fields(Limits)], f"{where}: limits")
    try:
        limits = Limits(**limits_data)
    except TypeError as exc:
        raise UnitError(f"{where}: limits: {exc}") from None
    rubric = _titled(load_rubric({t.id: path / TOPICS / t.id / TOPIC_RUBRIC for t in topics}, unit=name), topics)
    exam = None
    if data.get("oral_exam"):
        try:
            exam = load_oral_exam(path / str(data["oral_exam"]),
                                  {t.id: {x.id for x in t.tests} for t in rubric.topics})
        except (OSError, ValueError, yaml.YAMLError, AttributeError, KeyError) as exc:
            raise UnitError(f"{where}: oral_exam: {exc}") from None
    return Unit(name=str(name), title=str(data.get("title", name)), path=path, topics=tuple(topics), limits=limits,
                preload=_strings(data.get("preload"), "preload"), helpers=_strings(data.get("helpers"), "helpers"),
                hidden_helpers=_strings(data.get("hidden_helpers"), "hidden_helpers"),
                stubs=str(data.get("stubs", f"assignments/{name}")),
                signals_title=str(data.get("signals_title", "Signals")),
                artefacts=data.get("artefacts"), secret=_strings(data.get("secret"), "secret"),
                rubric=rubric, dirs=dirs, oral_exam=exam)
