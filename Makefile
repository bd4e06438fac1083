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

.PHONY: setup tpm browser repro test bench lab lint lock clean-venv sanitize

setup: $(STAMP) tpm browser

# Debian's swtpm/tpm2-tools/libtss2-dev (as root, only if missing) and tpm2-pytss in the venv; prints why if not.
tpm: $(STAMP)
	@bash scripts/setup-tpm.sh $(BIN)/python

# Debian's chromium (as root, only if missing) for the real-browser test; Playwright comes from the lock file.
browser: $(STAMP)
	@bash scripts/setup-browser.sh $(BIN)/python

$(STAMP): pyproject.toml requirements/lock.txt setup.py $(wildcard lib/pqlab/*/*.c lib/pqlab/*/*.h lib/pqlab/*/*/*.c lib/pqlab/*/*/*.h)
	@$(PYTHON) -c 'import sys; sys.exit("pqlab needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@{ pkg-config --atleast-version=3.0 libcrypto 2>/dev/null || { ! command -v pkg-config >/dev/null && test -f /usr/include/openssl/evp.h; } \
	   || test -n "$$CONDA_PREFIX" -a -f "$$CONDA_PREFIX/include/openssl/evp.h"; } \
	   || { echo "pqlab: OpenSSL >= 3.0 libcrypto development files not found (pkg-config libcrypto); on Debian/Ubuntu: sudo apt-get install libssl-dev pkg-config"; exit 1; }
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
	$(BIN)/python benchmarks/bench_recovery.py
	$(BIN)/python benchmarks/bench_scaling.py
	$(BIN)/python benchmarks/bench_amort_fastpath.py
	$(BIN)/python benchmarks/bench_paper_run.py
	$(BIN)/python benchmarks/bench_whatif.py

# The AMORT-V1 C fast path under AddressSanitizer + UndefinedBehaviorSanitizer: an instrumented build of the
# extension (build/sanitize/), loaded into the venv's Python with the sanitizer runtimes preloaded, runs the
# 149 differential vectors, the fast-path tests and a 100,000-batch differential fuzz run. Any sanitizer
# report stops the run; CPython's own exit-time leaks are ignored, a leak whose stack reaches amort_core.c or
# _amort_native.c fails it. PYTHONMALLOC=malloc puts the report buffers the decoder reads under ASan too.
SAN_DIR    := build/sanitize
SAN_EXT    := $(SAN_DIR)/_amort_native.so
SAN_LOG    := $(SAN_DIR)/sanitizer.log
SAN_CFLAGS := -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
              -Wall -Wextra -Werror -shared -fPIC
SAN_RUN     = LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
              ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=exitcode=0 \
              UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PYTHONMALLOC=malloc \
              PQLAB_AMORT_NATIVE_LIB=$(abspath $(SAN_EXT))
SAN_FAIL    = { echo "sanitize: failed; the end of $(SAN_LOG):"; tail -40 $(SAN_LOG); exit 1; }

sanitize: setup
	@mkdir -p $(SAN_DIR) && rm -f $(SAN_LOG)
	$(CC) $(SAN_CFLAGS) -I"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	  $$(pkg-config --cflags libcrypto) $(AMORT_NATIVE)/_amort_native.c $(AMORT_NATIVE)/amort_core.c \
	  -o $(SAN_EXT) $$(pkg-config --libs libcrypto)
	$(SAN_RUN) $(BIN)/python -c 'from pqlab.amort import native; ok, what = native.status(); \
	  assert ok and "$(SAN_DIR)" in what, what; print("sanitized build:", what)'
	$(SAN_RUN) $(BIN)/python -m pytest -q -p no:cacheprovider tests/amort/test_fastpath_vectors.py \
	  tests/amort/test_fastpath.py tests/amort/test_fastpath_fuzz.py 2>>$(SAN_LOG) || $(SAN_FAIL)
	$(SAN_RUN) $(BIN)/python -m pqlab.cli amort-fuzz --batches 100000 --json $(SAN_DIR)/fuzz.json 2>>$(SAN_LOG) \
	  || $(SAN_FAIL)
	@if grep -q -e "amort_core\.c" -e "_amort_native\.c" -e "runtime error" -e "ERROR: AddressSanitizer" $(SAN_LOG); then \
	  grep -B2 -A12 -e "amort_core\.c" -e "_amort_native\.c" -e "runtime error" $(SAN_LOG) | head -60; \
	  echo "sanitize: a sanitizer report or a leak from the AMORT native code (full log: $(SAN_LOG))"; exit 1; fi
	@echo "sanitize: no sanitizer report and no leak from the AMORT native code; log: $(SAN_LOG)"

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
