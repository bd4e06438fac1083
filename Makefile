# pqlab — `make repro` rebuilds every paper figure, `make test` runs the test suite.
# Both create .venv on first use and install the pinned stack from requirements/lock.txt.

SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -ec
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.pqlab-installed
KERNEL := pqlab
PIP    := $(BIN)/python -m pip --quiet
# Some machines' pip.conf lists local index folders that do not exist; drop that noise only.
QUIET_PIP := { grep -v "is ignored: it is neither a file nor a directory" || true; }

.PHONY: setup repro test bench lab lint lock clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt setup.py $(wildcard lib/pqlab/*/*.c lib/pqlab/*/*.h lib/pqlab/*/*/*.c lib/pqlab/*/*/*.h)
	@$(PYTHON) -c 'import sys; sys.exit("pqlab needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip 2>&1 | $(QUIET_PIP)
	$(PIP) install -r requirements/lock.txt 2>&1 | $(QUIET_PIP)
	$(PIP) install --no-deps --no-build-isolation -e . 2>&1 | $(QUIET_PIP)
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (pqlab)" >/dev/null
	@touch $(STAMP)

repro: setup
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro
	@echo "Figures and tables: paper_figs/   Paper vs here: paper_figs/REPORT.md"

test: setup
	$(BIN)/ruff check lib tests benchmarks
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/bench_python_vs_native.py
	$(BIN)/python benchmarks/bench_thread.py
	$(BIN)/python benchmarks/bench_attack_matrix.py
	$(BIN)/python benchmarks/bench_design_space.py
	$(BIN)/python benchmarks/bench_paper_run.py

lab: setup
	$(BIN)/jupyter lab notebooks/

lint: setup
	$(BIN)/ruff check lib tests benchmarks

# Re-resolve the pins from pyproject.toml into requirements/lock.txt (needs the package index).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet -e '.[pipeline,lab,dev]'
	{ echo "# Exact versions tested on Debian 12 / CPython 3.11 (x86_64). Regenerate with: make lock"; \
	  .lock-venv/bin/python -m pip freeze --all --exclude-editable | grep -v -E '^(pip|wheel)=='; } > requirements/lock.txt
	rm -rf .lock-venv

clean-venv:
	rm -rf $(VENV)
