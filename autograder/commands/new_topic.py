"""`python -m autograder new-topic UNIT NAME [--module M]`: add a topic to a unit, with every
file a topic needs (autograder.authoring.scaffold), then build the unit:

    UNIT/topics/NAME/topic.yaml, rubric.yaml, test_hidden.py, mutants.yaml, alternatives/,
                     locale/, __init__.py
    the unit's reference folder: M.py (default NAME.py), the solution with nbgrader's markers
    the unit's public folder: test_NAME.py, the public test

The topic grades and passes `check` as written (it doubles a number); replace its function,
its public test and its suite with your own, then run `python -m autograder build`."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from autograder.authoring import scaffold
from autograder.authoring.build import build
from autograder.unit.load import load_unit
from autograder.unit.model import TOPICS


def add_topic(unit_name: str | Path, topic: str, module: str | None = None) -> list[Path]:
    """Write the topic's files and build the unit; the files written, for the author to edit."""
    unit = load_unit(unit_name)
    module = module or topic
    if not topic.isidentifier() or not module.isidentifier():
        raise ValueError(f"the topic's id {topic!r} and its module {module!r} must be Python identifiers")
    if topic in {t.id for t in unit.topics} or module in unit.modules:
        raise FileExistsError(f"{unit.name} already has a topic {topic!r} or a module {module!r}")
    order = int(max((_order(unit, t.id) for t in unit.topics), default=0)) + 1
    files = scaffold.topic_files(unit.name, topic, module, order)
    # The unit's folders, wherever its manifest puts them: topics/, the reference, the public tests.
    places = {f"{unit.name}/{TOPICS}/{topic}": unit.dirs["topics"] / topic,
              f"solutions/{unit.name}": unit.dirs["reference"], f"assignments/{unit.name}/tests": unit.dirs["public_tests"]}
    written = {}
    for rel, text in files.items():
        prefix = next(p for p in places if rel.startswith(p + "/"))
        written[places[prefix] / rel[len(prefix) + 1:]] = text
    taken = [p for p in written if p.exists()]
    if taken:
        raise FileExistsError(f"{taken[0]} already exists")
    scaffold.write(unit.path, {str(p): t for p, t in written.items()})     # absolute paths: `unit.path` is unused
    build([load_unit(unit.path)], say=lambda _line: None)
    return sorted(written)


def _order(unit, topic_id: str) -> float:
    data = yaml.safe_load((unit.dirs["topics"] / topic_id / "topic.yaml").read_text(encoding="utf-8")) or {}
    return float(data.get("order", 0))


def run(args) -> int:
    try:
        written = add_topic(args.unit, args.name, args.module)
    except (ValueError, FileExistsError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print(f"wrote the topic {args.name} ({len(written)} files) and built its unit:")
    print("\n".join(f"  {p}" for p in written))
    print("replace its function (the solution), its public test and its suite (test_hidden.py, rubric.yaml,\n"
          "mutants.yaml), its title and summary (topic.yaml), then run `python -m autograder build` and `check`.")
    return 0
