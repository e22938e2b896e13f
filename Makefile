# One entry point for users and CI. Every target depends on the virtualenv, so a fresh clone
# needs no step before `make replay`, `make judge` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

DATASET ?= datasets/ds
TURNS ?= 16
MODEL ?= $(JUDGE_MODEL)
MODE ?= all
RUNS ?= 1
BACKEND ?= local
JOBS ?= 4
PYTEST_ARGS ?=
RESULTS ?= runs/judge/$(notdir $(abspath $(DATASET)))
GRID ?=
# llama-cpp-python (a test dependency) compiles from source: build for any x86-64 with AVX2, not
# only this CPU, so a wheel pip caches works on other machines too.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install test lint replay judge report perf perf-sandboxes perf-mcp perf-judge images gc suite clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	shellcheck sandboxes/filesystem/*.sh

replay: $(STAMP)
	$(BIN)/agentjudge replay $(DATASET) --backend $(BACKEND) --jobs $(JOBS)

judge: $(STAMP)
	$(BIN)/agentjudge judge $(DATASET) --turns $(TURNS) --mode $(MODE) --runs $(RUNS) --backend $(BACKEND) --jobs $(JOBS) $(if $(MODEL),--model $(MODEL),) $(if $(GRID),--grid $(GRID),)

perf: perf-sandboxes perf-mcp perf-judge

perf-sandboxes: $(STAMP)
	$(BIN)/python -m bench.perf_sandboxes --docker

perf-mcp: $(STAMP)
	$(BIN)/python -m bench.perf_mcp

perf-judge: $(STAMP)
	$(BIN)/python -m bench.perf_judge

images: $(STAMP)
	$(BIN)/agentjudge sandboxes build-images

suite: $(STAMP)
	$(BIN)/python -m suites.ds --output datasets/ds

gc: $(STAMP)
	$(BIN)/agentjudge sandboxes gc

report: $(STAMP)
	$(BIN)/agentjudge report $(RESULTS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
