# The two commands of the README's Quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JS_STAMP := $(VENV)/.tfjs-installed
TFJS_VERSIONS := 4.22.0 4.1.0
BACKENDS := numpy,torch,torch-compile,jax,jax-jit,tf,tf-xla,ort,ort-noopt,keras-tf,keras-jax,keras-torch,tfjs-cpu,tfjs-wasm,tfjs-webgl

.PHONY: install demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,dev,ray]'
	touch $(STAMP)

# Chromium and Node from Debian, then TF.js releases (and playwright-core, typescript)
# from npm into dlfuzz's cache (~/.cache/dlfuzz/tfjs): the tfjs-* backends need them.
$(JS_STAMP): $(STAMP) scripts/install-system-deps.sh src/dlfuzz/backends/tfjs/install.py
	bash scripts/install-system-deps.sh
	$(PY) -m dlfuzz tfjs install $(foreach v,$(TFJS_VERSIONS),--version $(v))
	touch $(JS_STAMP)

install: $(STAMP) $(JS_STAMP)

demo: install
	$(PY) -m dlfuzz.cli.demo

test: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m dlfuzz backends --require $(BACKENDS)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
