"""The payload files themselves (no grading): each one assembles into code that compiles, and
each is used by a case, so a broken or orphaned payload shows here in a second rather than as
a puzzling score in a minute-long grading."""

from __future__ import annotations

import re

import pytest
from harness import APPENDED, PAYLOADS, payload

NAMES = sorted(p.stem for p in PAYLOADS.glob("*.py"))
# Shared pieces are not appended on their own: the payloads that import them include them.
PIECES = {"worker_pipe", "find_stand_in"}


@pytest.mark.parametrize("name", NAMES)
def test_a_payload_assembles_into_code_that_compiles(name):
    code = payload(name, example="value")
    compile(code, f"{name}.py", "exec")
    assert code.count("_PARAMS = {'example': 'value'}") == 1
    assert APPENDED not in code, "the marker line (and what is above it) is not appended"


def test_every_payload_is_used_by_a_case_and_every_used_one_exists():
    tests = "\n".join(p.read_text() for p in PAYLOADS.parent.glob("test_*.py") if p.name != "test_payloads.py")
    named = set(re.findall(r'payload\(\s*"(\w+)"', tests))        # payload("name", ...)
    used = set(re.findall(r'"(\w+)"', tests)) & set(NAMES)         # and names kept in a table first
    assert named <= set(NAMES), f"payloads named by a case but missing: {sorted(named - set(NAMES))}"
    assert set(NAMES) - PIECES <= used, f"payloads no case uses: {sorted(set(NAMES) - PIECES - used)}"
