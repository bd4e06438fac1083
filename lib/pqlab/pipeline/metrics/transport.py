"""The typed shape of ``transport_metrics.json`` (the transport stage's metrics; validated by the study before writing,
by the report before reading)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource


class Table1Times(MetricsNode):
    """Table I's time columns for one configuration: median (s), its interval, runs, failures."""

    one_hop_s: float | None = Field(alias="1hop_none_s")
    one_hop_lo_s: float | None = Field(alias="1hop_none_lo_s")
    one_hop_hi_s: float | None = Field(alias="1hop_none_hi_s")
    one_hop_runs: float | None = Field(alias="1hop_none_runs")
    one_hop_failure_rate: float | None = Field(alias="1hop_none_failure_rate")
    one_hop_failed_in: str | None = Field(alias="1hop_none_failed_in")
    three_hop_s: float | None = Field(alias="3hop_heavy_s")
    three_hop_lo_s: float | None = Field(alias="3hop_heavy_lo_s")
    three_hop_hi_s: float | None = Field(alias="3hop_heavy_hi_s")
    three_hop_runs: float | None = Field(alias="3hop_heavy_runs")
    three_hop_failure_rate: float | None = Field(alias="3hop_heavy_failure_rate")
    three_hop_failed_in: str | None = Field(alias="3hop_heavy_failed_in")


