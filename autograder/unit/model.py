"""A unit as data: the manifest's schema (`MANIFEST_KEYS`), a topic's (`TOPIC_KEYS`), its
topics and the worker's limits. `autograder.unit.load` reads a unit folder into a `Unit`; the isolation layer reads
`Limits` from it, and the grading reads everything else."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from autograder import units
from autograder.errors import GraderError
from autograder.unit.oral_exam import OralExam
from autograder.unit.rubric import Rubric

MANIFEST = "unit.yaml"
TOPICS = "topics"          # one folder per topic: TOPICS/<topic id>/
TOPIC_MANIFEST = "topic.yaml"
TOPIC_RUBRIC = "rubric.yaml"
HIDDEN_SUITE = "test_hidden.py"


class UnitError(GraderError, ValueError):
    """The unit folder or its manifest is broken (the grader cannot run: exit 2)."""


@dataclass
class Limits:
    """A worker's limits (the unit's `limits`). A call (an import) may spend `call_cpu_s`
    (`import_cpu_s`) on a CPU and as long asleep or waiting, as the kernel counts them for the
    process running student code, so the machine's load changes neither; `wall_factor`
    times that of wall clock is a backstop for a machine too busy to run it
    (autograder/isolation/clock.py)."""

    call_cpu_s: float = 5.0
    import_cpu_s: float = 10.0
    wall_factor: float = 12.0
    # What the calls of one topic's tests (and of a whole grading) may spend between them,
    # CPU and sleep: a function just under the call limit, called hundreds of times, must not
    # hold a grading (a class) for half an hour.
    topic_s: float = 30.0
    submission_s: float = 120.0
    startup_timeout_s: float = 30.0
    memory_mb: int = 1024
    cpu_s: int = 600
    disk_mb: int = 64


# The manifest's schema: every key `unit.yaml` may hold, with its meaning. `load` refuses
# any other key (naming the nearest valid one: a misspelt `hiden_helpers` would otherwise
# leave the oracles out silently), and docs/AUTHORING.md's table of keys is written from
# this dict by scripts/make_authoring_table.py (tests/engine/test_manifest.py checks for drift).
MANIFEST_KEYS = {
    "name": "the unit's id, a Python identifier (default: the folder's name)",
    "title": "the unit's title, in reports",
    "reference": "folder of the reference solution, relative to the unit (default `reference`)",
    "public_tests": "folder of the public tests (default `public`)",
    "stubs": "where students find the stubs in their checkout; named in messages, and where `build` writes (relative to the checkout)",
    "signals_title": "heading of the report section for the booleans suites record in `signals`",
    "helpers": "modules of the unit loaded into every worker (objects passed to student functions)",
    "hidden_helpers": "modules of the unit loaded into the worker only when hidden suites run",
    "artefacts": "module of the unit with an `Artefacts` class (extra report files), optional",
    "oral_exam": "file mapping the course notes' oral-exam questions to the tests that back them, optional",
    "secret": "glob patterns of paths in the unit folder never shipped to students (`make release` and "
              "its leak check), e.g. `topics/*/test_hidden.py`",
    "limits": "the worker's limits: " + ", ".join(f"`{f.name}`" for f in fields(Limits)),
    "preload": "modules (numpy and the standard library) loaded before the worker is locked in: "
               "exactly what exercises may import",
}
# A topic's schema: the keys of `topics/<id>/topic.yaml` (the folder's name is the topic's id;
# beside it: rubric.yaml, test_hidden.py, and the repository's test_oracle.py, mutants.yaml,
# alternatives/). Refused and documented like MANIFEST_KEYS.
TOPIC_KEYS = {
    "order": "the topic's place in reports (topics are sorted by it, then by id)",
    "module": "the student's file without `.py` (default: the topic's id)",
    "title": "the topic's title, in reports and its notebook (or `title` in rubric.yaml; default: the id)",
    "summary": "what the topic asks, one line: its row of the README's table of topics "
               "(`python -m autograder build`)",
    "functions": "the functions graded, each `{}` or `{keep: [i, ...]}`: the indices of returned "
                 "tuple elements that stay in the worker (caches the grader never decodes)",
}
FUNCTION_KEYS = ("keep",)


@dataclass(frozen=True)
class Topic:
    id: str
    module: str                                   # the student's module, without .py
    functions: dict[str, tuple[int, ...]] = field(default_factory=dict)   # name -> kept outputs
    folder: Path | None = None                    # topics/<id>/ of the unit
    summary: str = ""                             # one line, for the README's table of topics
    title: str = ""                               # topic.yaml's title ("": the rubric's)


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
    secret: tuple[str, ...]           # glob patterns of paths in the unit folder never shipped to students
    rubric: Rubric
    dirs: dict[str, Path]             # reference, public_tests, topics
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
        if visibility == "public":
            return self.dirs["public_tests"] / f"test_{topic_id}.py"
        return self.dirs["topics"] / topic_id / HIDDEN_SUITE

    def is_secret(self, rel: Path | str) -> bool:
        """Whether `rel` (relative to the unit's folder) matches a `secret` pattern or lies in
        a folder that does (`topics/*/alternatives` hides the files inside it)."""
        parts = PurePosixPath(rel).parts
        return any(len(parts) >= len(pattern) and all(map(fnmatchcase, parts, pattern))
                   for pattern in (PurePosixPath(s).parts for s in self.secret))

    def secret_files(self) -> list[Path]:
        """The unit's files that `is_secret`, sorted."""
        return sorted(f for f in self.path.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                      and self.is_secret(f.relative_to(self.path)))

    def locale_dirs(self) -> list[Path]:
        """The unit's gettext folders: its own (text several topics share) and each topic's."""
        return [self.path / "locale"] + [t.folder / "locale" for t in self.topics if t.folder is not None]

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
    try:
        return units.register(unit.path, unit.name)
    except ImportError as exc:
        raise UnitError(str(exc)) from None
