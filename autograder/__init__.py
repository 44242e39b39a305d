"""Autograder for the numpy exercises of "sequence models before attention".

Nothing is imported here on purpose: the worker process imports `autograder.worker`,
`autograder.wire` and `autograder.models` only, and must never load the hidden suites,
the rubric or the reference solution.
"""
