# Two entry points (see README): `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run dev test lint typecheck chromium postgres bench

$(BIN)/.installed: requirements.txt requirements-test.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-test.txt
	# The project itself, editable, so bench/ and scripts/ import lib without a sys.path hack.
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# Debian's chromium for the real-browser tests (playwright drives it; no downloaded browsers).
chromium:
	bash scripts/install_chromium.sh

# Debian's PostgreSQL for the study storage tests (they start a throwaway cluster on 127.0.0.1).
postgres:
	bash scripts/install_postgres.sh

run: $(BIN)/.installed
	$(BIN)/streamlit run app.py

# Development: reload on save (the served app has no file watcher, see .streamlit/config.toml).
dev: $(BIN)/.installed
	$(BIN)/streamlit run app.py --server.fileWatcherType auto --server.runOnSave true --client.toolbarMode developer

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy on lib/ (files, strictness and the untyped dependencies: [tool.mypy] in pyproject.toml).
typecheck: $(BIN)/.installed
	$(BIN)/mypy

# Two processes for the tests that compute (pytest-xdist, whole files per process: module fixtures
# stay shared), then two for the real-browser tests (each process serves the app and runs chromium
# of its own); last, on their own, the tests that time what a user waits for (marker `timed`).
# Files go out in collection order: xdist's default, most tests first, left the files of one or two
# long tests (a process each) to the end, and one process idle behind them (71 s of a 21-min run).
# The 20 slowest tests are listed, so a run shows where its time goes.
# The three runs share one folder of compiled JAX programs (tests/conftest.py), emptied first: an app
# server of the browser or timed tests loads what an earlier server compiled (HANNA's leaderboard, the MAP
# preview) instead of compiling it again. The timed tests are collected from the files that mark them:
# collecting the whole suite to find three took 13.6 s of CPU, these files 4.1 s.
XDIST := -n 2 --dist loadfile --no-loadscope-reorder
COMPILED := $(CURDIR)/.cache/test-compiled
TIMED_FILES = $(shell grep -rl "mark\.timed" tests)
test: lint typecheck chromium postgres
	rm -rf $(COMPILED)
	EVAL_TEST_COMPILED=$(COMPILED) $(BIN)/python -m pytest -q $(XDIST) -m "not timed" --ignore=tests/browser --durations=20
	EVAL_TEST_COMPILED=$(COMPILED) $(BIN)/python -m pytest -q $(XDIST) -m "not timed" tests/browser
	EVAL_TEST_COMPILED=$(COMPILED) $(BIN)/python -m pytest -q -m timed $(TIMED_FILES)

bench: $(BIN)/.installed
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done
