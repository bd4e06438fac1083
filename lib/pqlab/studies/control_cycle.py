"""Stage ``control_cycle`` (AMORT-V1 §V-G): Fig. 6 and per-scan cost from ``measure_control_cycle``'s samples."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import control_cycle
from pqlab.errors import warn
from pqlab.figures.control_cycle import fig6_scan
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.control_cycle import ControlCycleMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "control_cycle"
RAW = registry.raw_spec(STAGE)


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Summarise every configuration, draw Fig. 6, write the summary, tables and metrics."""
    paths.check_writable(paths.derived, paths.amort_figs)
    cfg = settings.control_cycle
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    samples = frames["control_cycle_samples.parquet"]
    runs = raw_metadata["runs"]
    metadata = raw_provenance.analysis_metadata(raw_metadata, RAW, settings)
    summary = control_cycle.summarise(samples, cfg)
    cost = control_cycle.per_scan_cost(samples, cfg)
    warm = {int(tags): us for tags, us in raw_metadata["back_to_back_evidence_us"].items()}
    cost["back_to_back_evidence_p50_us"] = [warm.get(int(t), 0.0) for t in cost["tags"]]
    added = control_cycle.added_cost(samples, cfg, settings.seed)
    if len(added):
        over_scan = added[added["over"] == 0]
        cost = cost.merge(over_scan[["tags", "added_us", "added_lo_us", "added_hi_us"]], on="tags", how="left")
    extra = {key: raw_metadata[key] for key in ("cpu_model", "clock_read_ns")}
    extra["host"] = raw_metadata["host_note"]
    headline = validated(ControlCycleMetrics, control_cycle.metrics(summary, cost, runs, settings, extra, added)
                         | {"raw_samples": raw_provenance.source(raw_metadata)})
    for failure in headline["sanity"]["failed"]:
        warn(f"control_cycle: sanity check failed: {failure['cause']}")
    fig6 = samples[samples["configuration"].isin(list(cfg.configurations))]
    figure = fig6_scan(fig6, summary, control_cycle.deadline_ns(cfg) / 1000, raw_metadata["cpu_model"])
    table = control_cycle.summary_table(summary)
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "control_cycle_summary.parquet", summary, metadata)
        out.table(table, paths.amort_figs / "fig6_scan_summary")
        out.table(cost.round(3), paths.amort_figs / "control_cycle_scan_cost")
        out.figure(figure, paths.amort_figs / "fig6_scan")
        out.metrics(paths.derived / "control_cycle_metrics.json", headline, label="largest scan response",
                    key="max_response_us", unit="us")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig6_scan": figure},
                       tables={"fig6_scan_summary": table, "control_cycle_scan_cost": cost}, metrics=headline,
                       files=out.written, data={"samples": samples, "summary": summary, "runs": runs})


run = measuring.runner(STAGE, analyse)
