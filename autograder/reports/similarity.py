"""Pairs of a class's submissions whose student-written code is unusually alike.

Each submission's module files are fingerprinted (winnow.py) once, by `batch`, into
`students/<name>/fingerprints.json`; `batch` (unsharded) and `merge` compare them all and
write similarity.csv and the class report's section. What is not the student's own does not
count: the stub's k-grams (the code every student was given), and, as MOSS's `-m` does,
a fingerprint found in more than `common_limit(n)` submissions (code most of the class
writes alike: a short formula, an idiom).

A pair is flagged when its non-stub module files are byte-identical, or when they share at
least SHARE of the smaller side's fingerprints in at least REGIONS separate places, or at
least SHARED fingerprints in all (a long copied stretch inside a large submission). The
thresholds and their measurement: tests/e2e/test_similarity_sweep.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

from autograder.i18n import _
from autograder.intake.files import read_regular
from autograder.intake.submissions import MAX_MODULE_BYTES
from autograder.reports import winnow
from autograder.reports.files import atomic_write
from autograder.reports.text import csv_cell, plain

FILE = "fingerprints.json"      # in each submission's report folder
SHARE = 0.75
REGIONS = 3
SHARED = 40
GAP = 2                         # shared fingerprints at most this many lines apart are one region
MAX_SHOWN_LINES = 40            # lines of a region the report shows, each side
MASKED_FROM = 12                # reference lines this long (code part) are never shown; shorter ones are anyone's
SOLUTION_MARKERS = ("### " + "BEGIN SOLUTION", "### " + "END SOLUTION")     # split: this file is no solution


def common_limit(n: int) -> int:
    """Fingerprints in more submissions than this are the class's common code (MOSS's -m is 10)."""
    return max(10, n // 4)


class Given(NamedTuple):
    """What no student's report may count, or show, as theirs."""
    hashes: dict[str, frozenset[int]]   # module -> the k-gram hashes every student was given
    solution: frozenset[str]            # the reference's solution lines (code part, spaces collapsed)


def boilerplate(unit, package_root: Path) -> Given:
    """What every student was given: the released stub where the checkout has it
    (`<repository>/<unit.stubs>/`), and the reference with its solution blocks taken out
    (what the stub is made of, wherever the grader is installed); and the solution blocks'
    lines, which the report never shows (masked where a student's file has them)."""
    hashes: dict[str, frozenset[int]] = {}
    solution: set[str] = set()
    for module in unit.modules:
        reference = (unit.dirs["reference"] / f"{module}.py").read_text(encoding="utf-8")
        outside, inside = _split_solutions(reference)
        texts = [outside]
        stub = read_regular(Path(package_root) / unit.stubs / f"{module}.py")
        if stub is not None:
            texts.append(stub.decode("utf-8", errors="replace"))
        hashes[module] = frozenset(p.hash for text in texts for p in winnow.kgrams(text))
        solution |= {code for line in inside if len(code := _code(line)) >= MASKED_FROM}
    return Given(hashes, frozenset(solution))


def _code(line: str) -> str:
    return " ".join(line.split("#")[0].split())


def _split_solutions(text: str) -> tuple[str, list[str]]:
    """(the reference without its solution blocks, the lines inside them); the blocks lie
    between the two SOLUTION_MARKERS lines."""
    kept, solution, inside = [], [], False
    for line in text.splitlines(keepends=True):
        marker = line.strip()
        if marker == SOLUTION_MARKERS[0]:
            inside = True
        elif marker == SOLUTION_MARKERS[1]:
            inside = False
        elif inside:
            solution.append(line)
        else:
            kept.append(line)
    return "".join(kept), solution


def masked(text: str, solution: frozenset[str]) -> str:
    """`text` as the report may show it: printable, and each line that is a line of the
    reference solution replaced by a note saying so (the reports never hold the reference's
    code; a copy of it is worth knowing about, and is said to be one)."""
    lines = []
    for line in plain(text).split("\n"):
        if _code(line) in solution:
            line = line[: len(line) - len(line.lstrip())] + "# " + _("[a line of the reference solution]")
        lines.append(line)
    return "\n".join(lines)


def fingerprint(files: dict[str, str], given: Given) -> dict:
    """What fingerprints.json holds: per module file with code of the student's own (a
    fingerprint not in what was given), its fingerprints and its text as the report may show
    it (`masked`); a digest of those files together (byte-identical submissions)."""
    modules, own = {}, {}
    for module, text in sorted(files.items()):
        prints = winnow.fingerprints(text, given.hashes.get(module, frozenset()))
        if prints:
            modules[module] = {"prints": [list(p) for p in prints], "text": masked(text, given.solution)}
            own[module] = text
    digest = hashlib.sha256(json.dumps(own, sort_keys=True).encode()).hexdigest() if own else ""
    return {"sha256": digest, "modules": modules}


def write_fingerprints(folder: Path, submission: Path, modules, given: Given) -> None:
    """Fingerprint the module files of the graded folder `submission` (no-follow reads) into `folder`."""
    files = {}
    for module in modules:
        data = read_regular(Path(submission) / f"{module}.py", MAX_MODULE_BYTES)
        if data is not None:
            files[module] = data.decode("utf-8", errors="replace")
    atomic_write(Path(folder) / FILE, json.dumps(fingerprint(files, given)))


