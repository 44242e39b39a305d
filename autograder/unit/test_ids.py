"""A rubric test's id, typed: its visibility and its name (`TestId`), and the same prefixed
by its topic (`TopicTestId`). Their text forms, "hidden::test_name" and
"topic::public::test_name", are what the reports show and what `grade --test`, batch plans
and the oral-exam map write; they are read here and nowhere else, so no caller parses an
id by its prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

VISIBILITIES = ("public", "hidden")
SEPARATOR = "::"


@dataclass(frozen=True)
class TestId:
    """One test of a topic's rubric: "public::name" or "hidden::name"."""

    __test__ = False           # a name pytest would otherwise try to collect

    visibility: str            # one of VISIBILITIES
    name: str

    def __str__(self) -> str:
        return f"{self.visibility}{SEPARATOR}{self.name}"

    @property
    def hidden(self) -> bool:
        return self.visibility == "hidden"

    @classmethod
    def parse(cls, text: str) -> TestId:
        visibility, separator, name = text.partition(SEPARATOR)
        if not separator or visibility not in VISIBILITIES or not name:
            raise ValueError(f"{text!r} is not a test id (public::name or hidden::name)")
        return cls(visibility, name)


# At --hidden-detail total, the one entry standing for all of a topic's hidden tests.
HIDDEN_TOTAL = TestId("hidden", "*")


@dataclass(frozen=True)
class TopicTestId:
    """One test of the unit: "topic::public::name" or "topic::hidden::name"."""

    __test__ = False

    topic: str
    test: TestId

    def __str__(self) -> str:
        return f"{self.topic}{SEPARATOR}{self.test}"

    @classmethod
    def parse(cls, text: str) -> TopicTestId:
        topic, separator, test = text.partition(SEPARATOR)
        if not separator or not topic:
            raise ValueError(f"{text!r} is not a test id (topic::public::name or topic::hidden::name)")
        return cls(topic, TestId.parse(test))


def names_a_test(text: str) -> bool:
    """Whether a selector ("topic" or "topic::visibility::name", as batch plans mix them)
    names one test rather than a whole topic."""
    return SEPARATOR in text


def topic_of(ref: str | TopicTestId) -> str:
    """The topic of a reference to a whole topic (its id) or to one of its tests."""
    return ref.topic if isinstance(ref, TopicTestId) else ref
