"""Appended to attention.py: the honest additive_attention, which then doubles its input H
in place (the no-mutation checks should see it)."""

from attention import additive_attention

# ---- appended to the student's module ----
_honest_attention = additive_attention

def additive_attention(s_prev, H, Wa, Ua, va, mask=None):
    out = _honest_attention(s_prev, H.copy(), Wa, Ua, va, mask)
    H *= 2.0                                  # writes into an input: the no-mutation checks should see it
    return out
