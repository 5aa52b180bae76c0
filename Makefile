# Two commands: `make study` runs the main job, `make test` runs the suite.
# Both create or reuse .venv and install the project from requirements.lock
# (with uv when it is available or installable, plain pip otherwise).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)
CATALOGUE ?= catalogues

.PHONY: all setup study test test-slow lint typecheck unit browser bench lock lab clean

all: test

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@if command -v uv >/dev/null 2>&1; then UV=uv; \
	elif $(BIN)/python -m pip install -q uv >/dev/null 2>&1; then UV=$(BIN)/uv; \
	else UV=; fi; \
	if [ -n "$$UV" ]; then \
	  echo "installing with $$UV"; \
	  $$UV pip install -q --compile-bytecode --python $(BIN)/python -r requirements.lock -e . ; \
	else \
	  echo "installing with pip"; \
	  $(BIN)/python -m pip install -q -r requirements.lock -e . ; \
	fi
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

setup: $(STAMP)

## The main job: offline studies on the shipped catalogue, ending in reports/: the
## key-less baseline's, and the recorded reading judge's beside them (ADR-0026; never gate
## evidence). The recording answers the shipped catalogue's requests only: with another
## CATALOGUE the reading judge's studies are left out. Each `evalkit study` runs its studies
## a few at a time (the cores available); the reading judge's pages link the ADR pages of
## reports/adr/ (--adr-base) rather than rendering copies.
READER    := recorded:llm-reader-2026-12
RECORDING := recordings/llm-reader-2026-12
READER_LEDGER := ledgers/recorded_llm-reader-2026-12.sqlite
## Studies side by side: one more than the cores, since a study's kernel leaves its core
## idle while it starts and while its page is written (measured: 87 s against 91 s on 2 cores).
STUDY_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
study: setup
	@if [ "$(CATALOGUE)" != "catalogues" ]; then $(BIN)/evalkit catalogue check $(CATALOGUE); \
	else \
	  set -e; \
	  echo "checking the catalogue and importing the recorded judge's answers, side by side"; \
	  $(BIN)/evalkit catalogue check $(CATALOGUE) & p0=$$!; \
	  $(BIN)/evalkit judge --catalogue $(CATALOGUE) --judge $(READER) --ledger $(READER_LEDGER) --import-batch $(RECORDING)/calibration.jsonl & p1=$$!; \
	  $(BIN)/evalkit judge --catalogue $(CATALOGUE) --judge $(READER) --ledger $(READER_LEDGER) --rubric self_harm=v1 --dimensions self_harm,escalation,faithfulness --import-batch $(RECORDING)/self_harm-v1.jsonl & p2=$$!; \
	  $(BIN)/evalkit judge --catalogue $(CATALOGUE) --judge $(READER) --ledger $(READER_LEDGER) --rubric faithfulness=v1 --dimensions self_harm,escalation,faithfulness --import-batch $(RECORDING)/faithfulness-v1.jsonl & p3=$$!; \
	  $(BIN)/evalkit construct mutate --catalogue $(CATALOGUE) --judge $(READER) --ledger $(READER_LEDGER) --import-batch $(RECORDING)/mutation.jsonl & p4=$$!; \
	  failed=0; for p in $$p0 $$p1 $$p2 $$p3 $$p4; do wait $$p || failed=$$?; done; \
	  if [ $$failed != 0 ]; then echo "make study: a step above failed (exit $$failed)" >&2; exit $$failed; fi; \
	  $(BIN)/evalkit study --catalogue $(CATALOGUE) --judge $(READER) --ledger $(READER_LEDGER) --out reports/llm-reader --explore --jobs $(STUDY_JOBS) \
	    --adr-base ../adr/ --only calibration_study --only rubric_constructs --only construct_rules --only mutation_study; \
	fi
	$(BIN)/evalkit study --catalogue $(CATALOGUE) --judge baseline --out reports --ledger-dir ledgers --jobs $(STUDY_JOBS)

## The suite a developer runs: lint, types, and every test not marked slow (about 6 min on
## 2 cores). `make test-slow` runs the end-to-end ones (papermill renders, browsers, killed
## processes); CI (.ci/run) runs both.
test: setup lint typecheck unit

lint: setup
	$(BIN)/ruff check evalkit tests benchmarks
	$(BIN)/ruff format --check evalkit tests benchmarks

typecheck: setup
	$(BIN)/mypy

unit: setup browser
	$(BIN)/pytest -q -n 2 -m "not slow" --durations=15

test-slow: setup browser
	$(BIN)/pytest -q -n 2 -m slow --durations=15

## Headless Chromium for the report tests (Debian's package; skipped when it cannot be installed).
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" != "0" ]; then echo "browser: /usr/bin/chromium missing and not root: not installing (report browser tests will skip)"; \
	elif ! command -v apt-get >/dev/null 2>&1; then echo "browser: /usr/bin/chromium missing and no apt-get: not installing (report browser tests will skip)"; \
	else apt-get update -qq && apt-get install -y -qq chromium >/dev/null || echo "browser: apt-get install chromium failed (report browser tests will skip)"; fi

## Every benchmark script in benchmarks/ (they print figures and PASS/MISS; none fails).
bench: setup
	@set -e; for script in benchmarks/bench_*.py; do \
	  echo "== $$script"; $(BIN)/python $$script; echo; \
	done

## Re-resolve the lock file after changing dependencies in pyproject.toml.
lock: setup
	$(BIN)/uv pip compile pyproject.toml --extra anthropic --extra notebooks --extra dev \
	  --python-version 3.11 -o requirements.lock

## JupyterLab for interactive work on 127.0.0.1 (installed if missing; not part of the lock).
## It opens in workspace/ (created if missing, git-ignored: copy a study there with
## `evalkit notebook new STUDY`), never on the tracked templates in notebooks/.
## It prints the URL with its token; --allow-root only when run as root; LAB_PORT=8888.
LAB_PORT ?= 8888
lab: setup
	@$(BIN)/python -c "import jupyterlab" 2>/dev/null || $(BIN)/python -m pip install -q "jupyterlab>=4.2"
	@mkdir -p workspace
	EVALKIT_PROJECT=$(CURDIR) $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/workspace --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) --no-browser $$(test "$$(id -u)" = 0 && echo --allow-root)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
