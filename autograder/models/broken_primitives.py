"""Known-broken replacements of the fault-injection primitives (SPEC §4, the third way of grading)."""
