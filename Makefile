# pqlab — `make repro` rebuilds every paper figure, `make test` runs the test suite (`make check`: the quick tier).
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

.PHONY: setup tpm browser ns3 params-resolved repro status check test bench lab lint lock clean-venv sanitize sanitize-amort sanitize-transport \
        sanitize-cycle sanitize-symmetric liboqs \
        clean-liboqs

setup: $(STAMP) tpm browser ns3

# Debian's swtpm/tpm2-tools/libtss2-dev (as root, only if missing) and tpm2-pytss in the venv; prints why if not.
tpm: $(STAMP)
	@bash scripts/setup-tpm.sh $(BIN)/python

# Debian's libns3-dev, pkg-config and g++ (as root, only if missing) and the ns-3 scenario program of the transport
# cross-check, built into build/ns3/; prints why if not.
ns3: $(STAMP)
	@bash scripts/setup-ns3.sh $(BIN)/python

# Debian's chromium (as root, only if missing) for the real-browser test; Playwright comes from the lock file.
browser: $(STAMP)
	@bash scripts/setup-browser.sh $(BIN)/python

$(STAMP): pyproject.toml requirements/lock.txt setup.py $(wildcard lib/pqlab/*/*.c lib/pqlab/*/*.h lib/pqlab/*/*/*.c lib/pqlab/*/*/*.h \
          lib/pqlab/*/*/*/*.c lib/pqlab/*/*/*/*.h)
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

# The papers' own PQ library: liboqs (requirements/liboqs.toml) built into .venv/liboqs, where pqlab looks first.
# LIBOQS_SRC=DIR|ARCHIVE builds from a local source; LIBOQS_ALGS=all builds every algorithm (default: pqlab's).
liboqs: $(STAMP)
	@$(BIN)/python scripts/build_liboqs.py

clean-liboqs:
	@test ! -x $(BIN)/python || $(BIN)/python scripts/build_liboqs.py --clean

# params/params.yaml is validated by pqlab's bounded parser and resolved into params/resolved.yaml (what dvc.yaml's
# stages list: every parameter each reads, defaults included) before anything else runs, setup included; DVC itself
# never parses params.yaml, so a malformed file or an alias bomb is pqlab's one line. `make status`: `dvc status`
# with params.yaml's edits resolved, so it names exactly the stages an edit reruns.
params-resolved:
	@if test -x $(BIN)/pqlab; then $(BIN)/pqlab params --resolve >/dev/null; fi

repro: params-resolved setup
	@$(BIN)/pqlab params --resolve
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro
	@echo "Figures and tables: paper_figs/   Paper vs here: paper_figs/REPORT.md"

status: params-resolved setup
	@$(BIN)/pqlab params --resolve >/dev/null
	@PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc status

# Both run across every core (pytest-xdist, -n auto) in a random order (pytest-randomly prints its seed: repeat an
# order with --randomly-seed=N, or use the file order with -p no:randomly). `check` is the edit-run loop: lint + every
# test not marked slow, hypothesis's fast profile; `test` is the whole suite (CI runs it) on the thorough profile
# (10,000 examples per fuzz property; the counts are in tests/conftest.py) and ends with the ten slowest tests.
PYTEST_PARALLEL := -n auto --dist loadgroup

check: setup
	$(BIN)/ruff check lib tests benchmarks
	PQLAB_HYPOTHESIS_PROFILE=fast $(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "not slow" --durations=5

test: setup
	$(BIN)/ruff check lib tests benchmarks
	PQLAB_HYPOTHESIS_PROFILE=thorough $(BIN)/python -m pytest $(PYTEST_PARALLEL) --durations=10

bench: setup
	$(BIN)/python benchmarks/bench_python_vs_native.py
	$(BIN)/python benchmarks/bench_thread.py
	$(BIN)/python benchmarks/bench_attack_matrix.py
	$(BIN)/python benchmarks/bench_design_space.py
	$(BIN)/python benchmarks/bench_recovery.py
	$(BIN)/python benchmarks/bench_scaling.py
	$(BIN)/python benchmarks/bench_amort_fastpath.py
	$(BIN)/python benchmarks/bench_eq1_error.py
	$(BIN)/python benchmarks/bench_paper_run.py
	$(BIN)/python benchmarks/bench_whatif.py

# The C cores under AddressSanitizer + UndefinedBehaviorSanitizer, one sanitize-<core> target each (a new core: add
# it to SANITIZE_CORES and write its target like these). Each builds its extension instrumented (build/sanitize/),
# loads it into the venv's Python with the sanitizer runtimes preloaded and runs the core's differential tests; any
# sanitizer report stops the run. CPython's own exit-time leaks are ignored, a leak whose stack reaches the core's
# sources fails it. PYTHONMALLOC=malloc puts Python's buffers under ASan too; allocator_may_return_null lets the
# tests that ask for impossible sizes see the NULL the cores must handle.
SANITIZE_CORES := amort transport cycle symmetric
AMORT_NATIVE   := lib/pqlab/amort/fastpath/native
TRANSPORT_CORE := lib/pqlab/transport
EXPERIMENTS_C  := lib/pqlab/experiments
BINDING_INC    := lib/pqlab/include
SAN_DIR    := build/sanitize
SAN_CFLAGS := -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
              -Wall -Wextra -Werror
SAN_PYINC   = -I"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
SAN_ENV     = env LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
              ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 LSAN_OPTIONS=exitcode=0 \
              UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PYTHONMALLOC=malloc
# the bindings' leak runs (tests/sanitize_bindings.py): full stacks on every allocation (CPython has no frame pointers,
# so the fast unwinder drops the binding's frame from a leaked object's stack and the check could not name its source;
# the full unwinder makes the test suites too slow, over 10 minutes for the Thread tests, so it runs only here)
SAN_LEAKS   = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:fast_unwind_on_malloc=0
SAN_PYTEST  = PQLAB_HYPOTHESIS_PROFILE=fast $(BIN)/python -m pytest -q -p no:cacheprovider -p no:randomly
SAN_RETRY   = bash scripts/sanitize-run.sh
# $(call san_fail,log) / $(call san_check,log,grep -e patterns naming the core's sources,what)
san_fail    = { echo "sanitize: failed; the end of $(1):"; tail -40 $(1); exit 1; }
san_check   = if grep -q $(2) -e "runtime error" -e "ERROR: AddressSanitizer" $(1); then \
                grep -B2 -A12 $(2) -e "runtime error" -e "ERROR: AddressSanitizer" $(1) | head -60; \
                echo "sanitize: a sanitizer report or a leak from $(3) (full log: $(1))"; exit 1; fi; \
              echo "sanitize: $(3): no sanitizer report and no leak; log: $(1)"

sanitize: $(addprefix sanitize-,$(SANITIZE_CORES))
	@echo "sanitize: clean: $(SANITIZE_CORES)"

# AMORT-V1 fast path: the 149 + 81 differential vectors (paper and extension sets), the fast-path tests, the binding's
# calls and error paths in a loop with full allocation stacks, and a 100,000-batch differential fuzz run.
sanitize-amort: setup
	@mkdir -p $(SAN_DIR) && rm -f $(SAN_DIR)/amort.log
	$(CC) $(SAN_CFLAGS) -shared -fPIC $(SAN_PYINC) -I$(BINDING_INC) $$(pkg-config --cflags libcrypto) \
	  $(AMORT_NATIVE)/_amort_native.c $(AMORT_NATIVE)/amort_core.c -o $(SAN_DIR)/_amort_native.so \
	  $$(pkg-config --libs libcrypto)
	$(SAN_ENV) PQLAB_AMORT_NATIVE_LIB=$(abspath $(SAN_DIR)/_amort_native.so) $(BIN)/python -c 'from pqlab.amort.fastpath import \
	  native; ok, what = native.status(); assert ok and "$(SAN_DIR)" in what, what; print("sanitized build:", what)' \
	  2>>$(SAN_DIR)/amort.log || $(call san_fail,$(SAN_DIR)/amort.log)
	@# leaks are checked in the fuzz run below: LeakSanitizer's exit-time tracer crashes in this pytest process here
	$(SAN_RETRY) $(SAN_DIR)/amort.log $(SAN_ENV) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
	  PQLAB_AMORT_NATIVE_LIB=$(abspath $(SAN_DIR)/_amort_native.so) \
	  $(SAN_PYTEST) tests/amort/test_fastpath_vectors.py tests/amort/test_fastpath.py tests/amort/test_fastpath_fuzz.py \
	  || $(call san_fail,$(SAN_DIR)/amort.log)
	$(SAN_RETRY) $(SAN_DIR)/amort.log $(SAN_ENV) $(SAN_LEAKS) PQLAB_AMORT_NATIVE_LIB=$(abspath $(SAN_DIR)/_amort_native.so) \
	  $(BIN)/python -m tests.sanitize_bindings amort 50 || $(call san_fail,$(SAN_DIR)/amort.log)
	$(SAN_RETRY) $(SAN_DIR)/amort.log $(SAN_ENV) PQLAB_AMORT_NATIVE_LIB=$(abspath $(SAN_DIR)/_amort_native.so) \
	  $(BIN)/python -m pqlab.cli amort-fuzz --batches 100000 --json $(SAN_DIR)/fuzz.json \
	  || $(call san_fail,$(SAN_DIR)/amort.log)
	@$(call san_check,$(SAN_DIR)/amort.log,-e "amort_core\.c" -e "_amort_native\.c",the AMORT native code)

# Thread/MRP simulator core: sim_grow's checked growth as plain C, then the differential tests against the Python
# twin (results and event traces), the malformed-plan properties and the checked-size tests, then every call and error
# path of the binding in a loop with full allocation stacks (the tests' leak check cannot name the binding's frame).
sanitize-transport: setup
	@mkdir -p $(SAN_DIR) && rm -f $(SAN_DIR)/transport.log
	$(CC) $(SAN_CFLAGS) -shared -fPIC $(SAN_PYINC) $(TRANSPORT_CORE)/_core.c $(TRANSPORT_CORE)/sim_core.c -lm \
	  -o $(SAN_DIR)/_transport_core.so
	$(CC) $(SAN_CFLAGS) -I$(TRANSPORT_CORE) tests/thread_c/sim_grow.c $(TRANSPORT_CORE)/sim_core.c -lm -o $(SAN_DIR)/sim_grow
	ASAN_OPTIONS=allocator_may_return_null=1 $(SAN_DIR)/sim_grow >$(SAN_DIR)/sim_grow.out 2>>$(SAN_DIR)/transport.log \
	  || $(call san_fail,$(SAN_DIR)/transport.log)
	$(SAN_ENV) PQLAB_TRANSPORT_CORE_LIB=$(abspath $(SAN_DIR)/_transport_core.so) $(BIN)/python -c 'from pqlab.transport \
	  import core, _core; assert "$(SAN_DIR)" in _core.__file__, _core.__file__; print("sanitized build:", _core.__file__)' \
	  2>>$(SAN_DIR)/transport.log || $(call san_fail,$(SAN_DIR)/transport.log)
	$(SAN_RETRY) $(SAN_DIR)/transport.log $(SAN_ENV) PQLAB_TRANSPORT_CORE_LIB=$(abspath $(SAN_DIR)/_transport_core.so) \
	  $(SAN_PYTEST) tests/test_thread_differential.py tests/test_thread_robustness.py \
	  tests/test_thread_checked_sizes.py || $(call san_fail,$(SAN_DIR)/transport.log)
	$(SAN_RETRY) $(SAN_DIR)/transport.log $(SAN_ENV) $(SAN_LEAKS) PQLAB_TRANSPORT_CORE_LIB=$(abspath $(SAN_DIR)/_transport_core.so) \
	  $(BIN)/python -m tests.sanitize_bindings transport 50 || $(call san_fail,$(SAN_DIR)/transport.log)
	@$(call san_check,$(SAN_DIR)/transport.log,-e "sim_core\.c" -e "transport/_core\.c" -e "sim_grow\.c",the Thread core)

# Control-cycle harness (the loop, the scan workload and the evidence path over amort_core.c): its tests, then every
# call and error path of the binding in a loop with leak detection on.
sanitize-cycle: setup
	@mkdir -p $(SAN_DIR) && rm -f $(SAN_DIR)/cycle.log
	$(CC) $(SAN_CFLAGS) -D_GNU_SOURCE -shared -fPIC $(SAN_PYINC) -I$(BINDING_INC) -I$(EXPERIMENTS_C)/cycle -I$(AMORT_NATIVE) \
	  $$(pkg-config --cflags libcrypto) $(EXPERIMENTS_C)/cycle/cycle_module.c $(EXPERIMENTS_C)/cycle/cycle_core.c \
	  $(EXPERIMENTS_C)/cycle/cycle_evidence.c $(AMORT_NATIVE)/amort_core.c -o $(SAN_DIR)/_cycle.so $$(pkg-config --libs libcrypto)
	$(SAN_ENV) PQLAB_CYCLE_LIB=$(abspath $(SAN_DIR)/_cycle.so) $(BIN)/python -c 'from pqlab.experiments import _cycle, \
	  control_cycle; assert "$(SAN_DIR)" in _cycle.__file__, _cycle.__file__; print("sanitized build:", _cycle.__file__)' \
	  2>>$(SAN_DIR)/cycle.log || $(call san_fail,$(SAN_DIR)/cycle.log)
	$(SAN_RETRY) $(SAN_DIR)/cycle.log $(SAN_ENV) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
	  PQLAB_CYCLE_LIB=$(abspath $(SAN_DIR)/_cycle.so) \
	  $(SAN_PYTEST) tests/test_control_cycle.py tests/test_control_cycle_evidence.py || $(call san_fail,$(SAN_DIR)/cycle.log)
	$(SAN_RETRY) $(SAN_DIR)/cycle.log $(SAN_ENV) $(SAN_LEAKS) PQLAB_CYCLE_LIB=$(abspath $(SAN_DIR)/_cycle.so) \
	  $(BIN)/python -m tests.sanitize_bindings cycle 50 || $(call san_fail,$(SAN_DIR)/cycle.log)
	@$(call san_check,$(SAN_DIR)/cycle.log,-e "cycle_core\.c" -e "cycle_evidence\.c" -e "cycle_module\.c" -e "amort_core\.c",the control-cycle binding)

# Table I's symmetric timing loops: outputs against the Python twin and the bad-argument tests, then every call and
# error path of the binding in a loop with leak detection on.
sanitize-symmetric: setup
	@mkdir -p $(SAN_DIR) && rm -f $(SAN_DIR)/symmetric.log
	$(CC) $(SAN_CFLAGS) -shared -fPIC $(SAN_PYINC) -I$(BINDING_INC) -I$(EXPERIMENTS_C)/symmetric $$(pkg-config --cflags libcrypto) \
	  $(EXPERIMENTS_C)/symmetric/_symmetric.c $(EXPERIMENTS_C)/symmetric/sym_timing.c -o $(SAN_DIR)/_symmetric.so \
	  $$(pkg-config --libs libcrypto)
	$(SAN_ENV) PQLAB_SYMMETRIC_LIB=$(abspath $(SAN_DIR)/_symmetric.so) $(BIN)/python -c 'from pqlab.experiments import \
	  symmetric_timing as s; ok, what = s.status(); assert ok and "$(SAN_DIR)" in s.load().__file__, what; \
	  print("sanitized build:", s.load().__file__)' 2>>$(SAN_DIR)/symmetric.log || $(call san_fail,$(SAN_DIR)/symmetric.log)
	$(SAN_RETRY) $(SAN_DIR)/symmetric.log $(SAN_ENV) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
	  PQLAB_SYMMETRIC_LIB=$(abspath $(SAN_DIR)/_symmetric.so) \
	  $(SAN_PYTEST) tests/test_symmetric_timing.py || $(call san_fail,$(SAN_DIR)/symmetric.log)
	$(SAN_RETRY) $(SAN_DIR)/symmetric.log $(SAN_ENV) $(SAN_LEAKS) PQLAB_SYMMETRIC_LIB=$(abspath $(SAN_DIR)/_symmetric.so) \
	  $(BIN)/python -m tests.sanitize_bindings symmetric 50 || $(call san_fail,$(SAN_DIR)/symmetric.log)
	@$(call san_check,$(SAN_DIR)/symmetric.log,-e "sym_timing\.c" -e "_symmetric\.c",the symmetric-timing binding)

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
