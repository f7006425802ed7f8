# The two commands of the README's Quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m dlfuzz.cli.demo

test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m dlfuzz backends --require numpy,torch,torch-compile,jax,jax-jit,tf,tf-xla,ort,ort-noopt,keras-tf,keras-jax,keras-torch
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
