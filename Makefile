# Two commands: `make run` and `make test`. Both set everything up on first use.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OFFICE_READERS := poppler-utils docx2txt xlsx2csv libreoffice-impress-nogui

.PHONY: run test setup bench lint clean mcp-servers

# Real MCP servers from the registries, for the tests and bench/mcp.py (pinned).
MCP_SERVERS := .mcp-servers
MCP_STAMP := $(MCP_SERVERS)/.installed
SERVER_EVERYTHING := @modelcontextprotocol/server-everything@2026.8.31
SERVER_TIME := mcp-server-time==2026.10.19

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11 or newer is needed (python3 --version)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# Bytecode for the package and its dependencies now, not at the first start (which
	@# would pay for it, or never keep it where PYTHONDONTWRITEBYTECODE is set).
	$(BIN)/python -m compileall -q -j 0 workbench
	@$(BIN)/python -m compileall -q -j 0 $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') >/dev/null 2>&1 || true
	@command -v espeak-ng >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null \
		|| { apt-get install -y -qq espeak-ng >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq espeak-ng; }; } \
		|| echo "note: espeak-ng (Debian) could not be installed; text-to-speech will say it is unavailable"
	@touch $(STAMP)

setup: $(STAMP)

# What only the tests need: the independent readers they open the Simple Office add-on's
# files with (as root with apt; `make run` installs none of it).
READERS_STAMP := $(VENV)/.test-readers
$(READERS_STAMP): Makefile | $(STAMP)
	@# pdftotext (poppler-utils, ~1 MB beside its libraries), docx2txt and xlsx2csv (small),
	@# LibreOffice Impress without a GUI for slides (~180 MB, ~25 s to install).
	@{ command -v pdftotext && command -v docx2txt && command -v xlsx2csv && command -v soffice; } >/dev/null 2>&1 \
		|| [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null \
		|| { apt-get install -y -qq --no-install-recommends $(OFFICE_READERS) >/dev/null 2>&1 \
		     || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $(OFFICE_READERS); }; } \
		|| echo "note: $(OFFICE_READERS) (Debian) could not all be installed; the Simple Office tests need them"
	@{ command -v pdftotext && command -v docx2txt && command -v xlsx2csv && command -v soffice; } >/dev/null 2>&1 \
		|| echo "note: pdftotext, docx2txt, xlsx2csv or soffice is missing (apt-get install $(OFFICE_READERS)); the Simple Office tests need them"
	@touch $(READERS_STAMP)

$(MCP_STAMP): Makefile | $(STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "error: npm (Node.js) is needed to install the MCP test servers"; exit 1; }
	mkdir -p $(MCP_SERVERS)
	npm install --silent --no-audit --no-fund --prefix $(MCP_SERVERS) $(SERVER_EVERYTHING)
	@test -x $(MCP_SERVERS)/venv/bin/python || $(BIN)/python -m venv $(MCP_SERVERS)/venv
	$(MCP_SERVERS)/venv/bin/python -m pip install --quiet $(SERVER_TIME)
	@touch $(MCP_STAMP)

mcp-servers: $(MCP_STAMP)

run: setup
	@$(BIN)/workbench models pull --quiet \
		|| echo "note: the built-in local model could not be fetched (offline?); the chat still works (echo). Run 'workbench models pull' later."
	$(BIN)/workbench

# The suite runs in parallel, one worker per core (TEST_WORKERS=1 runs it in one process).
TEST_WORKERS ?= auto

# ruff (pyflakes, pycodestyle, bugbear, complexity), mypy over workbench/, and the
# import contracts; all three are configured in pyproject.toml.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint $(MCP_STAMP) $(READERS_STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25

# Every benchmark in bench/, one after another, then one table of their figures.
# bench/tool_calls.py measures bwrap per call (Debian's bubblewrap) beside our calls.
bench: setup $(MCP_STAMP)
	@command -v bwrap >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null \
		|| { apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq bubblewrap; }; } \
		|| echo "note: bubblewrap (Debian) could not be installed; bench/tool_calls.py says its peer is not measured"
	$(BIN)/python bench/_all.py

clean:
	rm -rf $(VENV) build *.egg-info $(MCP_SERVERS)
