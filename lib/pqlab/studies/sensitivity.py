"""Stage ``sensitivity`` (PQ-CASE §VII): Fig. 4 a-c and Fig. 5 on the thread model, sizes from the CASE size model."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.figures.sensitivity import fig4_sensitivity, fig5_segment_size
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource, validated
from pqlab.studies import measuring
from pqlab.thread import analysis, sweeps
from pqlab.thread.case_inputs import table1_inputs
from pqlab.thread.sweep_intervals import sweep_intervals

STAGE = "sensitivity"
RAW = registry.raw_spec(STAGE)


class Cell(MetricsNode):
    """One Fig. 4 cell: the ratio of median times to block transfer with its bootstrap interval, the worse
    transport's failure rate and success-rate interval, whether the figure marks it, mean spurious resends."""

    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    failure_rate: float
    success_lo: float
    success_hi: float
    marked: bool
    spurious: float
    runs: int
    occupancy_pct: float | None = None
    burst_ms: float | None = None
    controller_interval_ms: int | None = None
    device_boost_ms: int | None = None
    hops: int | None = None


class Span(MetricsNode):
    """The smallest and largest value over a group of cells, each with the interval its cells allow."""

    cells: int
    min: float | None = None
    min_lo: float | None = None
    min_hi: float | None = None
    max: float | None = None
    max_lo: float | None = None
    max_hi: float | None = None
    cells_total: int | None = None
    settings: int | None = None


class IPv6Block(MetricsNode):
    min: float | None
    max: float | None
    cells: int
    cells_with_ratio: int
    cells_marked: int
    max_failure_rate_long_bursts: float | None
    max_failure_rate: float | None


class PullBlock(MetricsNode):
    max_short_bursts: float | None
    min_long_busy: float | None
    max_long_busy: float | None
    cells_marked: int


class Timers(MetricsNode):
    min_far: float | None
    max_far: float | None
    far_hops: list[int]
    settings: int
    ratio: dict[str, dict[str, float | None]]


class SegmentSpan(MetricsNode):
    slower_min_pct: float | None
    slower_max_pct: float | None


class SensitivityMetrics(IntervalMetrics):
    """``sensitivity_metrics.json``: §VII's numbers as its sentences group the cells, every Fig. 4 cell with its
    intervals, and the ranges with the cells they span."""

    runs_per_cell: int
    raw_samples: RawSource
    ipv6_block: IPv6Block
    pull_block: PullBlock
    timers: Timers
    segments: dict[str, SegmentSpan]
    fig4a: dict[str, Cell]
    fig4b: dict[str, Cell]
    fig4c: dict[str, Cell]
    fig4a_range: Span
    fig4a_long_burst_failure: Span
    fig4b_short_range: Span
    fig4b_long_busy_range: Span
    fig4c_far_range: Span
    segments_range: dict[str, Span]


METRICS = SensitivityMetrics


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Per-cell statistics, the Fig. 4 and Fig. 5 tables and figures, and the metrics from the simulated runs."""
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    sens, thread = settings.sensitivity, settings.thread
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
