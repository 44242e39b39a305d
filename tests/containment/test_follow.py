"""isolation/follow.py: what a student function's own helper is handed, call after call, seen in
the worker. Each decoder below passes its step's cache on in a way whose answer is known by
construction (the same arrays, a new tuple around them, copies, a rebuild, no step at all)."""

from __future__ import annotations

import numpy as np
from helpers import SOLUTIONS, UNIT, make_submission

DECODERS = '''

def decode_retupled(x, Wq, Wk, Wv):
    cache = None
    for t in range(x.shape[1]):
        _y, cache = attention_decode_step(x[:, t], cache, Wq, Wk, Wv)
        cache = tuple(part[:, :] for part in cache)          # a new tuple of views: still passed on
    return cache


def decode_copied(x, Wq, Wk, Wv):
    cache = None
    for t in range(x.shape[1]):
        _y, cache = attention_decode_step(x[:, t], cache, Wq, Wk, Wv)
        cache = (cache[0].copy(), cache[1].copy())
    return cache


def decode_rebuilt(x, Wq, Wk, Wv):
    cache = None
    for t in range(x.shape[1]):
        cache = None if t == 0 else (x[:, :t] @ Wk, x[:, :t] @ Wv)
        _y, cache = attention_decode_step(x[:, t], cache, Wq, Wk, Wv)
    return cache


def decode_unwatched(x, Wq, Wk, Wv):
    import sys
    sys.setprofile(None)
    return attention_decode(x, Wq, Wk, Wv)
'''


def test_follow_tells_a_cache_passed_on_from_a_copy_or_a_rebuild(tmp_path):
    from autograder.isolation.sandbox import Sandbox, StudentModule

    source = (SOLUTIONS / "inference_cost.py").read_text() + DECODERS
    sub = make_submission(tmp_path / "sub", files={"inference_cost.py": source})
    rng = np.random.default_rng(0)
    x, Wq, Wk, Wv = rng.normal(size=(2, 4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    want = {"attention_decode": [None, True, True, True], "decode_retupled": [None, True, True, True],
            "decode_copied": [None, False, False, False], "decode_rebuilt": [None, False, False, False],
            "decode_unwatched": []}
    with Sandbox(UNIT, sub, hidden=False) as sandbox:
        sandbox.start()
        module = StudentModule(sandbox, "inference_cost")
        for name, handed in want.items():
            getattr(module, name).followed("attention_decode_step", 1, 1)(x, Wq, Wk, Wv)
            assert module.last_notes["followed"] == handed, name
        module.attention_decode(x, Wq, Wk, Wv)               # not watched unless asked
        assert module.last_notes["followed"] == []
