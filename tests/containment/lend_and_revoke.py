"""Grader-side, for test_secrets.py: grade nothing, but lend rel_error's stand-in to the
student's keep_and_hunt (payloads/keep_and_hunt.py) for one call, then call what it kept.
Run as `python -c <this text> <submission>` by the grader of a mode (its user, python and
checkout: the current folder comes first on sys.path); prints RESULT and a JSON object."""

import json
import sys
from pathlib import Path

from autograder.isolation.sandbox import Sandbox, StudentCodeError, StudentModule
from autograder.unit.load import load_unit
from autograder.units.rnn_prehistory.oracles import RelError

unit = load_unit("rnn_prehistory")
out = {}
with Sandbox(unit, Path(sys.argv[1])) as sandbox:
    sandbox.start()
    bptt = StudentModule(sandbox, "bptt")
    out["patched"] = bptt.keep_and_hunt.patched({"bptt.rel_error": RelError()})()
    try:
        out["later"] = bptt.call_kept()
    except StudentCodeError as exc:
        out["later_error"] = exc.message
print("RESULT" + json.dumps(out))