def read_fingerprints(students: Path, names: list[str]) -> dict[str, dict]:
    found = {}
    for name in names:
        try:
            found[name] = json.loads((Path(students) / name / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return found


@dataclass
class Region:
    module_a: str
    lines_a: tuple[int, int]
    module_b: str
    lines_b: tuple[int, int]


@dataclass
class Pair:
    a: str
    b: str
    score: float                # shared / the smaller side's distinctive fingerprints
    shared: int
    identical: bool
    regions: list[Region] = field(default_factory=list)


def _regions(pa: dict, pb: dict, shared: set[int]) -> list[Region]:
    """The places the pair shares, side by side: runs of a's shared fingerprints (in a's
    order) that are also together in b, split where either side jumps (another module,
    more than GAP lines, or b going back: a reordered function is a region of its own)."""
    where_b: dict[int, tuple[str, int, int]] = {}
    for module, m in pb.items():
        for h, first, last in m["prints"]:
            if h in shared:
                where_b.setdefault(h, (module, first, last))
    regions: list[Region] = []
    for module, m in pa.items():
        for h, first, last in sorted((p for p in m["prints"] if p[0] in where_b), key=lambda p: (p[1], p[2])):
            mod_b, first_b, last_b = where_b[h]
            r = regions[-1] if regions else None
            if (r is not None and r.module_a == module and r.module_b == mod_b and first <= r.lines_a[1] + GAP + 1
                    and r.lines_b[0] - GAP - 1 <= first_b <= r.lines_b[1] + GAP + 1):
                r.lines_a = (r.lines_a[0], max(r.lines_a[1], last))
                r.lines_b = (min(r.lines_b[0], first_b), max(r.lines_b[1], last_b))
            else:
                regions.append(Region(module, (first, last), mod_b, (first_b, last_b)))
    return regions


def compare(prints: dict[str, dict]) -> list[Pair]:
    """The flagged pairs of a class ({submission: fingerprints.json}), most alike first."""
    names = sorted(prints)
    limit = common_limit(len(names))
    holders: dict[int, set[str]] = defaultdict(set)
    distinct: dict[str, set[int]] = {}
    for name in names:
        hashes = {h for m in prints[name].get("modules", {}).values() for h, _f, _l in m["prints"]}
        distinct[name] = hashes
        for h in hashes:
            holders[h].add(name)
    common = {h for h, who in holders.items() if len(who) > limit}
    together: dict[tuple[str, str], int] = defaultdict(int)
    for h, who in holders.items():
        if h not in common and len(who) > 1:
            for a, b in combinations(sorted(who), 2):
                together[a, b] += 1
    by_digest: dict[str, list[str]] = defaultdict(list)
    for name in names:
        if prints[name].get("sha256"):
            by_digest[prints[name]["sha256"]].append(name)
    identical = {pair for group in by_digest.values() for pair in combinations(sorted(group), 2)}
    pairs = []
    for a, b in sorted(set(together) | identical):
        own_a, own_b = distinct[a] - common, distinct[b] - common
        shared = own_a & own_b
        score = len(shared) / min(len(own_a), len(own_b)) if own_a and own_b else (1.0 if (a, b) in identical else 0)
        regions = _regions(prints[a]["modules"], prints[b]["modules"], shared)
        if (a, b) in identical or (score >= SHARE and len(regions) >= REGIONS) or len(shared) >= SHARED:
            pairs.append(Pair(a, b, score, len(shared), (a, b) in identical, regions))
    return sorted(pairs, key=lambda p: (not p.identical, -p.score, -p.shared, p.a, p.b))


def similarity_csv(pairs: list[Pair]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission_a", "submission_b", "identical", "score", "shared_fingerprints", "regions", "where"])
    for p in pairs:
        where = "; ".join(f"{r.module_a}:{r.lines_a[0]}-{r.lines_a[1]} ~ {r.module_b}:{r.lines_b[0]}-{r.lines_b[1]}"
                          for r in p.regions)
        w.writerow([csv_cell(p.a), csv_cell(p.b), "yes" if p.identical else "no", f"{p.score:.2f}", p.shared,
                    len(p.regions), csv_cell(where)])
    return buf.getvalue()


def excerpt(prints: dict, module: str, lines: tuple[int, int]) -> str:
    """The lines of a region as the student wrote them (at most MAX_SHOWN_LINES)."""
    text = prints.get("modules", {}).get(module, {}).get("text", "").splitlines()
    first, last = lines
    shown = text[first - 1: min(last, first - 1 + MAX_SHOWN_LINES)]
    hidden = last - first + 1 - MAX_SHOWN_LINES
    more = [_("... ({count} more lines)").format(count=hidden)] if hidden > 0 else []
    return "\n".join(shown + more)


def write(out: Path, students: Path, names: list[str]) -> tuple[list[Pair], dict[str, dict]]:
    """Compare the fingerprints of `names` (in their `students` folders) into out/similarity.csv."""
    prints = read_fingerprints(students, names)
    pairs = compare(prints)
    atomic_write(Path(out) / "similarity.csv", similarity_csv(pairs))
    return pairs, prints
