"""Appended to bptt.py (not hostile): functions that call what the grader lends them."""

# ---- appended to the student's module ----
def probe_in_place(g, x, h):
    """g (lent by the grader) changes x in place and calls f, which reads x from its closure
    (as a numerical gradient's loss does) and calls h, also lent."""
    seen = []

    def f(_ignored):
        seen.append(float(x[0]))
        return float(h(x.sum()))

    return g(f, x), seen, x.tolist()


def call_lent(g, value):
    return g(value)
