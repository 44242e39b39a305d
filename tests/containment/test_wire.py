"""The plain-data codec: what crosses the process boundary, and what is refused."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from autograder.isolation import registry as models
from autograder.isolation import wire
from autograder.units.rnn_prehistory.helpers.language_models import BigramLM


def roundtrip(value, **kw):
    return wire.loads(wire.dumps(value, **kw), **kw)


def test_plain_values_round_trip():
    value = {"a": (1, 2.5, "x", None, True), "b": [np.float64(1.5), np.int64(3), np.bool_(False)],
             (1, "k"): Counter({("the", "cat"): 2}), "nan": math.nan, "inf": -math.inf}
    back = roundtrip(value)
    assert back["a"] == (1, 2.5, "x", None, True) and back["b"] == [1.5, 3, False]
    assert back[(1, "k")] == Counter({("the", "cat"): 2}) and isinstance(back[(1, "k")], Counter)
    assert math.isnan(back["nan"]) and back["inf"] == -math.inf
    assert type(back["b"][0]) is float and type(back["b"][2]) is bool


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool", "complex128", "uint8"])
def test_arrays_round_trip_exactly(dtype):
    arr = (np.arange(24).reshape(2, 3, 4) - 7).astype(dtype)
    back = roundtrip(arr[:, ::2])          # non-contiguous input
    assert back.dtype == arr.dtype and np.array_equal(back, arr[:, ::2])
    assert back.flags.writeable


def test_a_transposed_array_stays_transposed():
    """Layout matters to student code (x.reshape(-1) is a view of a C-contiguous array and a
    copy of a transposed one): a hidden test can send a transposed matrix and be sure the
    worker receives one."""
    arr = np.arange(12.0).reshape(3, 4)
    back = roundtrip(arr.T)
    assert np.array_equal(back, arr.T) and not back.flags.c_contiguous and back.flags.writeable
    assert roundtrip(arr).flags.c_contiguous


def test_refuses_what_is_not_plain_data():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    for value in [Evil(), np.array([Evil()], dtype=object), {1, 2}, lambda: 0, b"bytes"]:
        with pytest.raises(wire.WireError):
            wire.dumps(value)


def test_helper_objects_only_travel_towards_the_worker():
    lm = BigramLM(log_probs=np.log(np.full((3, 3), 1 / 3)), bos=2)
    raw = wire.dumps(lm, objects=models.encode)
    rebuilt = wire.loads(raw, objects=models.build)
    assert isinstance(rebuilt, BigramLM) and np.array_equal(rebuilt((2, 1)), lm((2, 1)))
    with pytest.raises(wire.WireError, match="not accepted"):
        wire.loads(raw)                         # the grader decodes worker replies without `objects`
    with pytest.raises(ValueError, match="unknown helper"):
        wire.loads(b'{"$obj": ["os.system", {}]}', objects=models.build)


@pytest.mark.parametrize("raw", [b"{", b'{"$nd": ["O", [1], "AA=="]}', b'{"$nd": ["<f8", [3], "AAAA"]}',
                                 b'{"$f": "zero"}', b"[" * 5000 + b"]" * 5000])
def test_malformed_messages_raise_wire_error(raw):
    with pytest.raises(wire.WireError):
        wire.loads(raw)


def test_a_reply_is_decoded_as_it_is_parsed_and_refuses_what_a_worker_never_sends():
    result = (np.arange(6.0).reshape(2, 3), [{"k": (1, math.inf)}], Counter({"a": 2}), {(1, 2): "pair"})
    raw = wire.frame({"ok": True, "id": 3, "result": wire.to_plain(result)})
    reply = wire.parse_reply(raw)
    array, nested, counter, pairs = reply["result"]
    assert np.array_equal(array, result[0]) and nested == [{"k": (1, math.inf)}]
    assert counter == Counter({"a": 2}) and pairs == {(1, 2): "pair"}
    for forged in ({"$obj": ["BigramLM", {}]}, {"$nd": ["<f8", [2], "AAAA"]}, {"$f": "zero"}, {"$d": 5}):
        with pytest.raises(wire.WireError):
            wire.parse_reply(json.dumps({"ok": True, "id": 3, "result": [forged]}).encode())


def test_arrays_travel_as_raw_bytes_after_the_json_and_strings_with_nul_stay_strings():
    values = (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3).T, np.array([True, False]),
              np.zeros((0, 4)), "a\0b", [np.int8(3), np.arange(3, dtype=np.complex128)])
    raw = wire.dumps(values)
    text, _nul, arrays = raw.partition(b"\0")
    assert b"\0" not in text and len(arrays) == 48 + 48 + 2 + 48      # the bytes, not base64 in the JSON
    back = wire.loads(raw)
    assert back[4] == "a\0b" and back[5][0] == 3
    for got, want in zip((back[0], back[1], back[2], back[3], back[5][1]), (*values[:4], values[5][1])):
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert back[1].flags.f_contiguous and not back[1].flags.c_contiguous     # a transpose stays one
    assert back[0].flags.writeable and back[0].base is None                 # the decoder's own copy


@pytest.mark.parametrize("body", [["<f8", [2], 8], ["<f8", [2], -8], ["<f8", [-1], 0], ["<f8", [2], True],
                                  ["<f8", [2], 0.0], ["<f8", [2**40, 2**40], 0], ["O", [1], 0], ["<f8", "2", 0],
                                  ["V8", [1], 0], ["<f8", [2]]])
def test_a_forged_array_of_a_reply_is_refused_before_numpy_reads_it(body):
    reply = json.dumps({"ok": True, "id": 3, "result": {"$nd": body}}).encode() + b"\0" + bytes(16)
    with pytest.raises(wire.WireError):
        wire.parse_reply(reply)

