# Two entry points on a fresh machine: `make demo` (the main job so far) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test strength lint bench redteam redteam-all demo-snapshot wheelhouse harnesses harnesses-all system-deps-demo system-deps-test real-set strength-real-set

# What the targets need from Debian's packages (debootstrap for the base image; gh, npm, chromium and
# iproute2 for the tests): installed when run as root, else the exact command, before any work.
# (Explicit rules: make skips pattern rules for .PHONY targets.)
system-deps-demo:
	bash .ci/system-deps demo

system-deps-test:
	bash .ci/system-deps test

GATEWAY := .venv-gateway/bin/replay

$(BIN)/replay: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# mitmproxy 11.0.2 cannot share an environment with the test clients (see pyproject).
# hypothesis: the fuzzing of the gateway's addons runs there, beside mitmproxy.
$(GATEWAY): pyproject.toml
	$(PYTHON) -m venv .venv-gateway
	.venv-gateway/bin/pip install -q --upgrade pip
	.venv-gateway/bin/pip install -q -e '.[gateway]' mypy types-PyYAML hypothesis
	touch $@

# The main job: the demo cases and the real historical cases replayed end to end with the
# reference harness against the built-in stub model (embedded defaults: SQLite in .replay/,
# Docker), ending with a summary table; it fails unless each run gets the verdict it must.
# The demo cases play six trajectories; the real ones (tomli 2021 on Debian bullseye's
# Python 3.9, humanize 2025 on bookworm's 3.11) the gold fix, the test-skipping cheat and the
# reckless push.
DEMO_CASES = $(wildcard cases/demo-*/case.yaml)
REAL_CASES = $(filter-out $(DEMO_CASES),$(wildcard cases/*/case.yaml))

demo: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay case validate $(DEMO_CASES) $(REAL_CASES)
	$(BIN)/replay run $(DEMO_CASES) --harness reference \
	  --stub gold --stub cheat --stub reckless \
	  --stub spoof-conftest --stub spoof-plugin --stub spoof-site \
	  --expect gold=pass --expect cheat=model_fail --expect reckless=model_fail \
	  --expect spoof-conftest=model_fail --expect spoof-plugin=model_fail \
	  --expect spoof-site=model_fail
	$(BIN)/replay run $(REAL_CASES) --harness reference \
	  --stub gold --stub cheat --stub reckless \
	  --expect gold=pass --expect cheat=model_fail --expect reckless=model_fail

# The real set (cases/real/, issue 34): fixes of public repositories made by `replay case
# create --from` naming only what each repository declares for its tests (their histories
# ship in snapshots/blobs; their registries' files, mostly the projects' development tooling,
# are fetched from PyPI by sha256 first, about 200 MB), each replayed with
# the gold fix and idly (one run each); prints the yield table and fails unless every gold
# run passes and every idle run fails. Not part of `make demo` (its own environment image per
# case: 20 minutes here on 2 cores with the images built).
REAL_SET = $(wildcard cases/real/*/case.yaml)

real-set: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay registry fetch $(REAL_SET)
	$(BIN)/replay case validate $(REAL_SET)
	$(BIN)/replay case calibrate $(REAL_SET) --runs 1

# Every shipped case's strength (issue 37): plausible wrong fixes of each gold patch graded
# as a run's diff is, each measurement kept beside its case (strength.json, at the case's
# digest). CI measures two of them again (tests/strength/test_shipped.py); 3 minutes here.
strength: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay case strength $(DEMO_CASES) $(REAL_CASES) --record

# The real set's strength (cases/real/, 46 cases): its registry fetched, then each case's
# environment image built as needed and its strength kept beside it (not yet run whole).
strength-real-set: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay registry fetch $(REAL_SET)
	$(BIN)/replay case strength $(REAL_SET) --record

lint: $(BIN)/replay $(GATEWAY)
	$(BIN)/ruff check replay fakes tests contract_tests bench
	$(BIN)/ruff format --check replay fakes tests contract_tests bench
	$(BIN)/mypy
	.venv-gateway/bin/mypy -p replay.gateway

# The built-in harnesses that install from PyPI (mini-swe-agent), downloaded as wheels before
# the tests run, so that the tests themselves read only the local wheelhouse.
wheelhouse: $(BIN)/replay
	$(BIN)/python -c 'from replay.harness.install import prefetch_builtin; prefetch_builtin()'

# Every built-in harness on the demo cases against the stub model, gold and idle, in one
# table; fails unless each gold run passes and each idle run fails. Not part of `make demo`,
# which stays quick.
harnesses: system-deps-demo $(BIN)/replay $(GATEWAY) wheelhouse
	$(BIN)/replay harness matrix $(DEMO_CASES)

# The same on the demo cases and the real ones (tomli on bullseye's Python 3.9, where the pip
# harnesses bring bookworm's 3.11 into their own prefix; humanize on bookworm's 3.11): a
# harness layer per case and harness, so much longer (Claude Code's 14 runs took 36 minutes
# here, layers included, on 2 cores shared with other work).
harnesses-all: system-deps-demo $(BIN)/replay $(GATEWAY) wheelhouse
	$(BIN)/replay harness matrix $(DEMO_CASES) $(REAL_CASES)

# The red-team corpus (replay redteam list): every attack on the grader played end to end
# through `replay run` on the demo cases, each held to the outcome and reason it must end with
# and to its checks of the run's directory; fails if one does not. `make test` runs its CI
# subset on one case. redteam-all plays it on the real cases too (their older interpreters and
# pytest; a case whose listed test lives outside its hidden patch): about twice as long.
redteam: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay redteam run $(DEMO_CASES)

redteam-all: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/replay redteam run $(DEMO_CASES) $(REAL_CASES)

# Three workers, one per group of tests (tests/conftest.py): the image builds, the runs and
# the rest side by side.
test: system-deps-test lint wheelhouse
	$(BIN)/python -m pytest -n 3

# The suites start the gateway (its venv), and the run and batch suites build the demo case's
# images as `make demo` does (debootstrap).
bench: system-deps-demo $(BIN)/replay $(GATEWAY)
	$(BIN)/python bench/run.py

# Regenerate the demo snapshot from its sources (byte-identical unless the sources changed).
demo-snapshot: $(BIN)/replay
	$(BIN)/replay snapshot build snapshots/sources/demo snapshots/demo
