# One entry point for users and CI. Every target installs what it needs into the virtualenv first,
# so a fresh clone needs no step before `make replay`, `make judge` or `make test`:
#   - the runtime (`.[all]`: no compiler needed) for replay, judge, report, images, gc and suite;
#   - the runtime plus the development extras (`.[all,dev]`: test and lint tools, and
#     llama-cpp-python, compiled from source for one slow test) for test, lint and the benchmarks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed
PIP_FLAGS ?= --quiet

DATASET ?= datasets/ds
TURNS ?= 16
MODEL ?= $(JUDGE_MODEL)
MODE ?= all
RUNS ?= 1
BACKEND ?= auto
JOBS ?= auto
PYTEST_ARGS ?=
RESULTS ?= runs/judge/$(notdir $(abspath $(DATASET)))
GRID ?=
ITEMS ?=
ITEM_SCORING ?=
# Where judge runs are made: local, or ray (ADDRESS: the cluster's head, HOST:PORT or auto).
EXECUTOR ?= local
ADDRESS ?=
# What replay and judge give the environment kinds: ENDPOINTS, space-separated KIND=VALUE (e.g.
# desktop=http://10.0.0.5:5000); KIND_OPTIONS, space-separated KIND.FIELD=VALUE (e.g.
# postgres.seed_timeout=30); DSN, an external Postgres server (the same as postgres=DSN).
ENDPOINTS ?=
KIND_OPTIONS ?=
DSN ?=
KIND_FLAGS = $(foreach endpoint,$(ENDPOINTS),--endpoint $(endpoint)) $(if $(DSN),--endpoint postgres=$(DSN),) $(foreach option,$(KIND_OPTIONS),--kind-option $(option))
# A subset of the dataset for replay and judge: ONLY, space-separated shell globs on trajectory
# and task ids (e.g. ONLY='gui-* fs-meeting-notes-index'); LIMIT, at most that many trajectories.
ONLY ?=
LIMIT ?=
SUBSET_FLAGS = $(foreach pattern,$(ONLY),--only '$(pattern)') $(if $(LIMIT),--limit $(LIMIT),)
# The kinds whose Docker images `make images` builds (default: every kind's).
KINDS ?=
# llama-cpp-python (a test dependency) compiles from source: build for any x86-64 with AVX2, not
# only this CPU, so a wheel pip caches works on other machines too.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install install-runtime test lint docs docs-serve replay judge report view perf perf-sandboxes perf-mcp perf-judge perf-ranking perf-browser perf-desktop perf-viewer perf-executor perf-sockets images gc suite clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[all]'
	touch $@

# The development install includes the runtime: it stamps both. OSWorld's client package (for the
# control server's conformance test) goes in without its requirements: see pyproject's dev extra.
OSWORLD_CLIENT := desktop-env==1.0.2
$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[all,dev]'
	$(BIN)/python -m pip install $(PIP_FLAGS) --no-deps '$(OSWORLD_CLIENT)'
	touch $@ $(RUNTIME_STAMP)

install: $(DEV_STAMP)

install-runtime: $(RUNTIME_STAMP)

# Tests marked slow (real desktops recording and replaying suites, a Ray cluster, whole-suite
# replays) run in CI (CI=true) or with SLOW=1; elsewhere `make test` leaves them out.
test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(if $(CI)$(SLOW),,-m "not slow") $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The documentation site (mkdocs + Material), built into site/; its reference pages (every
# command's --help, settings, dataset schema, MCP tools) are generated from the code at build
# time by docs/gen_reference.py. `make docs-serve` serves it on 127.0.0.1:8000 while editing.
# (NO_MKDOCS_2_WARNING: the theme's notice about its successor is not about this site.)
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

replay: $(RUNTIME_STAMP)
	$(BIN)/agentjudge replay $(DATASET) --backend $(BACKEND) --jobs $(JOBS) $(KIND_FLAGS) $(SUBSET_FLAGS)

judge: $(RUNTIME_STAMP)
	$(BIN)/agentjudge judge $(DATASET) --turns $(TURNS) --mode $(MODE) --runs $(RUNS) --backend $(BACKEND) --jobs $(JOBS) $(KIND_FLAGS) $(if $(MODEL),--model $(MODEL),) $(if $(GRID),--grid $(GRID),) $(foreach option,$(METHOD_OPTIONS),--method-option $(option)) $(if $(ITEMS),--items $(ITEMS),) $(if $(ITEM_SCORING),--item-scoring $(ITEM_SCORING),) --executor $(EXECUTOR) $(if $(ADDRESS),--address $(ADDRESS),) $(SUBSET_FLAGS)

perf: perf-sandboxes perf-mcp perf-judge perf-ranking perf-browser perf-desktop perf-viewer perf-executor perf-sockets

perf-sandboxes: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_sandboxes --docker

perf-mcp: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_mcp

perf-judge: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_judge

perf-ranking: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_agent_ranking
perf-browser: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_browser
perf-desktop: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_desktop
perf-viewer: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_viewer
perf-executor: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_executor
perf-sockets: $(DEV_STAMP)
	$(BIN)/python -m benchmarks.perf_sockets

images: $(RUNTIME_STAMP)
	$(BIN)/agentjudge sandboxes build-images $(if $(KINDS),$(foreach kind,$(KINDS),--kind $(kind)),--all)

# The suites built from code on this machine's own sandboxes: DS (filesystem, Postgres) and GUI
# (LibreOffice desktops, local backend; about 40 minutes on 2 cores).
suite: $(RUNTIME_STAMP)
	$(BIN)/python -m suites.ds --output datasets/ds
	$(BIN)/python -m suites.gui --output datasets/gui

# Any one suite by its package's name: `make suite-gui`, `make suite-search`, `make suite-mobile`,
# `make suite-workspace` (`python -m suites.NAME --output datasets/NAME`).
suite-%: $(RUNTIME_STAMP)
	$(BIN)/python -m suites.$* --output datasets/$*

gc: $(RUNTIME_STAMP)
	$(BIN)/agentjudge sandboxes gc $(foreach endpoint,$(ENDPOINTS),--endpoint $(endpoint)) $(if $(DSN),--endpoint postgres=$(DSN),)

report: $(RUNTIME_STAMP)
	$(BIN)/agentjudge report $(RESULTS)

view: $(RUNTIME_STAMP)
	$(BIN)/agentjudge view $(RESULTS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache site
