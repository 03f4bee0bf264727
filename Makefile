# EvalDesk developer commands. Everything needs only Python 3.11 and make.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.setup-done
# llama.cpp's server for model files, built from source once per version and cached outside the
# clone (installers/build_llama_server.py; ~15-25 min the first time on 2 cores)
ENGINE := build/llama.cpp/ENGINE.json

.PHONY: setup run test lint bench dist deb installer smoke clean

# Set up once (and again whenever pyproject.toml changes).
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is needed: install it, or run 'make PYTHON=/path/to/python3.11'"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet --quiet pip
	# The CPU build of torch first: any other spec pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet --quiet torch==2.13.0
	$(PY) -m pip install --quiet --quiet -e ".[dev]"
	touch $(STAMP)

$(ENGINE): installers/build_llama_server.py $(STAMP)
	$(PY) installers/build_llama_server.py

setup: $(STAMP) $(ENGINE)

run: $(STAMP) $(ENGINE)
	$(VENV)/bin/evaldesk

lint: $(STAMP)
	$(VENV)/bin/lint-imports

test: $(STAMP) $(ENGINE)
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bench: $(STAMP) $(ENGINE)
	@for f in tests/benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# Both go through installers/build.py, the one build script the GitHub workflow runs on Windows,
# macOS and Linux (it installs the `build` extra, i.e. PyInstaller, when it is missing).
# The one-folder app in dist/EvalDesk/ (PyInstaller, build.spec; 4-7 min on 2 cores).
dist: $(STAMP)
	$(PY) installers/build.py --no-package --skip-smoke

# This system's installer around the app, after the smoke test, with dist/SHA256SUMS:
# on Linux dist/evaldesk_<version>_<arch>.deb (DEB_COMPRESSION=zstd: faster, a little bigger).
deb installer: $(STAMP)
	$(PY) installers/build.py

# Checks the built app without Python: --version, headless AQER vs source, the window under Xvfb.
smoke: $(STAMP)
	$(PY) installers/smoke_test.py

clean:
	rm -rf $(VENV) build dist .pytest_cache
