"""The costs stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource


class OperationCost(MetricsNode):
    """One Table I operation: median, p95, p99 of its timed calls, the backend that ran it, how many calls."""

    median_us: float
    p95_us: float
    p99_us: float
    backend: str
    n: int


class NativeCost(MetricsNode):
    median_us: float
    p99_of_batch_means_us: float
    n_batches: int


class BackendSign(MetricsNode):
    median_us: float
    mean_us: float
    backend: str


class ReferenceOperation(MetricsNode):
    """A Table I symmetric row timed in a C loop (the paper's method): median and p99 with their intervals."""

    median_us: float
    median_lo_us: float
    median_hi_us: float
    p99_us: float
    p99_lo_us: float
    p99_hi_us: float
    mean_us: float
    n: int
    backend: str
    method: str


class SignerOnBackend(MetricsNode):
    median_us: float
    mean_us: float
    main: bool
    write_over_sign: float
    dominant_with_log: str


class LibraryDependent(MetricsNode):
    """The claims whose verdict depends on the signing library: each backend's signing time against the write."""

    main_backend: dict[str, str]
    write_fsync_median_us: float
    signers: dict[str, dict[str, SignerOnBackend]]


class BackendRatio(MetricsNode):
    ratio: float
    cliffs_delta: float
    p_value: float


class MachineInfo(MetricsNode):
    cpu_count: int | None
    platform: str
    frequency_governor: str | None


class CostsMetrics(IntervalMetrics):
    """``costs_metrics.json``: Table I per operation id, the per-report primitives timed in C, signing per
    backend, the backend comparison, the harness overhead, the machine and which backends it has."""

    table1: dict[str, OperationCost]
    native_per_report: dict[str, NativeCost]
    sign_by_backend: dict[str, dict[str, BackendSign]]
    backend_comparison: dict[str, BackendRatio]
    backend_comparison_by_algorithm: dict[str, dict[str, BackendRatio]]
    table1_python: dict[str, OperationCost]
    symmetric_c_variants: dict[str, OperationCost]
    reference_operations: dict[str, ReferenceOperation]
    library_dependent: LibraryDependent
    empty_call_overhead_ns: float
    cpu_model: str | None
    machine: MachineInfo
    backends_available: dict[str, str]
    backends_absent: dict[str, str]
    raw_samples: RawSource
