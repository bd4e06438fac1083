"""Stage ``costs`` (AMORT-V1 §V-C): time every protocol operation; Table I, Fig. 2, the backend comparison."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab import crypto, machine
from pqlab.bench import costs
from pqlab.figures.costs import fig2_costs
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet, rounded, scratch_dir
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "costs"


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
    """A Table I symmetric row timed in a C loop (the paper's method): median and p99 with 95 % intervals."""

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


class CostsMetrics(StageMetrics):
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


METRICS = CostsMetrics


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Measure, summarise, plot and write every output; nothing is written until all measurements are done."""
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    with scratch_dir(paths, STAGE) as scratch:  # the fsync probe's file; removed even if the run is killed
        raw, extra = costs.measure(settings, scratch, progress=progress)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends=extra["backends"]) | extra
    stats = costs.summarise(raw, settings)
    comparison = costs.compare_all_backends(raw, [settings.costs.comparison_signer, *settings.costs.signers])
    table = costs.table1(stats)
    statuses = crypto.backends()
    headline = costs.metrics(stats, comparison, metadata) | {
        "cpu_model": metadata["cpu_model"], "profile": settings.profile,
        "machine": {key: metadata[key] for key in ("cpu_count", "platform", "frequency_governor")},
        # which post-quantum backends this machine has (REPORT.md says "liboqs absent" rather than a blank)
        "backends_available": {s.name: s.version or "unknown" for s in statuses if s.available},
        "backends_absent": {s.name: s.reason for s in statuses if not s.available}}
    headline = validated(CostsMetrics, headline)
    figure = fig2_costs(stats[stats["in_table1"]], metadata["cpu_model"])
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "costs.parquet", raw, metadata)
        out.parquet(paths.derived / "costs_stats.parquet", stats, metadata)
        out.parquet(paths.derived / "costs_backend_comparison.parquet", comparison, metadata)
        # times to three decimals in the markdown tables; p-values keep their significant digits
        out.table(table, paths.amort_figs / "table1_costs", markdown=rounded(table, decimals=3, keep=("p_value",)))
        out.table(comparison, paths.amort_figs / "table1_backend_comparison",
                  markdown=rounded(comparison, decimals=3, keep=("p_value",)))
        out.figure(figure, paths.amort_figs / "fig2_costs")
        signer = settings.costs.signers[0]
        out.metrics(paths.derived / "costs_metrics.json", headline, label=f"{signer} sign median",
                    key=f"table1.sign_{signer}.median_us", unit="us")
    plt.close(figure)  # saved; notebooks display the returned object once instead of twice
    return StudyResult(STAGE, figures={"fig2_costs": figure},
                       tables={"table1_costs": table, "table1_backend_comparison": comparison},
                       metrics=headline, files=out.written, data={"raw": raw, "stats": stats, "metadata": metadata})
