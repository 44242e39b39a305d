"""Fingerprints of Python source, as MOSS takes them (Schleimer, Wilkerson and Aiken,
"Winnowing: local algorithms for document fingerprinting", SIGMOD 2003).

The source is read as Python's own tokenizer reads it (never run), and normalised so that
what a copier changes cheaply changes nothing: comments, blank lines and layout are
dropped, every identifier becomes V, every number N, every string S (keywords and
operators stay). Each run of K consecutive tokens is hashed; of every W consecutive hashes
the smallest is kept (the rightmost on a tie), so that any match of at least W + K - 1
tokens shares at least one fingerprint, and a fingerprint remembers the lines it covers.
"""

from __future__ import annotations

import functools
import hashlib
import io
import keyword
import tokenize
from collections.abc import Sequence
from typing import NamedTuple

K = 15      # tokens per k-gram: shorter runs (`x = np.zeros(n)`) are everyone's
W = 6       # winnowing window: a match of K + W - 1 = 20 tokens is always seen

_SKIPPED = {"COMMENT", "NL", "NEWLINE", "INDENT", "DEDENT", "ENCODING", "ENDMARKER", "FSTRING_MIDDLE", "FSTRING_END",
            "TSTRING_MIDDLE", "TSTRING_END"}
_STRINGS = {"STRING", "FSTRING_START", "TSTRING_START"}


class Print(NamedTuple):
    hash: int
    first: int          # first and last line (1-based) of the k-gram
    last: int


def tokens(text: str) -> list[tuple[str, int]]:
    """(normalised token, line) of `text`; a file that does not tokenise to its end gives
    the tokens before the error (a syntax error must not hide a copied first half)."""
    out: list[tuple[str, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tokenize.tok_name[tok.type]
            if kind in _SKIPPED:
                continue
            if kind == "NAME":
                out.append((tok.string if keyword.iskeyword(tok.string) else "V", tok.start[0]))
            elif kind == "NUMBER":
                out.append(("N", tok.start[0]))
            elif kind in _STRINGS:
                out.append(("S", tok.start[0]))
            else:
                out.append((tok.string, tok.start[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return out


def _hash(gram: list[str]) -> int:
    # A digest, not hash(): fingerprints are compared across processes (shards, reruns).
    return int.from_bytes(hashlib.blake2b("\x00".join(gram).encode(), digest_size=8).digest(), "big")


@functools.lru_cache(maxsize=64)
def kgrams(text: str) -> tuple[Print, ...]:
    """Every k-gram of `text`, hashed, in order. Kept for the last few texts: a class's
    untouched stubs and shared files are tokenised once."""
    toks = tokens(text)
    return tuple(Print(_hash([t for t, _line in toks[i:i + K]]), toks[i][1], toks[i + K - 1][1])
            for i in range(len(toks) - K + 1))


def winnow(grams: Sequence[Print]) -> list[Print]:
    """The winnowed fingerprints of `grams`: in each window of W, the minimum (rightmost on a
    tie), each chosen k-gram once. Fewer than W k-grams: their minimum."""
    if not grams:
        return []
    if len(grams) < W:
        return [min(reversed(grams), key=lambda g: g.hash)]
    hashes = [g.hash for g in grams]
    chosen: list[Print] = []
    last = -1
    for start in range(len(grams) - W + 1):
        window = hashes[start:start + W]
        best = start + W - 1 - window[::-1].index(min(window))      # the rightmost minimum
        if best != last:
            chosen.append(grams[best])
            last = best
    return chosen


def fingerprints(text: str, boilerplate: frozenset[int] | set[int] = frozenset()) -> list[Print]:
    """The winnowed fingerprints of `text` that are not in `boilerplate` (the k-gram hashes
    of the released stub: the code every student was given)."""
    return [p for p in winnow(kgrams(text)) if p.hash not in boilerplate]
