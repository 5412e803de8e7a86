# Two entry points (see README): `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test chromium bench

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	touch $@

# Debian's chromium for the real-browser tests (playwright drives it; no downloaded browsers).
chromium:
	bash scripts/install_chromium.sh

run: $(BIN)/.installed
	$(BIN)/streamlit run app.py

test: $(BIN)/.installed chromium
	$(BIN)/python -m pytest -q

bench: $(BIN)/.installed
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done
