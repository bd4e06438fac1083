"""Stage ``sensitivity`` (PQ-CASE §VII): Fig. 4 a-c and Fig. 5 on the thread model, sizes from the CASE size model."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import transport as analysis
from pqlab.analysis.sensitivity_intervals import sweep_intervals
from pqlab.figures.sensitivity import fig4_sensitivity, fig5_segment_size
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.sensitivity import SensitivityMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring
from pqlab.transport import sweeps
from pqlab.transport.case_inputs import table1_inputs

STAGE = "sensitivity"
RAW = registry.raw_spec(STAGE)


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Per-cell statistics, the Fig. 4 and Fig. 5 tables and figures, and the metrics from the simulated runs."""
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    sens, thread = settings.sensitivity, settings.transport
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    table = frames["sensitivity_runs.parquet"]
    names = sorted({thread.figure_configs[role] for role in {sens.role, *(sc.role for sc in sens.segments.scenarios)}})
    configs, compute = table1_inputs(names, paths.input(settings.inputs.cycles_file))
    _, cells = sweeps.sweep_points(sens, thread, configs, compute, sens.runs)  # which cell each point is
    stats = sweeps.cell_stats(table, cells)
    threshold = sens.success_threshold
    ipv6 = sweeps.interference_table(stats, "ipv6", threshold)
    pull = sweeps.interference_table(stats, "pull", threshold)
    timers = sweeps.timer_table(stats, threshold)
    segments = sweeps.segment_table(stats, sens.segments.reference_payload, threshold)
    metrics = {"profile": settings.profile, "confidence": thread.confidence,
               **sweeps.metrics(sens, thread.ratio_hops, ipv6, pull, timers, segments),
               **sweep_intervals(table, stats, sens, thread.ratio_hops, thread.bootstrap_resamples, thread.confidence,
                                 settings.seed),
               "raw_samples": raw_provenance.source(raw_metadata)}
    config = thread.figure_configs[sens.role]
    fig4 = fig4_sensitivity(ipv6, pull, timers, config=config, hops=sens.interference.hops,
                            scenario=sens.timers.scenario, runs=sens.runs, threshold=threshold)
    fig5 = fig5_segment_size(segments, reference=sens.segments.reference_payload, runs=sens.runs)
    metadata = raw_provenance.analysis_metadata(raw_metadata, RAW, settings)
    heat = sweeps.heatmap_long(ipv6, pull)
    timer_lines = timers.assign(series=[f"controller {i} ms / boost {b} ms" for i, b in zip(
        timers["controller_interval_ms"], timers["device_boost_ms"], strict=True)])[["series", "hops", "ratio"]]
    segment_lines = segments.rename(columns={"scenario_label": "series"})[["series", "segment_payload", "relative"]]
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "sensitivity_cells.parquet", stats, metadata)
        out.figure(fig4, paths.case_figs / "fig4_sensitivity")
        out.figure(fig5, paths.case_figs / "fig5_segment_size")
        out.table(ipv6, paths.case_figs / "fig4a_ipv6_block", markdown=ipv6.round(3))
        out.table(pull, paths.case_figs / "fig4b_pull_block", markdown=pull.round(3))
        out.table(timers, paths.case_figs / "fig4c_timers", markdown=timers.round(3))
        out.table(segments, paths.case_figs / "fig5_segment_size", markdown=segments.round(3))
        out.text(paths.plots / "fig4ab_heatmaps.csv", heat.to_csv(index=False))       # dvc plots
        out.text(paths.plots / "fig4c_timers.csv", timer_lines.to_csv(index=False))
        out.text(paths.plots / "fig5_segment_size.csv", segment_lines.to_csv(index=False))
        out.metrics(paths.derived / "sensitivity_metrics.json",
                    validated(SensitivityMetrics, analysis.jsonable(metrics)),
                    label="IPv6/block max, 25 cells", key="ipv6_block.max", unit="x")
    plt.close(fig4)
    plt.close(fig5)
    return StudyResult(STAGE, figures={"fig4_sensitivity": fig4, "fig5_segment_size": fig5},
                       tables={"fig4a_ipv6_block": ipv6, "fig4b_pull_block": pull, "fig4c_timers": timers,
                               "fig5_segment_size": segments},
                       metrics=metrics, files=out.written, data={"cells": stats})


run = measuring.runner(STAGE, analyse)
