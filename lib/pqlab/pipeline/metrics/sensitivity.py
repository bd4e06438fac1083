"""The sensitivity stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource


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
