"""The labels and column names a measuring harness writes into its raw samples and the analysis reads back: one
module below both, so neither imports the other (pqlab.layers)."""

# costs: Table I's frequencies and the backends an operation was timed with

PER_REPORT, PER_EPOCH, PER_CHECKPOINT = "per report", "per epoch", "per checkpoint"
FREQUENCIES = (PER_REPORT, PER_EPOCH, PER_CHECKPOINT)
NATIVE_BACKEND = "amort_native"  # the per-report primitives timed inside the C fast path
C_LOOP_BACKEND = "libcrypto"     # Table I's symmetric rows timed in a C loop (pqlab.experiments.symmetric_timing)
PYTHON_BACKEND = "hashlib"       # the same operations timed from Python: Table I's second, labelled column

# control cycle: the per-scan cost rotation run and its variants
SCAN_COST = "scan_cost"   # the rotation run: no evidence, one tag, two tags + chain step, cycle by cycle
VARIANTS = {0: "scan", 1: "one_tag", 2: "two_tags_chain"}  # the rotation's variant per cycle (-1: a Fig. 6 run)

# amortisation: the controller's timed phases per checkpoint
PHASES = ("ingest_ns", "body_ns", "sign_ns", "commit_ns", "write_ns")
PER_REPORT_PHASES = ("ingest_ns", "body_ns", "commit_ns")  # grow with the reports in a batch
PER_CHECKPOINT_PHASES = ("sign_ns", "write_ns")            # once per checkpoint: Eq. 1's C_sign + C_fsync


def beside_scheme(scheme: str, backend: str) -> str:
    """The sweep name of a baseline signing on a backend beside the main comparison."""
    return f"{scheme}@{backend}"
