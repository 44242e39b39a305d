"""Appended to causality.py: birnn_forward asks the grader's correct rnn_forward (lent to it for
the call) for an answer larger than a pipe holds, writing the callback frame itself, and then
never reads the answer: it sleeps, so the grader's write of the answer would block forever."""

from payloads.worker_pipe import _request_id, _write_frame

# isort: split
# ---- appended to the student's module ----
import json
import time

import bptt


def birnn_forward(x, h0, Wx_f, Wh_f, b_f, Wx_b, Wh_b, b_b):
    token = bptt.rnn_forward._token                 # the lent function's token (a Proxy's slot)
    T, D, H = 2000, 4, 16                            # h: 32,000 floats, far more than a pipe holds
    args = [[[[0.1] * D] * T], [[0.0] * H], [[0.1] * H] * D, [[0.0] * H] * H, [0.0] * H]
    _write_frame(json.dumps({"id": _request_id(), "callback": token, "args": args, "kwargs": {}}).encode())
    while True:
        time.sleep(1)
