"""Plain-data codec between the grader and the worker process.

Everything that crosses the process boundary is a frame of JSON with a few tagged objects,
followed by the raw bytes of its arrays, so decoding a worker's reply never runs code the
student defined (no pickle):

    {"$nd": [dtype, shape, offset]}   numeric numpy array (bool, int, uint, float, complex): its
                                      bytes start at `offset` in the frame's array section
    {"$ndT": [dtype, shape, offset]}  the same, sent as its transpose and decoded transposed back (a
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

A frame is `JSON [NUL arrays]`: `to_plain` leaves each array's bytes in place (a `bytes`
object where the offset goes) and `frame` writes them after the JSON, which never holds a
NUL (json.dumps escapes every control character). Raw bytes instead of base64 inside the
JSON spare both sides the encoding and the JSON scanner a third more text (a reference
grading moves ~4 MB of arrays).
"""

from __future__ import annotations

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
    # The bytes stay a `bytes` object here: `frame` moves them to the array section.
    if value.ndim >= 2 and not value.flags.c_contiguous and value.T.flags.c_contiguous:
        # A transposed array stays one: student code may depend on the layout (x.reshape(-1)
        # is a view of a C-contiguous array, a copy of a transposed one), so tests can send both.
        arr = value.T
        return {"$ndT": [arr.dtype.str, list(arr.shape), arr.tobytes()]}
    arr = np.ascontiguousarray(value)
    return {"$nd": [arr.dtype.str, list(arr.shape), arr.tobytes()]}


def _key(k):
    # JSON lists are unhashable; tuples of plain values are the usual dict keys here.
    return tuple(_key(x) for x in k) if isinstance(k, list) else k


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _array(body, arrays: memoryview) -> np.ndarray:
    """The array of a "$nd" body: [dtype, shape, offset into the frame's array section],
    every part checked before numpy reads a byte (a forged frame raises WireError)."""
    if type(body) is not list or len(body) != 3:
        raise WireError("malformed array")
    dtype, shape, offset = body
    if type(dtype) is not str or type(shape) is not list or type(offset) is not int:
        raise WireError("malformed array")
    if not all(type(n) is int and n >= 0 for n in shape):
        raise WireError("array shape is not a list of sizes")
    dt = np.dtype(dtype)
    if dt.kind not in _ARRAY_KINDS:
        raise WireError(f"array dtype {dtype} is not numeric")
    size = math.prod(shape) * dt.itemsize
    if offset < 0 or offset + size > len(arrays):
        raise WireError("array bytes outside the frame")
    return np.frombuffer(arrays[offset:offset + size], dtype=dt).reshape(shape).copy()


_NO_ARRAYS = memoryview(b"")


def _decoder(objects, tags=None, arrays: memoryview = _NO_ARRAYS):
    """The inverse of `to_plain`, as json.loads' object_hook: each tagged object is decoded
    as the parser builds it, innermost first, so lists and plain values pass no Python code.
    `objects(name, state)` decodes {"$obj": ...}; None refuses it. `tags` maps the
    callback tags ("$cb", "$ref") to their decoders; a tag not in it is refused. `arrays`:
    the frame's array section."""
    tags = tags or {}

    def decode(data: dict):
        if len(data) != 1:
            return data
        (tag, body), = data.items()
        if tag in ("$nd", "$ndT"):
            arr = _array(body, arrays)
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


def _split(raw: bytes) -> tuple[bytes, memoryview]:
    """A frame's JSON and its array section (empty when it has none)."""
    end = raw.find(b"\0")
    return (raw, _NO_ARRAYS) if end < 0 else (raw[:end], memoryview(raw)[end + 1:])


def parse_reply(raw: bytes, tags=None) -> dict:
    """A worker's reply frame as a JSON object, its tagged values decoded (helper objects
    refused; `tags` as in `_decoder`), refusing (WireError) anything over the size or container-count bounds before
    Python builds it, malformed, or nested too deep."""
    if len(raw) > MAX_REPLY_BYTES:
        raise WireError(f"reply of {len(raw)} bytes")
    text, arrays = _split(raw)
    if text.count(b"[") + text.count(b"{") > MAX_REPLY_CONTAINERS:
        raise WireError("reply with too many lists or objects")
    try:                      # depth: json's own recursion limit raises RecursionError
        reply = json.loads(text, object_hook=_decoder(None, tags, arrays))
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise WireError(f"malformed reply: {type(exc).__name__}") from None
    if not isinstance(reply, dict):
        raise WireError("a reply must be a JSON object")
    return reply


def frame(plain) -> bytes:
    """The frame of a structure `to_plain` made: its JSON, then (after a NUL) the bytes of its arrays."""
    arrays: list[bytes] = []
    offset = 0

    def place(value):
        nonlocal offset
        if type(value) is not bytes:
            raise TypeError(f"{type(value).__name__} is not plain data")
        arrays.append(value)
        offset += len(value)
        return offset - len(value)

    text = json.dumps(plain, allow_nan=False, separators=(",", ":"), default=place).encode()
    return b"\0".join((text, b"".join(arrays))) if arrays else text


def dumps(value, *, objects=None) -> bytes:
    return frame(to_plain(value, objects=objects))


def loads(raw: bytes, *, objects=None, tags=None):
    text, arrays = _split(raw)
    try:
        return json.loads(text, object_hook=_decoder(objects, tags, arrays))
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise WireError(f"malformed message: {type(exc).__name__}: {exc}") from None


# Framing: an 8-byte big-endian length, then the frame (its JSON, and its array section after a NUL).
def write_frame(fd: int, payload: bytes) -> None:
    data = len(payload).to_bytes(8, "big") + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