class Variant(MetricsNode):
    """The §VI headline numbers of one model variant's grid, with their intervals and scopes. Entries named
    from params (a ratio per hop count and loss scenario: ``drop_in_ratio_<h>hop_<loss>``, ``..._lo``, ``..._hi``;
    ``smallest_ratio_ipv6_block_<h>hop_heavy``) are kept as typed extras; report rows read the declared fields."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, float | int | None] = Field(init=False)

    always_on_ipv6_heavy_far_scenarios: int
    always_on_ipv6_heavy_far_scenarios_with_failures: int
    always_on_ipv6_heavy_far_with_failures_hi: float | None
    always_on_ipv6_heavy_far_with_failures_lo: float | None
    block_failure_rate: float | None
    block_failure_rate_hi: float | None
    block_failure_rate_lo: float | None
    block_failures: int
    block_handshakes: int
    block_scenarios: int
    channel_priority: dict[str, str | dict[str, float | int | None]]
    drop_in_1hop_none_block_failed_in: str | None
    drop_in_1hop_none_block_failure_rate: float | None
    drop_in_1hop_none_block_hi_s: float | None
    drop_in_1hop_none_block_lo_s: float | None
    drop_in_1hop_none_block_runs: float | None
    drop_in_1hop_none_block_s: float | None
    drop_in_1hop_none_ipv6_failed_in: str | None
    drop_in_1hop_none_ipv6_failure_rate: float | None
    drop_in_1hop_none_ipv6_hi_s: float | None
    drop_in_1hop_none_ipv6_lo_s: float | None
    drop_in_1hop_none_ipv6_runs: float | None
    drop_in_1hop_none_ipv6_s: float | None
    drop_in_1hop_none_pull_failed_in: str | None
    drop_in_1hop_none_pull_failure_rate: float | None
    drop_in_1hop_none_pull_hi_s: float | None
    drop_in_1hop_none_pull_lo_s: float | None
    drop_in_1hop_none_pull_runs: float | None
    drop_in_1hop_none_pull_s: float | None
    drop_in_3hop_none_block_failed_in: str | None
    drop_in_3hop_none_block_failure_rate: float | None
    drop_in_3hop_none_block_hi_s: float | None
    drop_in_3hop_none_block_lo_s: float | None
    drop_in_3hop_none_block_runs: float | None
    drop_in_3hop_none_block_s: float | None
    drop_in_3hop_none_ipv6_failed_in: str | None
    drop_in_3hop_none_ipv6_failure_rate: float | None
    drop_in_3hop_none_ipv6_hi_s: float | None
    drop_in_3hop_none_ipv6_lo_s: float | None
    drop_in_3hop_none_ipv6_runs: float | None
    drop_in_3hop_none_ipv6_s: float | None
    drop_in_3hop_none_pull_failed_in: str | None
    drop_in_3hop_none_pull_failure_rate: float | None
    drop_in_3hop_none_pull_hi_s: float | None
    drop_in_3hop_none_pull_lo_s: float | None
    drop_in_3hop_none_pull_runs: float | None
    drop_in_3hop_none_pull_s: float | None
    drop_in_4hop_heavy_block_failed_in: str | None
    drop_in_4hop_heavy_block_failure_rate: float | None
    drop_in_4hop_heavy_block_hi_s: float | None
    drop_in_4hop_heavy_block_lo_s: float | None
    drop_in_4hop_heavy_block_runs: float | None
    drop_in_4hop_heavy_block_s: float | None
    drop_in_4hop_heavy_ipv6_failed_in: str | None
    drop_in_4hop_heavy_ipv6_failure_rate: float | None
    drop_in_4hop_heavy_ipv6_hi_s: float | None
    drop_in_4hop_heavy_ipv6_lo_s: float | None
    drop_in_4hop_heavy_ipv6_runs: float | None
    drop_in_4hop_heavy_ipv6_s: float | None
    drop_in_4hop_heavy_pull_failed_in: str | None
    drop_in_4hop_heavy_pull_failure_rate: float | None
    drop_in_4hop_heavy_pull_hi_s: float | None
    drop_in_4hop_heavy_pull_lo_s: float | None
    drop_in_4hop_heavy_pull_runs: float | None
    drop_in_4hop_heavy_pull_s: float | None
    drop_in_heavy_median_s: dict[str, dict[str, float | None]]
    drop_in_ratio_3to4hop_cells: int
    drop_in_ratio_3to4hop_cells_with_value: int
    drop_in_ratio_3to4hop_max: float | None
    drop_in_ratio_3to4hop_max_hi: float | None
    drop_in_ratio_3to4hop_max_lo: float | None
    drop_in_ratio_3to4hop_min: float | None
    drop_in_ratio_3to4hop_min_hi: float | None
    drop_in_ratio_3to4hop_min_lo: float | None
    drop_in_ratio_3to4hop_scenarios: int
    drop_in_spurious_2hop_none: float | None
    drop_in_spurious_2hop_none_hi: float | None
    drop_in_spurious_2hop_none_lo: float | None
    drop_in_spurious_4hop_none: float | None
    drop_in_spurious_4hop_none_hi: float | None
    drop_in_spurious_4hop_none_lo: float | None
    handshakes: int
    key_exchange_cost_1hop_none_hi_ms: float | None
    key_exchange_cost_1hop_none_lo_ms: float | None
    key_exchange_cost_1hop_none_ms: float | None
    pull_failure_rate: float | None
    pull_failure_rate_hi: float | None
    pull_failure_rate_lo: float | None
    pull_failures: int
    pull_faster_scenarios: int
    pull_faster_scenarios_hi: int
    pull_faster_scenarios_lo: int
    pull_handshakes: int
    pull_scenarios: int
    pull_vs_block_max_hi_pct: float | None
    pull_vs_block_max_lo_pct: float | None
    pull_vs_block_max_pct: float | None
    pull_vs_block_max_sleepy: bool | None
    pull_vs_block_median_hi_pct: float | None
    pull_vs_block_median_lo_pct: float | None
    pull_vs_block_median_pct: float | None
    pull_vs_block_min_hi_pct: float | None
    pull_vs_block_min_lo_pct: float | None
    pull_vs_block_min_pct: float | None
    pull_vs_block_scenarios: int
    radio_1hop_none_classical_hi_ms: float | None
    radio_1hop_none_classical_lo_ms: float | None
    radio_1hop_none_classical_ms: float | None
    radio_1hop_none_drop_in_hi_ms: float | None
    radio_1hop_none_drop_in_lo_ms: float | None
    radio_1hop_none_drop_in_ms: float | None
    radio_1hop_none_key_exchange_hi_ms: float | None
    radio_1hop_none_key_exchange_lo_ms: float | None
    radio_1hop_none_key_exchange_ms: float | None
    radio_1hop_none_smallest_hi_ms: float | None
    radio_1hop_none_smallest_lo_ms: float | None
    radio_1hop_none_smallest_ms: float | None
    runs_per_scenario: int
    scenarios: int
    sed_ipv6_heavy_drop_in_max_failure_rate: float | None
    sed_ipv6_heavy_drop_in_max_failure_rate_hi: float | None
    sed_ipv6_heavy_drop_in_max_failure_rate_lo: float | None
    sed_ipv6_heavy_failures: int
    sed_ipv6_heavy_failures_by_message: dict[str, int]
    sed_ipv6_heavy_max_failure_config: str | None
    sed_ipv6_heavy_max_failure_hops: int | None
    sed_ipv6_heavy_max_failure_rate: float | None
    sed_ipv6_heavy_max_failure_rate_hi: float | None
    sed_ipv6_heavy_max_failure_rate_lo: float | None
    sed_ipv6_heavy_scenarios: int
    sed_ipv6_heavy_scenarios_with_failures: int
    sed_ipv6_heavy_scenarios_with_failures_hi: float | None
    sed_ipv6_heavy_scenarios_with_failures_lo: float | None
    smallest_ipv6_faster_hops: int
    smallest_ratio_ipv6_block_heavy_cells: int
    smallest_ratio_ipv6_block_heavy_cells_with_value: int
    smallest_ratio_ipv6_block_heavy_hops: int
    smallest_ratio_ipv6_block_heavy_max: float | None
    smallest_ratio_ipv6_block_heavy_max_hi: float | None
    smallest_ratio_ipv6_block_heavy_max_lo: float | None
    smallest_ratio_ipv6_block_heavy_min: float | None
    smallest_ratio_ipv6_block_heavy_min_hi: float | None
    smallest_ratio_ipv6_block_heavy_min_lo: float | None
    smallest_spurious_none_max: float | None
    table1_times: dict[str, Table1Times]
    target_runs: int


class Scenario(MetricsNode):
    p_good: float
    p_bad: float
    fraction_bad: float
    mean_burst_ms: float


class ModelParameters(MetricsNode):
    """The Table II parameters (and Eq. 1's first timers) the run's Thread model used."""

    max_app_payload_bytes: int
    ipv6_mtu_bytes: int
    mac_overhead_bytes: int
    max_psdu_bytes: int
    byte_time_us: int
    direct_retries: int
    indirect_attempts: int
    reassembly_timeout_ms: int
    mrp_device_interval_ms: int
    mrp_controller_interval_ms: int
    mrp_device_boost_ms: int
    standalone_ack_ms: int
    mrp_transmissions: int
    mrp_base: float
    poll_interval_ms: int
    controller_compute_ms: float
    segment_payload_bytes: int
    segment_header_bytes: int
    device_first_timer_s: list[float]
    controller_first_timer_s: list[float]
    scenarios: dict[str, Scenario]


class TransportMetrics(IntervalMetrics):
    """``transport_metrics.json``: the paper's model and the source_accurate variant, and the model parameters."""

    model: ModelParameters
    paper: Variant
    source_accurate: Variant
    raw_samples: RawSource
