"""Helper objects that tests pass as arguments to student functions.

Student functions sometimes take a callable: `numerical_gradient(f, x)`, a language
model `log_prob_fn(prefix)` for beam search. One that holds no solution and is called
often (a language model) is registered here: a unit defines it in its own modules (listed
as `helpers` in its unit.yaml, loaded into the worker before it is locked in), so that

- the worker can rebuild them from plain data (`wire` sends {"$obj": [name, state]},
  never a pickle), and
- the public tests, run by a student without the grader, can build the same objects.

A helper is a dataclass registered with `@register`; its fields are its state and
must be plain data (numbers, strings, tuples, arrays). Student code can read all of it.
Anything else callable (a test function that knows its own gradient, a correct stand-in,
every patch) is lent instead and stays in the grader (`autograder.isolation.callbacks`).
"""

from __future__ import annotations

import dataclasses

from autograder.isolation import wire

_REGISTRY: dict[str, type] = {}


def register(cls):
    """Class decorator: make a dataclass usable as an argument sent to the worker."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} must be a dataclass")
    _REGISTRY[cls.__name__] = cls
    return cls


def encode(obj):
    """`wire.to_plain` hook for the grader -> worker direction."""
    cls = type(obj)
    if _REGISTRY.get(cls.__name__) is cls:
        state = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        return {"$obj": [cls.__name__, wire.to_plain(state, objects=encode)]}
    return None


def build(name: str, state: dict):
    """Rebuild a registered helper inside the worker."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown helper object {name!r}")
    return _REGISTRY[name](**state)

