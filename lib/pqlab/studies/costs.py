"""Stage ``costs`` (AMORT-V1 §V-C): Table I, Fig. 2 and the backend comparison from ``measure_costs``' samples."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import costs as cost_analysis
from pqlab.figures.costs import fig2_costs
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.costs import CostsMetrics
from pqlab.pipeline.outputs import OutputSet, rounded
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "costs"
RAW = registry.raw_spec(STAGE)


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
