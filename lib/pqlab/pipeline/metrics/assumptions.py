"""The assumptions stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, RawSource, StageMetrics


class AssumptionSet(MetricsNode):
    """The transport headlines under one assumption set (channel rule, ACK loss, or one further change)."""

    ratio_min: float | None
    ratio_max: float | None
    spurious_2hop: float | None
    spurious_4hop: float | None
    d3_4hop_heavy_ipv6_completion: float | None
    d3_4hop_heavy_ipv6_median_s: float | None
    d3_4hop_heavy_block_completion: float | None
    sed_max_failure_rate: float | None
    sed_scenarios_with_failures: int | None
    sed_failures_in_Sigma3: float | None


class Bound(MetricsNode):
    """The slack bound at one hop count: Eq. 2's expected spurious resends and the largest ratio they allow."""

    eq2_expected_total: float
    slack_s: float
    t_clean_ipv6_s: float
    t_clean_block_s: float
    t_max_s: float
    ratio_ceiling: float


class LossFree(MetricsNode):
    sigma2_per_hop_s: float
    sigma3_per_hop_s: float
    device_compute_s: float
    controller_compute_s: float


class AssumptionsMetrics(StageMetrics):
    runs_per_scenario: int
    sets: dict[str, AssumptionSet]
    bound: dict[str, dict[str, Bound]]
    loss_free: dict[str, LossFree]
    raw_samples: RawSource
