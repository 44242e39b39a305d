"""`python -m autograder build [UNIT] [--check] [--force]`: write everything derived from the
topic folders and the solutions (catalogues, stubs, notebooks, the README's and AUTHORING's
tables: autograder.authoring.build), or with --check only name what is stale (exit 1)."""

from __future__ import annotations

from autograder.authoring.build import build
from autograder.unit.load import load_unit


def run(args) -> int:
    units = None if args.unit is None else [load_unit(args.unit)]
    return build(units, check=args.check, force=args.force)
