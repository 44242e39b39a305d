"""Autograder for numpy exercises: an engine that grades one assignment ("unit") at a time.

Layout:
- `isolation/`: the worker process (the only one that runs student code), the grader's
  side of it (`sandbox`), and the plain-data wire format between them;
- `grading/`: the pytest plugin that observes outcomes, the rubric, scoring, the run;
- `reports/`: one writer per report format, and the sanitisers for student text;
- `assignment.py`: loads a unit folder; `cli.py`: the command line;
- `units/<name>/`: the course content, one folder per unit (never named by the engine).

Nothing is imported here on purpose: the worker imports `autograder.isolation.worker`,
`autograder.isolation.wire` and the unit's helper modules only, and must never load the
hidden suites, the rubric or the reference solution.
"""
