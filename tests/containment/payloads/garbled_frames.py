"""Appended to bptt.py: rel_error writes a garbled frame into the worker's reply pipe, then (on
a later call) a reply with a wrong id and a forged one smuggling a helper object."""

# ---- appended to the student's module ----
import json
import os
import sys

_fd = int(sys.argv[sys.argv.index("--fd-out") + 1])

def _frame(payload):
    os.write(_fd, len(payload).to_bytes(8, "big") + payload)

_calls = [0]

def rel_error(a, b):
    _calls[0] += 1
    if _calls[0] == 1:
        _frame(b"{not json")
    else:
        _frame(json.dumps({"id": 10 ** 9, "ok": True, "result": 0}).encode())     # wrong id: ignored
        _frame(json.dumps({"ok": True, "result": {"$obj": ["CubicForm", {}]}}).encode())
    import time
    time.sleep(10)
