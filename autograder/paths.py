"""Where the grader finds its trusted material (the repository checkout it is installed from)."""

from pathlib import Path

from autograder.api import ASSIGNMENT

PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parent
SOLUTIONS = REPO / "solutions" / ASSIGNMENT
ASSIGNMENTS = REPO / "assignments" / ASSIGNMENT
PUBLIC_TESTS = ASSIGNMENTS / "tests"
HIDDEN_TESTS = PACKAGE / "hidden"
RUBRIC = PACKAGE / "rubric"   # one YAML file per topic, plus _assignment.yaml
