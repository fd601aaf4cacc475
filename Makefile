# Two commands set up and check a fresh clone: `make generate` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Exact versions of everything the development environment installs (`make lock` refreshes it).
LOCK   := requirements/lock.txt
# pip's own notices about this machine's configuration are not ours to print; errors still show.
PIP     = -m pip --quiet --quiet --disable-pip-version-check
# Scratch output (type-check tree, docs site, compat venvs, setuptools' staging): a folder whose
# name cannot be imported, so running `python -m build` or `import build` here finds the real package.
SCRATCH := .build

.PHONY: generate test typecheck docs check bench conformance lock compat wheel clean kernels kernels-doc

$(STAMP): pyproject.toml setup.py $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python $(PIP) install -c $(LOCK) pip setuptools
	$(BIN)/python $(PIP) install -c $(LOCK) --no-build-isolation -e '.[test,dev,docs]'
	touch $(STAMP)

## Compile opdefs/ (and the IR protos) into generated/, print a summary, byte-compile the package.
generate: $(STAMP)
	@$(BIN)/opspec generate
	@$(BIN)/python -m compileall -q opspec codegen runtime generated

## Fail when generated/ is stale or a module does not type-check, then run the test suite.
test: $(STAMP)
	$(BIN)/opspec generate --check
	$(BIN)/python tests/typecheck.py
	$(BIN)/python -m pytest

## Build the reference site with search (MkDocs, strict: any warning or broken link fails) into .build/site.
docs: $(STAMP)
	$(BIN)/python -m opspec.codegen.docs_site

## Type-check every hand-written module (and the generated ones) with mypy, as the package installs them.
typecheck: $(STAMP)
	$(BIN)/python tests/typecheck.py

## Score ONNX's node conformance suite, rewrite the committed expectations, regenerate the docs.
conformance: $(STAMP)
	$(BIN)/python tests/conformance/harness.py --update
	$(BIN)/opspec generate

## Measure import time, lookup latency, generation and inference speed (synthetic and real exported models),
## then print how well check --runtime predicts onnxruntime (its matrix is kept in benchmarks/results.md),
## then convert every model of the real-model set, onnx's light models and node suite to every opset from 7
## to 25 by opspec and by onnx, judged by running (answers kept in .build/convert_matrix, so a re-run judges
## what changed), then scan 3,000 malformed models and the real-model set on one and two workers and on Ray.
bench: $(STAMP)
	$(BIN)/python $(PIP) install -c $(LOCK) --no-build-isolation -e '.[test,dev,bench]'
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/bench_runtime_support.py
	$(BIN)/python benchmarks/bench_convert_matrix.py --quiet --write
	$(BIN)/python benchmarks/bench_scan.py

## Re-extract onnxruntime's CPU kernel table from the pinned wheel (when the pin moves), then regenerate.
kernels: $(STAMP)
	$(BIN)/python -m opspec.codegen.kernel_extract
	$(BIN)/opspec generate

## Cross-check onnxruntime's docs/OperatorKernels.md (DOC=path, COMMIT=sha) against the CPU table and, when its
## CPU section agrees row for row, write the other providers' tables from it (CUDA, DirectML).
kernels-doc: $(STAMP)
	$(BIN)/python -m opspec.codegen.kernel_doc "$(DOC)" --commit "$(COMMIT)" --write
	$(BIN)/opspec generate

## Pin the newest versions pyproject.toml allows into requirements/lock.txt (then `make generate`).
lock: $(STAMP)
	$(BIN)/python requirements/lock.py

## The wheel (pure Python, any platform) into dist/, built with the locked pip and setuptools.
wheel: $(STAMP)
	rm -f dist/opspec-*.whl
	$(BIN)/python $(PIP) wheel --no-deps --no-build-isolation -w dist .
	@ls dist/opspec-*.whl

## The package's dependency ranges, tested: DEPS=floors (requirements/floors.txt) or DEPS=newest.
## Installs the built wheel (not editable) in a venv of its own, runs the tests that need no onnx,
## and requires `opspec infer --format json` to answer exactly as the locked environment does
## on the node suite's and the test suite's models.
## DEPS=onnx-1.17 (or onnx-1.18, onnx-1.19: requirements/onnx-*.txt) installs the wheel with that
## onnx and protobuf 5.29 instead, and runs the tests of what uses onnx: the bridge, the importer, check_model.
DEPS   ?= floors
COMPAT := $(SCRATCH)/compat
CVENV  := $(COMPAT)/venv-$(DEPS)
ONNX_TESTS := tests/test_bridge.py tests/test_importer.py tests/test_check_model.py
compat: $(STAMP)
	@case "$(DEPS)" in floors) flags="-c requirements/floors.txt";; newest) flags="--upgrade";; \
	  onnx-*) test -f requirements/$(DEPS).txt || { echo "no requirements/$(DEPS).txt" >&2; exit 2; }; \
	          flags="-r requirements/$(DEPS).txt";; \
	  *) echo "DEPS is floors, newest or onnx-X.Y (one of requirements/onnx-*.txt)" >&2; exit 2;; esac; \
	rm -rf $(CVENV) $(COMPAT)/dist && \
	$(BIN)/python $(PIP) wheel --no-deps --no-build-isolation -w $(COMPAT)/dist . && \
	$(PYTHON) -m venv $(CVENV) && \
	$(CVENV)/bin/python $(PIP) install $$flags $(COMPAT)/dist/opspec-*.whl && \
	$(CVENV)/bin/python $(PIP) install -c $(LOCK) pytest
ifneq ($(filter onnx-%,$(DEPS)),)
	@$(CVENV)/bin/python -c "from importlib.metadata import version; \
	  print('$(DEPS):', ', '.join(f'{n} {version(n)}' for n in ('onnx', 'protobuf', 'numpy')))"
	cd $(COMPAT) && $(CURDIR)/$(CVENV)/bin/pytest -q -p no:cacheprovider --rootdir $(CURDIR) \
	  $(addprefix $(CURDIR)/,$(ONNX_TESTS))
else
	@$(CVENV)/bin/python -c "import google.protobuf, yaml, jinja2, jsonschema; from importlib.metadata import version; \
	  print('$(DEPS):', ', '.join(f'{n} {version(n)}' for n in ('protobuf', 'PyYAML', 'Jinja2', 'jsonschema')))"
	@$(CVENV)/bin/opspec generate --check 2>$(COMPAT)/refusal.txt; test $$? = 2 && cat $(COMPAT)/refusal.txt
	rm -rf $(COMPAT)/builtin && $(CVENV)/bin/opspec generate --out $(COMPAT)/builtin | tail -1
	rm -rf $(COMPAT)/models && $(BIN)/python tests/compat/corpus.py $(COMPAT)/models
	$(BIN)/python tests/compat/answers.py $(COMPAT)/models --write $(COMPAT)/answers.json
	$(CVENV)/bin/python tests/compat/answers.py $(COMPAT)/models --compare $(COMPAT)/answers.json
	cd $(COMPAT) && $(CURDIR)/$(CVENV)/bin/pytest -q -p no:cacheprovider --rootdir $(CURDIR) $(CURDIR)/tests
endif

clean:
	rm -rf $(VENV) $(SCRATCH) build dist *.egg-info
