"""The rubric: per topic, its tests, their points, visibility and the hint shown on failure.

Points live only in the unit's `topics/<topic>/rubric.yaml` files, never in test code. Loading
checks them against the unit's topics so a typo fails loudly instead of costing a
student points.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.errors import GraderError
from autograder.unit.test_ids import VISIBILITIES, TestId, TopicTestId

# libyaml's loader when PyYAML has it: the pure-Python one costs ~0.2 s per grading here.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RubricError(GraderError, ValueError):
    """A rubric file is broken (the grader cannot run: exit 2)."""


@dataclass(frozen=True)
class RubricTest:
    test: str
    visibility: str
    points: float
    hint: str

    @property
    def id(self) -> TestId:
        return TestId(self.visibility, self.test)


@dataclass(frozen=True)
class RubricTopic:
    id: str
    title: str
    points: float
    tests: tuple[RubricTest, ...]
    graded_later: float = 0.0   # points of tests not in this copy (a student release's hidden part)


@dataclass(frozen=True)
class Rubric:
    unit: str                   # the unit's name
    topics: tuple[RubricTopic, ...]

    @property
    def points(self) -> float:
        return sum(t.points for t in self.topics)

    def test_selectors(self) -> set[TopicTestId]:
        """Every test of the unit, as `grade --test` and batch plans name one."""
        return {TopicTestId(t.id, test.id) for t in self.topics for test in t.tests}

    def find_test(self, selector: str) -> TopicTestId | None:
        """The test a selector ("topic::visibility::name") names, or None when the rubric has none."""
        try:
            test = TopicTestId.parse(selector)
        except ValueError:
            return None
        return test if test in self.test_selectors() else None

    def topic(self, topic_id: str) -> RubricTopic:
        for t in self.topics:
            if t.id == topic_id:
                return t
        raise KeyError(topic_id)


def _topic(data: dict, source: Path, known: list[str]) -> RubricTopic:
    tid = data.get("topic", known[0] if len(known) == 1 else None)   # default: the folder's topic
    where = f"{source.parent.name}/{source.name}"        # rubric.yaml alone would not say which topic
    if tid not in known:
        raise RubricError(f"{where}: unknown topic {tid!r} (known: {', '.join(known)})")
    tests, seen = [], set()
    for entry in data.get("tests") or []:
        t = RubricTest(str(entry["test"]), str(entry["visibility"]), float(entry["points"]),
                       str(entry.get("hint", "")).strip())
        if t.visibility not in VISIBILITIES:
            raise RubricError(f"{where}: {t.test}: visibility must be public or hidden")
        if t.points < 0 or t.id in seen:
            raise RubricError(f"{where}: {t.test}: negative points or listed twice")
        if not t.hint:
            raise RubricError(f"{where}: {t.test}: every test needs a hint")
        seen.add(t.id)
        tests.append(t)
    points = float(data["points"])
    if abs(points - sum(t.points for t in tests)) > 1e-9:
        raise RubricError(f"{where}: topic points {points:g} != sum of its tests "
                          f"{sum(t.points for t in tests):g}")
    return RubricTopic(tid, str(data.get("title", tid)), points, tuple(tests), float(data.get("graded_later", 0)))


def load_rubric(files: dict[str, Path], unit: str = "") -> Rubric:
    """Each topic's rubric file (topic id -> its path), in the unit's topic order."""
    missing = [tid for tid, source in files.items() if not Path(source).is_file()]
    if missing:
        raise RubricError(f"no rubric file for the topic(s) {missing}: "
                          + ", ".join(str(files[tid]) for tid in missing))
    return Rubric(unit, tuple(_topic(yaml.load(Path(source).read_text(encoding="utf-8"), Loader=SafeLoader) or {},
                                     Path(source), [tid]) for tid, source in files.items()))
