"""Plain-data codec between the grader and the worker process.

Everything that crosses the process boundary is JSON with a few tagged objects, so
decoding a worker's reply never runs code the student defined (no pickle):

    {"$nd": [dtype, shape, base64]}   numeric numpy array (bool, int, uint, float, complex)
    {"$ndT": [dtype, shape, base64]}  the same, sent as its transpose and decoded transposed back (a
                                      transposed array stays non-contiguous on the other side)
    {"$t": [...]}                     tuple
    {"$d": [[key, value], ...]}       dict whose keys are not all strings
    {"$c": [[key, count], ...]}       collections.Counter
    {"$f": "nan" | "inf" | "-inf"}    non-finite float (JSON has none)
    {"$h": [generation, id]}          handle to an object kept inside the worker (a cache)
    {"$obj": [name, state]}           grader-side helper object (see autograder.isolation.registry);
                                      accepted only in the grader -> worker direction
    {"$cb": token}                    a callable that runs in the grader (a stand-in, a test
                                      function): the worker gets a proxy that calls back up the
                                      pipe (see autograder.isolation.callbacks); grader -> worker
    {"$ref": id}                      an object the worker keeps while the grader runs a callback
                                      (a function the student passed to a stand-in); both ways

Numpy scalars become Python numbers. Anything else is refused with a message that
names the type, which the worker turns into an error the student can act on.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections import Counter
from dataclasses import dataclass

import numpy as np

# Bounds on a worker's reply, checked before it is parsed. The largest reply the reference
# sends is 17 KB (1,911 replies over three full gradings, measured); 4 MiB leaves room for
# any reasonable alternative while a forged reply of nested empty lists cannot cost the
# grader gigabytes or minutes.
MAX_REPLY_BYTES = 4 * 1024 * 1024
MAX_REPLY_CONTAINERS = 200_000      # lists and objects in one reply
_ARRAY_KINDS = "biufc"


class WireError(ValueError):
    """A value cannot be encoded, or a message is not valid plain data."""


@dataclass(frozen=True)
class Handle:
    """An object that stays inside the worker (e.g. a forward pass's cache)."""

    generation: int
    id: int

    def __repr__(self) -> str:
        return f"<cache kept in the worker #{self.id}>"


def _float(x: float):
    if math.isfinite(x):
        return x
    return {"$f": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def to_plain(value, *, objects=None, depth=0):
    """Return a JSON-ready structure; `objects(value)` may encode extra types."""
    kind = type(value)
    # The common exact types first (a grading encodes ~100,000 values); subclasses, numpy
    # scalars and helper objects take the general path below.
    if kind is float:
        return value if math.isfinite(value) else _float(value)
    if kind is np.ndarray and value.dtype.kind in _ARRAY_KINDS:
        return _plain_array(value)
    if kind is int or kind is str or kind is bool or value is None:
        return value
    if depth > 64:
        raise WireError("value is nested more than 64 levels deep")
    if kind is tuple:
        return {"$t": [to_plain(v, objects=objects, depth=depth + 1) for v in value]}
    if kind is list:
        return [to_plain(v, objects=objects, depth=depth + 1) for v in value]
    if kind is dict and all(type(k) is str and not k.startswith("$") for k in value):
        return {k: to_plain(v, objects=objects, depth=depth + 1) for k, v in value.items()}
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            raise WireError(f"numpy array of dtype {value.dtype} (only numeric arrays are allowed)")
        return _plain_array(value)
    if isinstance(value, Handle):
        return {"$h": [value.generation, value.id]}
    if isinstance(value, Counter):
        return {"$c": [[to_plain(k, objects=objects, depth=depth + 1), to_plain(v, objects=objects, depth=depth + 1)]
                       for k, v in value.items()]}
    if isinstance(value, dict):
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: to_plain(v, objects=objects, depth=depth + 1) for k, v in value.items()}
        return {"$d": [[to_plain(k, objects=objects, depth=depth + 1), to_plain(v, objects=objects, depth=depth + 1)]
                       for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"$t": [to_plain(v, objects=objects, depth=depth + 1) for v in value]}
    if isinstance(value, list):
        return [to_plain(v, objects=objects, depth=depth + 1) for v in value]
    if objects is not None:
        encoded = objects(value)
        if encoded is not None:
            return encoded
    raise WireError(f"a value of type {type(value).__module__}.{type(value).__qualname__}")


def _plain_array(value: np.ndarray) -> dict:
    if value.ndim >= 2 and not value.flags.c_contiguous and value.T.flags.c_contiguous:
        # A transposed array stays one: student code may depend on the layout (x.reshape(-1)
        # is a view of a C-contiguous array, a copy of a transposed one), so tests can send both.
        arr = value.T
        return {"$ndT": [arr.dtype.str, list(arr.shape), base64.b64encode(arr.tobytes()).decode("ascii")]}
    arr = np.ascontiguousarray(value)
    return {"$nd": [arr.dtype.str, list(arr.shape), base64.b64encode(arr.tobytes()).decode("ascii")]}


def _key(k):
    # JSON lists are unhashable; tuples of plain values are the usual dict keys here.
    return tuple(_key(x) for x in k) if isinstance(k, list) else k


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _decoder(objects, tags=None):
    """The inverse of `to_plain`, as json.loads' object_hook: each tagged object is decoded
    as the parser builds it, innermost first, so lists and plain values pass no Python code.
    `objects(name, state)` decodes {"$obj": ...}; None refuses it. `tags` maps the
    callback tags ("$cb", "$ref") to their decoders; a tag not in it is refused."""
    tags = tags or {}

    def decode(data: dict):
        if len(data) != 1:
            return data
        (tag, body), = data.items()
        if tag in ("$nd", "$ndT"):
            dtype, shape, b64 = body
            dt = np.dtype(dtype)
            if dt.kind not in _ARRAY_KINDS:
                raise WireError(f"array dtype {dtype} is not numeric")
            raw = base64.b64decode(b64)
            if math.prod(shape) * dt.itemsize != len(raw):
                raise WireError("array byte length does not match its shape")
            arr = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
            return arr.T if tag == "$ndT" else arr
        if tag == "$t":
            return tuple(body)
        if tag == "$d":
            return {_key(k): v for k, v in body}
        if tag == "$c":
            return Counter({_key(k): v for k, v in body})
        if tag == "$f":
            return _NON_FINITE[body]
        if tag == "$h":
            return Handle(int(body[0]), int(body[1]))
        if tag == "$obj":
            if objects is None:
                raise WireError("helper objects are not accepted in this direction")
            name, state = body
            return objects(name, state)
        if tag in ("$cb", "$ref"):
            if tag not in tags:
                raise WireError(f"{tag} is not accepted in this direction")
            return tags[tag](int(body))
        return data

    return decode


_REPLY_DECODER = _decoder(None)


def parse_reply(raw: bytes, tags=None) -> dict:
    """A worker's reply frame as a JSON object, its tagged values decoded (helper objects
    refused; `tags` as in `_decoder`), refusing (WireError) anything over the size or container-count bounds before
    Python builds it, malformed, or nested too deep."""
    if len(raw) > MAX_REPLY_BYTES:
        raise WireError(f"reply of {len(raw)} bytes")
    if raw.count(b"[") + raw.count(b"{") > MAX_REPLY_CONTAINERS:   # base64 never holds a bracket
        raise WireError("reply with too many lists or objects")
    try:                      # depth: json's own recursion limit raises RecursionError
        reply = json.loads(raw, object_hook=_decoder(None, tags) if tags else _REPLY_DECODER)
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise WireError(f"malformed reply: {type(exc).__name__}") from None
    if not isinstance(reply, dict):
        raise WireError("a reply must be a JSON object")
    return reply


def dumps(value, *, objects=None) -> bytes:
    return json.dumps(to_plain(value, objects=objects), allow_nan=False, separators=(",", ":")).encode()


def loads(raw: bytes, *, objects=None, tags=None):
    try:
        return json.loads(raw, object_hook=_decoder(objects, tags))
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise WireError(f"malformed message: {type(exc).__name__}: {exc}") from None


# Framing: an 8-byte big-endian length, then the JSON bytes.
def write_frame(fd: int, payload: bytes) -> None:
    data = len(payload).to_bytes(8, "big") + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
