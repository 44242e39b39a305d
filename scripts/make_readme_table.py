"""Write the README's table of topics (module, what, points) from the unit's topic folders
(`python -m autograder build` writes it with everything else derived: prefer it). `--check`
only reports drift (tests/content/test_rubric.py)."""

from __future__ import annotations

import argparse
import sys

from generated_block import update

from autograder.authoring.build import README, README_BLOCK, readme_table
from autograder.unit.load import load_unit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is out of date")
    parser.add_argument("--unit", "--assignment", dest="unit", default=None, help="the unit (default: the only one shipped)")
    args = parser.parse_args()
    return update(README, *README_BLOCK, readme_table(load_unit(args.unit)), "python -m autograder build",
                  args.check)


if __name__ == "__main__":
    sys.exit(main())
