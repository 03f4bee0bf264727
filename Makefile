# EvalDesk developer commands. Everything needs only Python 3.11 and make.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.setup-done

.PHONY: setup run test lint bench clean

# Set up once (and again whenever pyproject.toml changes).
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is needed: install it, or run 'make PYTHON=/path/to/python3.11'"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet --quiet pip
	# The CPU build of torch first: any other spec pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet --quiet torch==2.13.0
	$(PY) -m pip install --quiet --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/evaldesk

lint: $(STAMP)
	$(VENV)/bin/lint-imports

test: $(STAMP)
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bench: $(STAMP)
	@for f in tests/benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) build dist .pytest_cache
