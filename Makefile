# Two commands set up and check a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: generate test check bench conformance clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev]'
	touch $(STAMP)

## Compile opdefs/ (and the IR protos) into generated/, print a summary, byte-compile the package.
generate: $(STAMP)
	$(BIN)/opspec generate
	@$(BIN)/python -m compileall -q opspec codegen runtime generated

## Fail when generated/ is stale, then run the test suite.
test: $(STAMP)
	$(BIN)/opspec generate --check
	$(BIN)/python -m pytest

## Score ONNX's node conformance suite, rewrite the committed expectations, regenerate the docs.
conformance: $(STAMP)
	$(BIN)/python tests/conformance/harness.py --update
	$(BIN)/opspec generate

## Measure import time, lookup latency, generation and inference speed.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev,bench]'
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
