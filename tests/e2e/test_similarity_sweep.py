"""The similarity report measured (issue 39): a class of 40 built from the kill matrix (31
mutants, round-robin over the topics, and the 9 valid alternatives) plus planted copies,
and the time for 200 submissions.

Every mutant is the reference with one edit: what distinguishes two mutants is that edit,
and everything else is code the whole class shares (MOSS's -m drops it), so no two
distinct mutants may be flagged. The planted copies are of code that is a student's own,
the alternatives' modules, copied with every bound name renamed and the functions in
reverse order: into a new student (the alternative's other modules with it), and into a
mutant (a student who wrote the rest and copied one module); and two byte-identical
copies of mutants. Each must be flagged against its source and nothing else may be.

Measured (2 shared cores): 29 planted pairs, 29 flagged, precision 1.00 and recall 1.00.
The weakest copy found: the 24-line attention alternative, 41 shared fingerprints (100 %,
one region: flagged by the 40-fingerprint rule, with little to spare). The most alike pairs
that are not copies: two alternatives sharing 25 fingerprints (16 % of the smaller), and
a mutant against a student holding the same edit, 100 % of 16 fingerprints in one region
(too little, in too few places, to flag). 200 submissions: ~10 s of CPU to fingerprint
(~50 ms each, once per submission in batch) and ~0.4 s to compare the 19,900 pairs.
"""

from __future__ import annotations

import time
from itertools import combinations

import pytest
from helpers import SOLUTIONS, UNIT, kill_matrix_files, renamed, reordered

from autograder.intake.submissions import PACKAGE_ROOT
from autograder.reports import similarity, winnow

pytestmark = pytest.mark.sweep
GIVEN = similarity.boilerplate(UNIT, PACKAGE_ROOT)
REFERENCE = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}


def planted_class(mutants: int, twins: int) -> tuple[dict[str, dict[str, str]], set[tuple[str, str]]]:
    students = kill_matrix_files(limit_mutants=mutants)
    names = sorted(students)
    alternatives = [n for n in names if n.startswith("alternative-")]
    hosts = [n for n in names if n.startswith("mutant-")]
    groups = []             # students holding the same code: every pair of a group is a copy
    for k, name in enumerate(alternatives):
        module = next(m for m in students[name] if students[name][m] != REFERENCE[m])
        disguised = reordered(renamed(students[name][module], f"c{k}"))
        compile(disguised, module, "exec")                           # the copy still runs
        students[f"copy-{name}"] = {**students[name], module: disguised}
        # a host not taken by an earlier alternative: a second copier of one host would replace
        # the first (and its planted pairs would name a student who no longer holds the copy)
        host = next(h for h in hosts[k:] + hosts[:k]
                    if students[h][module] == REFERENCE[module] and f"copier-{h}" not in students)
        students[f"copier-{host}"] = {**students[host], module: reordered(renamed(students[name][module], f"m{k}"))}
        groups.append({name, f"copy-{name}", f"copier-{host}"})
    for host in hosts[:twins]:
        students[f"twin-{host}"] = dict(students[host])
        groups.append({host, f"twin-{host}"})
    assert sum(n.startswith("copier-") for n in students) == len(alternatives), "one copier per alternative"
    return students, {pair for g in groups for pair in combinations(sorted(g), 2)}


def test_a_kill_matrix_class_of_40_flags_every_planted_copy_and_nothing_else():
    students, planted = planted_class(mutants=31, twins=2)
    assert sum(not n.startswith(("copy-", "copier-", "twin-")) for n in students) == 40
    prints = {n: similarity.fingerprint(f, GIVEN) for n, f in students.items()}
    pairs = similarity.compare(prints)
    flagged = {(p.a, p.b) for p in pairs}
    found = flagged & planted
    precision, recall = len(found) / max(len(flagged), 1), len(found) / len(planted)
    weakest = min((p for p in pairs if (p.a, p.b) in planted and not p.identical), key=lambda p: p.shared)
    print(f"\nsimilarity, kill-matrix class of 40 + {len(students) - 40} planted: {len(planted)} planted pairs, "
          f"{len(flagged)} flagged, precision {precision:.2f}, recall {recall:.2f}; weakest planted pair "
          f"{weakest.a} ~ {weakest.b}: {100 * weakest.score:.0f} %, {weakest.shared} shared, "
          f"{len(weakest.regions)} regions")
    assert flagged - planted == set(), "pairs flagged that are not copies (distinct mutants or alternatives)"
    assert planted - flagged == set(), "planted copies not found"


def test_200_submissions_are_compared_and_timed():
    """The time is printed, never asserted (the project times nothing in a test: make bench
    measures); what is asserted is that a class of 200 flags only copies."""
    students, planted = planted_class(mutants=None, twins=200)      # every mutant, then twins up to 200
    students = dict(list(students.items())[:200])
    assert len(students) == 200
    start = time.process_time()
    prints = {}
    for name, files in students.items():
        winnow.kgrams.cache_clear()       # as in a real class, where no two students' files are the same text
        prints[name] = similarity.fingerprint(files, GIVEN)
    fingerprinted = time.process_time()
    pairs = similarity.compare(prints)
    compared = time.process_time()
    print(f"\nsimilarity of 200 submissions: {fingerprinted - start:.1f} s of CPU to fingerprint "
          f"({1000 * (fingerprinted - start) / 200:.0f} ms each, done once per submission by batch), "
          f"{compared - fingerprinted:.2f} s to compare all {200 * 199 // 2} pairs; {len(pairs)} flagged")
    assert {(p.a, p.b) for p in pairs} <= planted
