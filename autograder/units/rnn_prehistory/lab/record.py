"""What one grading run recorded of the fault-injection lab: one explicit type that the
hidden suite fills and the evidence file and the figure read.

It crosses one process boundary (to the child that draws the figure) as plain JSON,
so every field is plain data: numbers, strings, lists and dicts of them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

EXTRAS_KEY = "fault_injection"     # the entry of the run's report_extras holding the record
MESSAGE_CHARS = 600                # what the record keeps of a message: whole sentences up to this
ELIDED = "[\u2026 {n} more]"         # stands for the sentences left out: "[… 2 more]"
# A sentence ends at . ! ? ; (then a space) or at a CJK full stop, question or exclamation mark.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[\u3002\uff01\uff1f\uff1b])\s*")
_CJK_END = "\u3002\uff01\uff1f\uff1b"


def sentences(text) -> list[str]:
    """The sentences of `text` (its lines joined: a message's line breaks are not sentence ends)."""
    flat = " ".join(str(text or "").split())
    return [s for s in _SENTENCE_END.split(flat) if s]


def join_sentences(parts, left_out: int = 0) -> str:
    """Sentences back into one text (no space after a CJK full stop), and the marker for
    `left_out` sentences that are not shown."""
    text = ""
    for part in parts:
        text += part if not text or text.endswith(tuple(_CJK_END)) else " " + part
    if left_out:
        text += (" " if text else "") + ELIDED.format(n=left_out)
    return text


def whole_sentences(text, limit: int = MESSAGE_CHARS) -> str:
    """`text` shortened to the whole sentences that fit in `limit` characters, with a visible
    marker for the ones left out: a word or a sentence is never cut (a first sentence longer
    than the limit is left out whole, and the marker says so)."""
    parts = sentences(text)
    for shown in range(len(parts), -1, -1):
        kept = join_sentences(parts[:shown], len(parts) - shown)
        if len(kept) <= limit or not shown:
            return kept
    return ""


def plain(value):
    """A JSON/YAML-safe copy (non-finite floats become strings)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    return repr(value)


@dataclass
class NormCurves:
    """||dh_T/dh_(T-k)||_2 against k for each rho and activation ("rho0.5_tanh", ...)."""

    source: str                    # "student" (the student's primitives) or "reference" (theirs failed)
    seed: int
    steps_back: list[int]
    norms: dict[str, list]


@dataclass
class LossCurves:
    """Training loss of the linear RNN at rho = 1.5, with and without clipping."""

    source: str
    seed: int
    clip: list
    noclip: list
    noclip_first_nonfinite_step: int | None


@dataclass
class ExperimentData:
    """What the figure draws of one of the grader's experiments (lab/fault_lab.py's
    rerun_*, its "figure" entry), or why there is nothing to draw."""

    source: str                    # "student" or "reference" (theirs failed), as above
    seed: int
    data: dict = field(default_factory=dict)
    error: str | None = None       # what the student's primitives raised, if they did


@dataclass
class SignalRecord:
    """How each way of grading one signal went ("measured", "rerun") and what it saw."""

    expected: object
    checks: dict = field(default_factory=dict)     # way -> bool
    details: dict = field(default_factory=dict)    # plain data shown for diagnosis


@dataclass
class LabRecord:
    seed: int | None = None                 # the seed the student's run_fault_injection was called with
    returned: dict | str | None = None      # what it returned (plain), or its repr when not a dict
    returned_error: str | None = None       # why it returned nothing
    signals: dict[str, SignalRecord] = field(default_factory=dict)
    curves: NormCurves | None = None
    loss_curves: LossCurves | None = None
    experiments: dict[str, ExperimentData] = field(default_factory=dict)   # "products", "clipping", ...

    def keep_experiment(self, name: str, source: str, seed: int, result: dict | None, error=None) -> None:
        """Keep what the figure draws of the grader's experiment `name`: the "figure" entry
        of its result, or the message of what the student's primitives raised."""
        message = whole_sentences(getattr(error, "message", error)) if error is not None else None
        self.experiments[name] = ExperimentData(source, int(seed), plain((result or {}).get("figure") or {}), message)


def record_run(report_extras: dict, seed: int, returned) -> LabRecord:
    """Keep what the student's run_fault_injection(seed) returned (the public test's run;
    the hidden suite's own run replaces it when the hidden suite runs)."""
    record = report_extras.setdefault(EXTRAS_KEY, LabRecord())
    record.seed = seed
    record.returned = plain(returned) if isinstance(returned, dict) else repr(returned)[:200]
    return record


def of(report_extras: dict) -> LabRecord:
    """The run's record (an empty one when the lab's suite did not run)."""
    record = (report_extras or {}).get(EXTRAS_KEY)
    return record if isinstance(record, LabRecord) else LabRecord()
