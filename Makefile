# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RELEASE ?= 0.5.23
OUT ?= out

.PHONY: setup run test bench docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

run: setup
	$(PY) -m extractor extract --release $(RELEASE) -o $(OUT)

test: setup
	$(PY) -m pytest -q

docs: setup
	$(PY) -m extractor render --release $(RELEASE) -o $(OUT)/site/$(RELEASE)

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info
