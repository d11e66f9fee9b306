# gpumetrics: `make demo` and `make test` are the two entry points (see README).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.14.1 torchvision==0.29.1
PYTEST_ARGS ?=

.PHONY: demo test bench venv install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: $(BIN)/python
	$(BIN)/pip install -q $(TORCH_SPEC)
	touch $@

$(VENV)/.installed: $(VENV)/.torch pyproject.toml
	$(BIN)/pip install -q -e ".[all]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(BIN)/pip install -q -e ".[test,bench]"
	touch $@

venv: $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/gpumetrics evaluate configs/demo.yaml --output reports/demo.json

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
