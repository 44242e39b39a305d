"""Keep the translation catalogues in step with the code (`python -m autograder build` does
this first, then regenerates the stubs and notebooks that embed the translations: prefer it).
The extraction and the merge are autograder/authoring/catalogues.py.

    python scripts/i18n.py           # merge every catalogue (the engine's, each unit's)
    python scripts/i18n.py --check   # exit 1 when a catalogue is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.authoring.build import shipped_units  # noqa: E402
from autograder.authoring.catalogues import (  # noqa: E402,F401  (the names the tests and release.py use)
    by_catalogue,
    calls,
    engine_catalogues,
    engine_messages,
    render_po,
    stub_texts,
    topic_of,
    unit_catalogues,
    unit_messages,
    untranslated,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a catalogue is out of date")
    args = parser.parse_args(argv)
    expected = engine_catalogues()
    for unit in shipped_units():
        expected.update(unit_catalogues(unit))
    stale = [po for po, text in expected.items() if not po.is_file() or po.read_text(encoding="utf-8") != text]
    if args.check:
        if stale:
            print("out of date (run `python -m autograder build`):", ", ".join(str(p.relative_to(REPO)) for p in stale))
        return 1 if stale else 0
    for po in stale:
        po.parent.mkdir(parents=True, exist_ok=True)
        po.write_text(expected[po], encoding="utf-8")
    for po, text in expected.items():
        print(f"{po.relative_to(REPO)}: {len(untranslated(text))} untranslated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
