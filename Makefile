# Two commands: `make run` and `make test`. Both set everything up on first use.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test setup bench lint clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11 or newer is needed (python3 --version)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@command -v espeak-ng >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null \
		|| { apt-get install -y -qq espeak-ng >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq espeak-ng; }; } \
		|| echo "note: espeak-ng (Debian) could not be installed; text-to-speech will say it is unavailable"
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	@$(BIN)/workbench models pull --quiet \
		|| echo "note: the built-in local model could not be fetched (offline?); the chat still works (echo). Run 'workbench models pull' later."
	$(BIN)/workbench

test: setup
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/startup.py

clean:
	rm -rf $(VENV) build *.egg-info
