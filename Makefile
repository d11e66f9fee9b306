# gpumetrics: `make demo` and `make test` are the two entry points (see README).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.14.1 torchvision==0.29.1
PYTEST_ARGS ?=
# test processes (pytest-xdist): one per core, at most 4 (24 GiB hosts; some tests hold models and spawn ranks); 0 on
# one core. Whole files go to a process (--dist loadfile), so module fixtures (the COCO table, weights) run once.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; [ $$n -le 1 ] && n=0; echo $$n)

.PHONY: demo test test-cuda bench venv install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: $(BIN)/python
	$(BIN)/pip install -q $(TORCH_SPEC)
	touch $@

$(VENV)/.installed: $(VENV)/.torch pyproject.toml
	$(BIN)/pip install -q -e ".[all]"
	touch $@

# test oracles pip cannot resolve as dependencies: youtokentome (no wheel for Python 3.11: built from source with
# Cython < 3), the ruclip 0.0.2 wheel (downloaded, never installed: its package no longer imports; the ruCLIP
# tests read its model/processor/predictor files from the wheel in $(VENV)/oracles) and the pymorphy2 0.9.1 wheel
# (the AIJ scripts' lemmatiser; imported from the wheel by tests/helpers/pymorphy2_oracle.py)
$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(BIN)/pip install -q -e ".[test,bench]"
	$(BIN)/pip install -q 'cython<3' setuptools wheel
	$(BIN)/pip install -q --no-build-isolation youtokentome==1.0.6
	$(BIN)/pip download -q --no-deps ruclip==0.0.2 -d $(VENV)/oracles
	$(BIN)/pip download -q --no-deps pymorphy2==0.9.1 -d $(VENV)/oracles
	touch $@

install-test: $(VENV)/.installed-test

venv: $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/gpumetrics evaluate configs/demo.yaml --output reports/demo.json

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# the CUDA suite (tests marked `cuda`; each skips with a reason without CUDA). It needs no venv: on a GPU machine
# whose Python already has torch, `make test-cuda CUDA_PYTHON=python3` (tools/gpu_session.sh runs it in one call).
CUDA_PYTHON ?= $(BIN)/python
PYTEST_CUDA_ARGS ?=
test-cuda:
	PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} $(CUDA_PYTHON) -m pytest -o addopts="" --strict-markers -ra -q \
		-p no:cacheprovider -m cuda tests $(PYTEST_CUDA_ARGS)

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
