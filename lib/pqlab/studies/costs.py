"""Stage ``costs`` (AMORT-V1 §V-C): Table I, Fig. 2 and the backend comparison from ``measure_costs``' samples."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import costs as cost_analysis
from pqlab.figures.costs import fig2_costs
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.outputs import OutputSet, rounded
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource, validated
from pqlab.studies import measuring

STAGE = "costs"
RAW = registry.raw_spec(STAGE)


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


METRICS = CostsMetrics


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Summarise, compare, plot and write every output from data/raw/costs.parquet."""
    paths.check_writable(paths.derived, paths.amort_figs)
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    raw = frames["costs.parquet"]
    metadata = raw_provenance.analysis_metadata(raw_metadata, RAW, settings)
    stats = cost_analysis.summarise(raw, settings)
    comparison = cost_analysis.compare_all_backends(raw, [settings.costs.comparison_signer, *settings.costs.signers])
    table = cost_analysis.table1(stats)
    headline = cost_analysis.metrics(stats, comparison, metadata) | {
        "cpu_model": metadata["cpu_model"], "profile": settings.profile, "confidence": settings.costs.confidence,
        "raw_samples": raw_provenance.source(raw_metadata),
        "machine": {key: metadata[key] for key in ("cpu_count", "platform", "frequency_governor")},
        # which post-quantum backends the measuring machine has (REPORT.md says "liboqs absent", not a blank)
        "backends_available": metadata["backends_available"], "backends_absent": metadata["backends_absent"]}
    headline = validated(CostsMetrics, headline)
    figure = fig2_costs(stats[stats["in_table1"]], metadata["cpu_model"])
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "costs_stats.parquet", stats, metadata)
        out.parquet(paths.derived / "costs_backend_comparison.parquet", comparison, metadata)
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


run = measuring.runner(STAGE, analyse)
