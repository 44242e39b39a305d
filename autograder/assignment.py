"""An assignment ("unit") as data: the engine loads a unit folder and never names one.

A unit folder holds `unit.yaml` (its manifest: topics, modules, kept outputs, limits,
preload list), its rubric, its hidden suites, the helper objects passed to student
functions, and optional hooks (extra report artefacts). `load("<name>")` finds a
unit shipped inside `autograder/units/`; `load(Path("some/folder"))` loads any folder.

Every unit's Python code is importable as `autograder.units.<name>` (a unit outside the
package is registered under that name when it is loaded), so hidden suites, helpers and
the worker all import it by one name.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from autograder.grading.oral_exam import OralExam
from autograder.grading.oral_exam import load as load_oral_exam
from autograder.grading.rubric import Rubric, SafeLoader, load_rubric
from autograder.isolation.image import Limits

UNITS = Path(__file__).resolve().parent / "units"
MANIFEST = "unit.yaml"
VISIBILITIES = ("public", "hidden")


class UnitError(ValueError):
    """The unit folder or its manifest is broken (the grader cannot run: exit 2)."""


# The manifest's schema: every key `unit.yaml` may hold, with its meaning. `load` refuses
# any other key (naming the nearest valid one: a misspelt `hiden_helpers` would otherwise
# leave the oracles out silently), and docs/AUTHORING.md's table of keys is written from
# this dict by scripts/make_authoring_table.py (tests/test_manifest.py checks for drift).
MANIFEST_KEYS = {
    "name": "the unit's id, a Python identifier (default: the folder's name)",
    "title": "the unit's title, in reports",
    "reference": "folder of the reference solution, relative to the unit (default `reference`)",
    "public_tests": "folder of the public tests (default `public`)",
    "hidden_tests": "folder of the hidden suites (default `hidden`)",
    "rubric": "folder of the rubric files, one `<topic>.yaml` each (default `rubric`)",
    "stubs": "where students find the stubs in their checkout; named in messages, and where `make stubs` writes",
    "signals_title": "heading of the report section for the booleans suites record in `signals`",
    "helpers": "modules of the unit loaded into every worker (objects passed to student functions)",
    "hidden_helpers": "modules of the unit loaded into the worker only when hidden suites run",
    "artefacts": "module of the unit with an `Artefacts` class (extra report files), optional",
    "oral_exam": "file mapping the course notes' oral-exam questions to the tests that back them, optional",
    "secret": "paths in the unit folder never shipped to students (`make release` and its leak check)",
    "limits": "the worker's limits: " + ", ".join(f"`{f.name}`" for f in fields(Limits)),
    "preload": "modules (numpy and the standard library) loaded before the worker is locked in: "
               "exactly what exercises may import",
    "topics": "in report order: `id`, `module` (the student's file without `.py`), `functions` with "
              "`keep: [i, ...]` for the returned tuple elements that stay in the worker (caches)",
}
TOPIC_KEYS = ("id", "module", "functions")
FUNCTION_KEYS = ("keep",)


def _refuse_unknown(keys, allowed, where: str) -> None:
    """A UnitError naming the first key not in `allowed` and the nearest valid one."""
    for key in keys:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), list(allowed), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(allowed)}"
            raise UnitError(f"{where}: unknown key {key!r}{hint}")


@dataclass(frozen=True)
class Topic:
    id: str
    module: str                                   # the student's module, without .py
    functions: dict[str, tuple[int, ...]] = field(default_factory=dict)   # name -> kept outputs


@dataclass(frozen=True)
class Unit:
    name: str
    title: str
    path: Path
    topics: tuple[Topic, ...]
    limits: Limits
    preload: tuple[str, ...]
    helpers: tuple[str, ...]          # modules of the unit loaded into every worker
    hidden_helpers: tuple[str, ...]   # ... and into workers that serve hidden suites
    stubs: str                        # where students find the stubs (for messages)
    signals_title: str
    artefacts: str | None             # module of the unit with an `Artefacts` class
    secret: tuple[str, ...]           # paths in the unit folder never shipped to students
    rubric: Rubric
    dirs: dict[str, Path]             # reference, public_tests, hidden_tests, rubric
    oral_exam: OralExam | None = None  # questions mapped to the tests that back them

    @property
    def package(self) -> str:
        return f"autograder.units.{self.name}"

    def topic(self, topic_id: str) -> Topic:
        for t in self.topics:
            if t.id == topic_id:
                return t
        raise KeyError(topic_id)

    @property
    def modules(self) -> dict[str, Topic]:
        return {t.module: t for t in self.topics}

    def kept_outputs(self, module: str, function: str) -> tuple[int, ...]:
        topic = self.modules.get(module)
        return topic.functions.get(function, ()) if topic else ()

    def test_file(self, topic_id: str, visibility: str) -> Path:
        folder = self.dirs["public_tests" if visibility == "public" else "hidden_tests"]
        return folder / f"test_{topic_id}.py"

    def stub_path(self, module: str) -> str:
        return f"{self.stubs}/{module}.py"

    def import_module(self, relative: str):
        """A module of the unit's own code, e.g. "lab.fault_lab"."""
        register_package(self)
        return importlib.import_module(f"{self.package}.{relative}")

    def worker_modules(self, hidden: bool) -> list[str]:
        names = list(self.helpers) + (list(self.hidden_helpers) if hidden else [])
        return [f"{self.package}.{n}" for n in names]


