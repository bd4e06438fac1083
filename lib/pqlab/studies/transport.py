"""Stage ``transport`` (PQ-CASE §IV-C, §VI): from ``measure_transport``'s grids (the paper's model and the
source_accurate variant), Fig. 2, Table I's time columns, sleepy-device failures, radio time, the headline metrics."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from pydantic import ConfigDict, Field

from pqlab.figures.transport import fig2_transport
from pqlab.params import StudyParams, ThreadParams
from pqlab.paths import ProjectPaths
from pqlab.studies import raw_samples
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.thread import analysis, intervals
from pqlab.thread.grid import VARIANTS, fitting_configs, variant_params
from pqlab.thread.summary import summarise
from pqlab.typed_metrics import MetricsNode, RawSource, StageMetrics, validated

STAGE = "transport"
RAW = raw_samples.spec(STAGE)


class Table1Times(MetricsNode):
    """Table I's time columns for one configuration: median (s), its 95 % interval, runs, failures."""

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
    """The §VI headline numbers of one model variant's grid, with their 95 % intervals and scopes. Entries named
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


class TransportMetrics(StageMetrics):
    """``thread_metrics.json``: the paper's model and the source_accurate variant, and the model parameters."""

    model: ModelParameters
    paper: Variant
    source_accurate: Variant
    raw_samples: RawSource


METRICS = TransportMetrics


def suffix(variant: str) -> str:
    """The file-name suffix of a model variant's raw and derived files."""
    return "" if variant == "paper" else f"_{variant}"


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Summarise both variants' grids (with the configurations they were simulated with), plot and write."""
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    params = settings.thread
    frames, raw_metadata = raw_samples.read(RAW, settings, paths)
    configs = {name: tuple(sizes) for name, sizes in raw_metadata["configs"].items()}
    compute = raw_metadata["device_compute_ms"]
    compute = None if compute is None else {name: tuple(ms) for name, ms in compute.items()}
    metadata = raw_samples.analysis_metadata(raw_metadata, RAW, settings)
    summaries: dict[str, pd.DataFrame] = {}
    metrics: dict = {"profile": settings.profile, "model": intervals.model_parameters(params),
                     "raw_samples": raw_samples.source(raw_metadata)}
    for variant in VARIANTS:
        vp, table = variant_params(params, variant), frames[f"thread_grid{suffix(variant)}.parquet"]
        summary = analysis.one_label_per_fitting_config(
            summarise(table, params.bootstrap_resamples, params.confidence, settings.seed,
                      progress=progress, desc=f"{variant} statistics"), fitting_configs(configs, vp))
        summaries[variant] = summary
        metrics[variant] = analysis.headline(summary, vp)
        metrics[variant].update(intervals.headline_intervals(
            table, summary, vp, ThreadParams.model_fields["runs"].default, params.bootstrap_resamples))
        # as run: with fitting_under_every_transport the grid counts B and C1 under three labels (the paper's
        # 432,000), while the summary and the headline numbers count them once
        metrics[variant].update(scenarios=int(table["point_id"].nunique()), handshakes=len(table))
        metrics[variant]["channel_priority"] = analysis.channel_priority_sensitivity(
            summary, frames[f"thread_channel_rule{suffix(variant)}.parquet"], vp, configs)
    paper = summaries["paper"]
    roles, scen = params.figure_configs, params.figure_scenarios
    figure = fig2_transport(paper, roles.get("drop_in", ""), roles.get("smallest", ""),
                            roles.get("classical", ""), interference=scen["interference"])
    times = analysis.table1_times(paper, params)
    sed = paper[paper["sleepy"]][["config", "hops", "loss", "transport", "runs", "failures", "failure_rate",
                                  "failed_in"]]
    radio = paper[(paper["hops"] == 1) & (paper["loss"] == scen["quiet"]) & ~paper["sleepy"]][
        ["config", "transport", "median_radio_ms"]]
    plot_times, plot_spurious = analysis.figure_table(paper, params)
    with OutputSet(paths, STAGE) as out:
        for variant in VARIANTS:
            out.parquet(paths.derived / f"thread_summary{suffix(variant)}.parquet", summaries[variant], metadata)
        out.figure(figure, paths.case_figs / "fig2_transport")
        out.table(times, paths.case_figs / "table1_case_times", markdown=times.round(3))
        out.text(paths.case_figs / "sed_failures.csv", sed.to_csv(index=False))
        out.text(paths.case_figs / "radio_time.csv", radio.to_csv(index=False))
        out.text(paths.plots / "fig2_transport_times.csv", plot_times.to_csv(index=False))   # dvc plots
        out.text(paths.plots / "fig2_transport_spurious.csv", plot_spurious.to_csv(index=False))
        hops = f"{min(params.ratio_hops)}-{max(params.ratio_hops)}"
        out.metrics(paths.derived / "thread_metrics.json", validated(TransportMetrics, analysis.jsonable(metrics)),
                    label=f"{roles.get('drop_in', 'drop-in')} IPv6/block {hops} hops max",
                    key="paper.drop_in_ratio_3to4hop_max", unit="x")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig2_transport": figure}, tables={"table1_case_times": times},
                       metrics=metrics, files=out.written,
                       data={"summaries": summaries, "sed_failures": sed, "radio_time": radio,
                             "grid_seconds": raw_metadata["grid_seconds"],
                             "handshakes": {v: len(frames[f"thread_grid{suffix(v)}.parquet"]) for v in VARIANTS}})


run = raw_samples.runner(STAGE, analyse)
