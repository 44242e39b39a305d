"""Import time: an ImportError whose message is _PARAMS["text"]."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
raise ImportError(_PARAMS['text'])