def register_package(unit: Unit) -> str:
    """Make the unit's folder importable as `autograder.units.<name>`."""
    from autograder import units

    try:
        return units.register(unit.path, unit.name)
    except ImportError as exc:
        raise UnitError(str(exc)) from None


def find(name_or_path: str | Path) -> Path:
    """The folder of a unit given by name (a unit inside autograder/units/) or by path."""
    candidate = Path(name_or_path)
    if (candidate / MANIFEST).is_file():
        return candidate.resolve()
    if isinstance(name_or_path, str) and "/" not in name_or_path and (UNITS / name_or_path / MANIFEST).is_file():
        return UNITS / name_or_path
    known = sorted(p.name for p in UNITS.iterdir() if (p / MANIFEST).is_file())
    raise UnitError(f"no assignment {str(name_or_path)!r}: give a folder holding {MANIFEST} "
                    f"or one of {known}")


def default() -> str:
    """The unit used when none is named: the only one shipped, else an error."""
    shipped = sorted(p.name for p in UNITS.iterdir() if (p / MANIFEST).is_file())
    if len(shipped) != 1:
        raise UnitError(f"several assignments are installed ({shipped}): name one with --assignment")
    return shipped[0]


def _strings(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UnitError(f"{what} must be a list of names")


def load(name_or_path: str | Path | None = None) -> Unit:
    path = find(name_or_path if name_or_path is not None else default())
    try:
        data = yaml.load((path / MANIFEST).read_text(encoding="utf-8"), Loader=SafeLoader) or {}
    except yaml.YAMLError as exc:
        raise UnitError(f"{path / MANIFEST}: {exc}") from None
    where = f"{path.name}/{MANIFEST}"
    if not isinstance(data, dict):
        raise UnitError(f"{where}: the manifest must be a mapping of keys")
    _refuse_unknown(data, MANIFEST_KEYS, where)
    name = data.get("name") or path.name
    if not str(name).isidentifier():
        raise UnitError(f"{where}: the name {name!r} must be a Python identifier")
    topics = []
    for entry in data.get("topics") or []:
        if isinstance(entry, dict):
            _refuse_unknown(entry, TOPIC_KEYS, f"{where}: topic {entry.get('id', '?')!r}")
            for function, spec in (entry.get("functions") or {}).items():
                if isinstance(spec, dict):
                    _refuse_unknown(spec, FUNCTION_KEYS, f"{where}: {entry.get('id', '?')}.{function}")
        try:
            functions = {str(f): tuple(int(i) for i in (spec or {}).get("keep", ()))
                         for f, spec in (entry.get("functions") or {}).items()}
            topics.append(Topic(str(entry["id"]), str(entry.get("module", entry["id"])), functions))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UnitError(f"{where}: a topic entry is malformed ({exc!r}): {entry!r}") from None
    if not topics:
        raise UnitError(f"{where}: no topics")
    dirs = {key: path / str(data.get(key, default_dir))
            for key, default_dir in (("reference", "reference"), ("public_tests", "public"),
                                     ("hidden_tests", "hidden"), ("rubric", "rubric"))}
    limits_data = data.get("limits") or {}
    if isinstance(limits_data, dict):
        _refuse_unknown(limits_data, [f.name for f in fields(Limits)], f"{where}: limits")
    try:
        limits = Limits(**limits_data)
    except TypeError as exc:
        raise UnitError(f"{where}: limits: {exc}") from None
    rubric = load_rubric(dirs["rubric"], [t.id for t in topics], unit=name)
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
