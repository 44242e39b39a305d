"""Write docs/AUTHORING.md's tables of keys, of unit.yaml and of a topic's topic.yaml, from
the schemas the loader enforces (`python -m autograder build` writes them with everything else
derived: prefer it). `--check` only reports drift (tests/engine/test_manifest.py)."""

from __future__ import annotations

import argparse
import sys

from generated_block import update

from autograder.authoring.build import AUTHORING, AUTHORING_BLOCK, authoring_table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is out of date")
    args = parser.parse_args()
    return update(AUTHORING, *AUTHORING_BLOCK, authoring_table(), "python -m autograder build", args.check)


if __name__ == "__main__":
    sys.exit(main())
