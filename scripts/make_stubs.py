"""`make stubs` of old: regenerate one unit's stubs only (`python -m autograder build` writes
them with everything else derived, in the right order: prefer it). The generator is
autograder/authoring/stubs.py.

    python scripts/make_stubs.py [--unit NAME|PATH]   # write the unit's stub folder
    python scripts/make_stubs.py --check                     # exit 1 when the committed stubs differ

It never overwrites a stub edited since it was generated, unless --force (a .bak copy is kept).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.authoring.stubs import (  # noqa: E402,F401  (the names the tests use)
    BEGIN,
    END,
    HEADER,
    RECORD,
    MarkerError,
    _digest,
    bilingual,
    chinese,
    edited_stubs,
    expected_stubs,
    folders,
    stub_source,
    summary,
    todo_comments,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    parser.add_argument("--force", action="store_true",
                        help="overwrite stubs that were edited since they were generated (keeps a .bak copy)")
    parser.add_argument("--unit", "--assignment", dest="unit", default=None, metavar="NAME|PATH", help="the unit (default: the only one)")
    args = parser.parse_args(argv)
    stubs = expected_stubs(args.unit)
    _, folder = folders(args.unit)
    where = folder.relative_to(REPO) if folder.is_relative_to(REPO) else folder
    record = json.dumps({n: _digest(text) for n, text in stubs.items()}, indent=1, sort_keys=True) + "\n"
    if args.check:
        drift = [n for n, text in stubs.items() if not (folder / n).exists() or (folder / n).read_text() != text]
        extra = sorted(p.name for p in folder.glob("*.py") if p.name not in stubs)
        for n in drift:
            print(f"stale stub: {where}/{n} (run `make stubs`)")
        for n in extra:
            print(f"stub without a solution: {where}/{n}")
        stale_record = not (folder / RECORD).exists() or (folder / RECORD).read_text() != record
        if stale_record:
            print(f"stale record: {where}/{RECORD} (run `make stubs`)")
        return 1 if drift or extra or stale_record else 0
    edited = edited_stubs(folder, stubs)
    if edited and not args.force:
        print(f"make stubs: not overwriting {len(edited)} stub(s) that were edited since they were generated "
              f"(someone's work?): {', '.join(f'{where}/{n}' for n in edited)}. Nothing was written. "
              "Run `python scripts/make_stubs.py --force` to overwrite them; a .bak copy of each is kept.",
              file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in edited:
        backup = folder / f"{n}.bak-{stamp}"
        shutil.copyfile(folder / n, backup)
        print(f"kept your version of {where}/{n} as {backup.name}")
    for n, text in stubs.items():
        (folder / n).write_text(text)
    (folder / RECORD).write_text(record)
    print(f"wrote {len(stubs)} stubs to {where}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
