"""Appended to the beam_search.py stub: sequence_score is the stand-in, found by _PARAMS["route"]."""

from payloads.find_stand_in import _alias

# ---- appended to the student's module ----
sequence_score = _alias("ExactSequenceScore")
