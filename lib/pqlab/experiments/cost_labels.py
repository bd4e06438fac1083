"""The labels the cost harness writes into its raw samples and the cost analysis reads (frequencies, backends)."""

PER_REPORT, PER_EPOCH, PER_CHECKPOINT = "per report", "per epoch", "per checkpoint"
FREQUENCIES = (PER_REPORT, PER_EPOCH, PER_CHECKPOINT)
NATIVE_BACKEND = "amort_native"  # the per-report primitives timed inside the C fast path
C_LOOP_BACKEND = "libcrypto"     # Table I's symmetric rows timed in a C loop (pqlab.experiments.symmetric_timing)
PYTHON_BACKEND = "hashlib"       # the same operations timed from Python: Table I's second, labelled column
