"""The device_origin stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, RawSource, StageMetrics


class AuditLevels(MetricsNode):
    """Cold-auditor µs per report at one checkpoint interval k, per audit level (Fig. 5)."""

    log_only_us: float
    log_checkpoint_us: float
    log_inclusion_us: float
    mac_recheck_us: float
    chain_in_order_us: float
    chain_independent_us: float
    in_order_with_mac_us: float
    independent_with_mac_us: float
    origin_in_order_us: float
    origin_independent_us: float
    device_signature_us: float


class ControllerTags(MetricsNode):
    one_tag_us: float
    two_tag_us: float
    difference_us: float
    cliffs_delta: float


class Prover(MetricsNode):
    second_tag_us: float
    chain_us_per_report: float
    extra_us_per_report: float


class DisclosureDelay(MetricsNode):
    max_records: float
    mean_records: float
    max_seconds: float


class Samples(MetricsNode):
    """How many trials the numbers rest on (each row's n): the auditor's per k, the controller's one- vs two-tag
    comparison, the prover's."""

    auditor_trials: int
    controller_trials: int
    prover_trials: int
    prover_reports: int


class DeviceOriginMetrics(StageMetrics):
    samples: Samples
    auditor: dict[str, AuditLevels]
    in_order_with_mac_us: float
    in_order_traversal_us: float
    in_order_max_over_min: float
    independent_traversal_us: dict[str, float]
    independent_largest_over_smallest_k: float
    k_range: list[int]
    controller_tags: ControllerTags
    prover: Prover
    disclosure_delay: dict[str, DisclosureDelay]
    report_rate_hz: float
    controller_path: str
    controller_path_reason: str
    controller_path_requested: str
    device_path: str
    auditor_path: str
    cpu_model: str | None
    raw_samples: RawSource
