"""`make nbgrader` of old: regenerate one unit's nbgrader course only (`python -m autograder
build` writes it with everything else derived: prefer it). The generator is
autograder/authoring/notebooks.py.

    python scripts/make_nbgrader.py [--unit NAME] [--out course]   # write the course
    python scripts/make_nbgrader.py --check                               # exit 1 on drift
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.authoring.notebooks import CONFIG, expected_course, grade_id, notebook  # noqa: E402,F401


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", "--assignment", dest="unit", default=None)
    parser.add_argument("--out", type=Path, default=REPO / "course")
    parser.add_argument("--check", action="store_true", help="exit 1 when the course on disk differs")
    args = parser.parse_args(argv)
    files = expected_course(args.unit)
    if args.check:
        stale = [rel for rel, text in files.items()
                 if not (args.out / rel).is_file() or (args.out / rel).read_text(encoding="utf-8") != text]
        for rel in stale:
            print(f"stale: {rel} (run `python -m autograder build`)")
        return 1 if stale else 0
    for rel, text in files.items():
        (args.out / rel).parent.mkdir(parents=True, exist_ok=True)
        (args.out / rel).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
