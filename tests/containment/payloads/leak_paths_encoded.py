"""Appended to bptt.py: the folder of the unit (from its package's __path__), written in each of
the encodings a textual redaction misses (base64, base64 in chunks, hex, hex with separators,
rot13, reversed, split by zero-width spaces, full-width letters), returned by rel_error (a check
quotes it) and raised by numerical_gradient, one encoding per call: _PARAMS["encoding"]."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# isort: split
# ---- appended to the student's module ----
import base64
import string
import sys

_ROT13 = string.ascii_lowercase[13:] + string.ascii_lowercase[:13] + string.ascii_uppercase[13:] + \
    string.ascii_uppercase[:13]


def _encoded():
    unit = next(m for name, m in sys.modules.items() if name.startswith("autograder.units."))
    folder = list(unit.__path__)[0]
    raw = folder.encode()
    forms = {
        "base64": base64.b64encode(raw).decode(),
        "base64 in chunks": " ".join(base64.b64encode(raw).decode()[i:i + 8] for i in range(0, 400, 8)),
        "hex": raw.hex(),
        "hex with colons": ":".join(f"{b:02x}" for b in raw),
        "rot13": folder.translate(str.maketrans(string.ascii_letters, _ROT13)),
        "reversed": folder[::-1],
        "zero-width": "\u200b".join(folder),
        "full-width": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in folder),
    }
    return "ENCODED " + " | ".join(f"{k}: {v}" for k, v in forms.items())


def rel_error(a, b):
    return _encoded()                # a result: the check's message quotes it


def numerical_gradient(f, x, h=1e-6):
    raise RuntimeError(_encoded())   # an exception: its message and traceback
