"""The control_cycle stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource, Sanity


class Percentiles(MetricsNode):
    p50: float
    p99: float
    p999: float
    max: float


class AddedCost(MetricsNode):
    """Execution time a configuration adds over the baseline: median difference and its interval."""

    median: float
    ci: list[float]


class Configuration(MetricsNode):
    """One Fig. 6 configuration: scan response time percentiles and deadline misses over its cycles."""

    label: str
    cycles: int
    p50_us: float
    p99_us: float
    p999_us: float
    max_us: float
    deadline_misses: int
    wakeup_us: Percentiles
    execution_us: Percentiles


class MedianRange(MetricsNode):
    low: float
    high: float


class TagCosts(MetricsNode):
    one_tag: float
    two_tags_chain: float


class ScanCosts(TagCosts):
    scan: float


class Scheduling(MetricsNode):
    cpu: int | None
    policies: list[str]
    realtime_obtained: bool
    fifo_errors: list[str]
    pinned: bool
    off_target_cycles: int
    steal_ms: dict[str, float | None]


class ControlCycleMetrics(IntervalMetrics):
    host: str
    period_us: float
    deadline_us: float
    cycles_total: int
    configurations_measured: int
    deadline_misses_total: int
    median_range_us: MedianRange
    max_response_us: float
    execution_median_range_us: MedianRange
    wakeup_median_range_us: MedianRange
    max_execution_us: float
    added_execution_us: dict[str, AddedCost]
    configurations: dict[str, Configuration]
    per_scan_cost_us: ScanCosts
    evidence_us: TagCosts
    second_tag_and_chain_us: float | None
    per_scan_cost_scans: dict[str, int]
    rounds: int
    sanity: Sanity
    evidence_back_to_back_us: TagCosts
    scheduling: Scheduling
    cpu_model: str | None
    clock_read_ns: float
    raw_samples: RawSource
