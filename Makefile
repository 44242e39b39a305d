# Two commands do all the set-up on a fresh machine (Python 3.11+ and make):
#   make grade [SUBMISSION=DIR]   grade the stubs (or DIR) and write reports/
#   make test                     the repository's own test suite (installs the dev extras)
#   make sweep                    the long sweeps: seeds, each delivery path's scenarios, the nbgrader round trip, a class of 40, every containment attack as root too (CI runs them after make test)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The unit to grade and release (make grade UNIT=...); ASSIGNMENT= is its former name, still read.
ASSIGNMENT ?= rnn_prehistory
UNIT ?= $(ASSIGNMENT)
# make test's processes: one more than the cores. A grading in a test alternates between the
# test's process and the worker it starts, so each process leaves its core idle now and then;
# on 2 cores, 3 processes took 8 % less time than 2 (four runs of each, alternated).
TEST_JOBS ?= $(shell python3 -c "import os; print((os.cpu_count() or 1) + 1)")
SWEEP_JOBS ?= auto
SUBMISSION ?= assignments/$(UNIT)
OUT ?= reports
GRADE_ARGS ?=

.PHONY: grade test sweep lint build stubs literals bench release clean help venv i18n catalogues nbgrader durations procedure
.DEFAULT_GOAL := help

help:
	@echo "make grade [SUBMISSION=DIR] [OUT=reports] [GRADE_ARGS='--fail-under 60']"
	@echo "make test     the repository's tests (engine, content, outside oracles) on TEST_JOBS processes (cores + 1), and make lint beside them"
	@echo "make lint     ruff, mypy and the import contracts (lint-imports)"
	@echo "make sweep    the long sweeps: every seed of the fault lab's pool, the kill matrix under ten seeds, each delivery path's scenarios, the nbgrader round trip, a class of 40 regraded, every containment attack (as root too)"
	@echo "make build    everything derived, in order: catalogues, stubs, notebooks, README and AUTHORING tables (python -m autograder build; make stubs, nbgrader and i18n are this one)"
	@echo "make stubs    regenerate assignments/ from solutions/ (make build)"
	@echo "make literals write the public tests' expected values, computed by PyTorch from their inputs"
	@echo "make nbgrader regenerate the nbgrader course in course/"
	@echo "make i18n     merge new student-facing text into the translation catalogues"
	@echo "make bench    time and measure a grading run, beside nbgrader's and Otter-Grader's (installs the bench extra)"
	@echo "make procedure  recompute the fault lab's procedure table (after editing the solution's lab or bptt, or a broken primitive)"
	@echo "make durations  record this checkout's test times as the start order of a fresh clone (tests/durations.json)"
	@echo "make release  write dist/student/ (the student repository), dist/grader-bundle/ and dist/gradescope.zip"

# The venv is rebuilt when it is missing, broken (its Python is gone), or older than
# pyproject.toml; each stamp records one install of the package with a set of extras.
venv:
	@if [ ! -x $(PY) ] || ! $(PY) -c "import sys" >/dev/null 2>&1; then \
	  rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); fi

$(VENV)/.installed-base: pyproject.toml | venv
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | venv
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@ $(VENV)/.installed-base

# The translation catalogues, compiled at install (a stale .mo is compiled in memory anyway).
LOCALE_PO := $(shell find autograder -path '*/LC_MESSAGES/*.po')
catalogues: $(LOCALE_PO:.po=.mo)
%.mo: %.po | venv
	$(PY) -m autograder.i18n compile $<

# Python's default, whatever the machine sets: PYTHONDONTWRITEBYTECODE makes every start
# of the grader compile the engine and the suites again (~0.2 s of CPU; the tests start it
# a few hundred times). The compiled files go to __pycache__/ folders, which git ignores.
CACHED := env -u PYTHONDONTWRITEBYTECODE

grade: $(VENV)/.installed-base catalogues
	$(CACHED) $(PY) -m autograder grade $(SUBMISSION) --unit $(UNIT) --out $(OUT) $(GRADE_ARGS)

# On TEST_JOBS processes; tests/conftest.py decides which tests must share one and starts the
# longest first (what each took last time: .pytest_durations). The lint runs beside them (mypy
# alone is ~9 s of one core, which the tests leave idle now and then): its output comes after
# the tests' summary, and a lint or type error fails make test as a failed test does.
test: $(VENV)/.installed-dev catalogues
	@lint_out=$$(mktemp); ( $(LINT) ) >"$$lint_out" 2>&1 & lint=$$!; \
	$(CACHED) $(PY) -m pytest tests autograder/units -q -n $(TEST_JOBS) -m "not sweep"; tests=$$?; \
	wait $$lint; linted=$$?; echo "--- make lint"; cat "$$lint_out"; rm -f "$$lint_out"; \
	if [ $$linted -ne 0 ]; then echo "make test: the lint failed (above)"; fi; \
	[ $$tests -eq 0 ] && [ $$linted -eq 0 ]

# The order make test starts its tests in on a checkout that has not run them (CI's fresh clone):
# the times of this checkout's last runs (.pytest_durations) become the committed seed.
durations: $(VENV)/.installed-base
	$(PY) tests/scheduling.py .pytest_durations tests/durations.json

# ruff (pyflakes, syntax, bugbear, import order, pyupgrade) over the code, mypy over the engine,
# and the import contracts of pyproject.toml (the engine's layers; tests/engine/test_layering.py too).
LINT = set -x; $(VENV)/bin/ruff check autograder scripts tests && $(VENV)/bin/mypy && $(VENV)/bin/lint-imports
lint: $(VENV)/.installed-dev
	@$(LINT)

sweep: $(VENV)/.installed-dev catalogues
	$(CACHED) $(PY) -m pytest tests autograder/units -q -n $(SWEEP_JOBS) -m sweep

# Everything derived from the topic folders and the solutions, in the order they depend on each
# other: the catalogues (merged without churn: translate what is new, then build again), the
# stubs and the nbgrader course (which embed the translations), the README's and AUTHORING's
# tables. `python -m autograder build --check` says what is stale (the tests run it).
build: $(VENV)/.installed-base
	$(PY) -m autograder build
i18n stubs nbgrader: build

# The figures of the lab's procedure on every seed of its pool, which the hidden suite reads
# instead of computing them in every grading (lab/procedure_table.py).
procedure: $(VENV)/.installed-base
	$(PY) -m autograder.units.rnn_prehistory.lab.procedure_table

# The public tests' blocks of expected values (PyTorch is a dev extra; a test fails on drift).
literals: $(VENV)/.installed-dev
	$(PY) scripts/make_public_literals.py --unit $(UNIT)

# The dev extras and Otter-Grader (the bench extra), whose `otter run` is one of the series.
$(VENV)/.installed-bench: pyproject.toml | venv
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	@touch $@ $(VENV)/.installed-dev $(VENV)/.installed-base

bench: $(VENV)/.installed-bench catalogues
	$(CACHED) $(PY) scripts/bench.py

release: $(VENV)/.installed-base
	$(PY) scripts/release.py --unit $(UNIT)

clean:
	rm -rf $(VENV) $(OUT) .bench dist
