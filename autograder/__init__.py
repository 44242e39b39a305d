"""Autograder for numpy exercises: an engine that grades one assignment ("unit") at a time.

Layout, in layers (each imports only those below it; pyproject.toml's import contracts):
- `cli.py`: the command line's verb table; `commands/`: one module per verb, none
  importing another;
- `pipeline.py`: one submission, worker image -> grading -> the unit's artefacts -> reports;
- `reports/`: one writer per report format, and the sanitisers for student text;
- `grading/`: the pytest plugin that observes outcomes, scoring, the run;
- `unit/`: what a unit is and what is read from its folder (`model`: the manifest's schema,
  topics, limits; `rubric`, `oral_exam`) and `load`;
- `isolation/`: the worker process (the only one that runs student code), the grader's
  side of it (`sandbox`), and the plain-data wire format between them;
- `intake/`: what comes from outside, read without trusting it (no-follow reads, the
  shapes of a submission, the protected files' manifest);
- `units/<name>/`: the course content, one folder per unit (never named by the engine).

Nothing is imported here on purpose: the worker imports `autograder.isolation.worker`,
`autograder.isolation.wire` and the unit's helper modules only, and must never load the
hidden suites, the rubric or the reference solution.
"""
