"""The scaling stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource


class Table3Row(MetricsNode):
    """One Table III identity count: controller cost, checkpoint size, bytes per report, verification, memory."""

    us_per_report: float
    us_per_report_lo: float     # the median's percentile-bootstrap interval over trials (at `confidence`)
    us_per_report_hi: float
    checkpoint_octets: int
    checkpoint_kib: float
    bytes_per_report: float
    verify_ms: float
    rss_peak_mib: float
    fleet_rss_octets_per_identity: float
    state_octets_per_identity: int
    trials: int


class ByteParts(MetricsNode):
    record: int
    tags: int
    report: int
    span: int
    close: int
    signature: int
    checkpoint_fixed: int


class Budget(MetricsNode):
    budget_octets: int
    identities_within_budget: int
    first_identities_over_budget: int
    checkpoint_octets_at_limit: int
    checkpoint_octets_over_limit: int


class Isolation(MetricsNode):
    others: int
    others_attesting: int
    attesting_fraction: float
    revoked_next_report: str
    rekeyed: int
    rekey_us_per_identity: float
    rekey_ms_fleet: float
    rekey_fleet_extrapolated: bool


class ReplayBacklog(MetricsNode):
    merge_us_per_record: float
    total_ms: float


class Replay(MetricsNode):
    by_backlog: dict[str, ReplayBacklog]
    us_per_record: float
    us_per_record_with_checkpoint: float
    one_window_records: int
    one_window_merge_ms: float
    one_window_total_ms: float


class RekeyParts(MetricsNode):
    """Re-keying one identity split into its parts (medians), their sums, and the end-to-end time beside them."""

    parts_us: dict[str, float]
    sums_us: dict[str, float]
    sums: dict[str, list[str]]
    end_to_end_controller_us: float | None
    end_to_end_rest_us: float | None
    identities: int
    kem_backend: str
    signature_backend: str
    method: str


class ScalingMetrics(IntervalMetrics):
    """``scaling_metrics.json``: Table III per identity count, the byte parts, the size budget, isolation and
    re-keying per fleet, partition replay, and the controller path that ran."""

    table3: dict[str, Table3Row]
    bytes: ByteParts
    budget: Budget
    isolation: dict[str, Isolation]
    rekey_us_per_identity: float | None
    rekey_parts: RekeyParts
    replay: Replay
    controller_path: str
    controller_path_reason: str
    controller_path_requested: str
    wire_format: str
    variant: str
    signature_backend: str
    cpu_model: str | None
    raw_samples: RawSource
