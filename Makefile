# Two entry points on a fresh machine: `make demo` (the main job so far) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint bench demo-snapshot

GATEWAY := .venv-gateway/bin/replay

$(BIN)/replay: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# mitmproxy 11.0.2 cannot share an environment with the test clients (see pyproject).
$(GATEWAY): pyproject.toml
	$(PYTHON) -m venv .venv-gateway
	.venv-gateway/bin/pip install -q --upgrade pip
	.venv-gateway/bin/pip install -q -e '.[gateway]' mypy types-PyYAML
	touch $@

# The main job: each demo case replayed end to end with the reference harness against the
# built-in stub model playing the real fix (embedded defaults: SQLite in .replay/, Docker).
demo: $(BIN)/replay $(GATEWAY)
	$(BIN)/replay case validate cases/*/case.yaml
	for case in cases/*/case.yaml; do \
	  $(BIN)/replay run $$case --harness reference --stub gold --expect pass || exit 1; \
	done
	$(BIN)/replay results list

# mypy twice: everything in the test venv (where mitmproxy is absent and typed as Any), and
# the gateway again in its own venv, against mitmproxy's real types.
lint: $(BIN)/replay $(GATEWAY)
	$(BIN)/ruff check replay fakes tests contract_tests bench
	$(BIN)/ruff format --check replay fakes tests contract_tests bench
	$(BIN)/mypy
	.venv-gateway/bin/mypy -p replay.gateway

test: lint
	$(BIN)/python -m pytest

bench: $(BIN)/replay
	$(BIN)/python bench/run.py

# Regenerate the demo snapshot from its sources (byte-identical unless the sources changed).
demo-snapshot: $(BIN)/replay
	$(BIN)/replay snapshot build snapshots/sources/demo snapshots/demo
