"""The rubric: per topic, its tests, their points, visibility and the hint shown on failure.

Points live only here (`autograder/rubric/*.yaml`), never in test code. `load()` checks
the files against `api.TOPICS` so a typo fails loudly instead of costing a student points.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder import api, paths
from autograder.sandbox import Limits

VISIBILITIES = ("public", "hidden")


class RubricError(ValueError):
    pass


@dataclass(frozen=True)
class RubricTest:
    test: str
    visibility: str
    points: float
    hint: str

    @property
    def id(self) -> str:
        return f"{self.visibility}::{self.test}"


@dataclass(frozen=True)
class RubricTopic:
    id: str
    title: str
    points: float
    tests: tuple[RubricTest, ...]

    @property
    def module(self) -> str:
        return api.TOPICS[self.id].module

    def test_files(self) -> dict[str, Path]:
        return {"public": paths.PUBLIC_TESTS / f"test_{self.id}.py",
                "hidden": paths.HIDDEN_TESTS / f"test_{self.id}.py"}


@dataclass(frozen=True)
class Rubric:
    assignment: str
    limits: Limits
    topics: tuple[RubricTopic, ...]

    @property
    def points(self) -> float:
        return sum(t.points for t in self.topics)

    def topic(self, topic_id: str) -> RubricTopic:
        for t in self.topics:
            if t.id == topic_id:
                return t
        raise KeyError(topic_id)


def _topic(data: dict, source: Path) -> RubricTopic:
    tid = data.get("topic")
    if tid not in api.TOPICS:
        raise RubricError(f"{source.name}: unknown topic {tid!r} (known: {', '.join(api.TOPICS)})")
    tests, seen = [], set()
    for entry in data.get("tests") or []:
        t = RubricTest(str(entry["test"]), str(entry["visibility"]), float(entry["points"]),
                       str(entry.get("hint", "")).strip())
        if t.visibility not in VISIBILITIES:
            raise RubricError(f"{source.name}: {t.test}: visibility must be public or hidden")
        if t.points < 0 or t.id in seen:
            raise RubricError(f"{source.name}: {t.test}: negative points or listed twice")
        if not t.hint:
            raise RubricError(f"{source.name}: {t.test}: every test needs a hint")
        seen.add(t.id)
        tests.append(t)
    points = float(data["points"])
    if abs(points - sum(t.points for t in tests)) > 1e-9:
        raise RubricError(f"{source.name}: topic points {points:g} != sum of its tests "
                          f"{sum(t.points for t in tests):g}")
    return RubricTopic(tid, str(data.get("title", tid)), points, tuple(tests))


def load(folder: Path = paths.RUBRIC) -> Rubric:
    head = yaml.safe_load((folder / "_assignment.yaml").read_text())
    by_id = {}
    for source in sorted(folder.glob("*.yaml")):
        if source.name.startswith("_"):
            continue
        topic = _topic(yaml.safe_load(source.read_text()), source)
        by_id[topic.id] = topic
    order = [t for t in head["topics"] if t in by_id]   # topics not yet written are absent
    unlisted = set(by_id) - set(order)
    if unlisted:
        raise RubricError(f"_assignment.yaml does not list the topic(s) {sorted(unlisted)}")
    return Rubric(head["assignment"], Limits(**head.get("limits", {})), tuple(by_id[t] for t in order))
