"""Intervals (at ``transport.confidence``) for the §VI headline numbers, from the grid's own runs, and the model
parameters the run used.

The report judges a simulated number by whether the paper's value lies inside this run's interval, so every
number it reads gets one here: a median's percentile bootstrap (per scenario, from ``summarise``); a ratio or
difference of two medians the conservative interval their two bootstrap intervals allow (the ratio of the ends);
a minimum or maximum over cells the interval its cells' intervals allow (the true minimum lies between the
smallest low end and the smallest high end); a mean's bootstrap; a failure rate's exact binomial
(Clopper–Pearson) interval. Counts of scenarios with failures are compared as the expected count in a run of the
paper's size (``target_runs``): between the sums over scenarios of 1 - (1 - p)^N at each end of p's interval.
Pure computation on the grid table and its summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from pqlab.transport.bounds import timers
from pqlab.transport.config import TransportParams
from pqlab.transport.model import MESSAGES


def binomial_ci(failures: int, runs: int, confidence: float) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval of a failure probability."""
    if runs <= 0:
        return float("nan"), float("nan")
    ci = stats.binomtest(int(failures), int(runs)).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def _row(summary: pd.DataFrame, config: str, hops: int, loss: str, transport: str | Sequence[str],
         sleepy: bool = False) -> pd.Series | None:
    transports = [transport] if isinstance(transport, str) else list(transport)
    rows = summary[(summary["config"] == config) & (summary["hops"] == hops) & (summary["loss"] == loss)
                   & summary["transport"].isin(transports) & (summary["sleepy"] == sleepy)]
    return rows.iloc[0] if len(rows) else None


def _finite(*values: float | None) -> bool:
    return all(v is not None and np.isfinite(v) and v > 0 for v in values)


def ratio_interval(num: pd.Series | None, den: pd.Series | None) -> tuple[float | None, float | None, float | None]:
    """(ratio of medians, low, high): the low end over the high end and the high end over the low end."""
    if num is None or den is None or not _finite(num["median_s"], den["median_s"]):
        return None, None, None
    ratio = num["median_s"] / den["median_s"]
    if not _finite(num["median_lo_s"], num["median_hi_s"], den["median_lo_s"], den["median_hi_s"]):
        return float(ratio), None, None
    return float(ratio), float(num["median_lo_s"] / den["median_hi_s"]), float(num["median_hi_s"] / den["median_lo_s"])


def _span(prefix: str, cells: list[tuple[float, float | None, float | None]]) -> dict:
    """Min and max over cells with the interval each end's cells allow."""
    ok = [c for c in cells if c[0] is not None]
    out: dict = {f"{prefix}_cells_with_value": len(ok)}
    for end, pick in (("min", min), ("max", max)):
        out[f"{prefix}_{end}"] = pick(c[0] for c in ok) if ok else None
        lows, highs = [c[1] for c in ok if c[1] is not None], [c[2] for c in ok if c[2] is not None]
        full = len(lows) == len(ok) and len(highs) == len(ok) and ok
        out[f"{prefix}_{end}_lo"] = pick(lows) if full else None
        out[f"{prefix}_{end}_hi"] = pick(highs) if full else None
    return out


def bootstrap_ci(values: np.ndarray, statistic, resamples: int, confidence: float,
                 seed: int) -> tuple[float | None, float | None]:
    """Percentile-bootstrap interval of ``statistic`` (np.mean, np.median) of ``values`` (None without values)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None, None
    if data.size == 1 or np.ptp(data) == 0:
        return float(data[0]), float(data[0])
    boot = stats.bootstrap((data,), statistic, n_resamples=resamples, confidence_level=confidence,
                           method="percentile", rng=np.random.default_rng(seed))
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def expected_with_failures(rows: pd.DataFrame, target_runs: int, confidence: float) -> tuple[float, float]:
    """Interval of the expected number of scenarios with at least one failure in ``target_runs`` runs each."""
    lo = hi = 0.0
    for r in rows.itertuples():
        p_lo, p_hi = binomial_ci(int(r.failures), int(r.runs), confidence)
        lo += 1.0 - (1.0 - p_lo) ** target_runs
        hi += 1.0 - (1.0 - p_hi) ** target_runs
    return lo, hi


def _names(codes: pd.Series) -> dict[str, int]:
    counts = codes.value_counts()
    return {MESSAGES[int(c)] if 0 <= int(c) < len(MESSAGES) else f"message {int(c)}": int(n)
            for c, n in sorted(counts.items())}


def headline_intervals(table: pd.DataFrame, summary: pd.DataFrame, params: TransportParams, target_runs: int) -> dict:
    """The intervals (``params.confidence``, ``params.bootstrap_resamples``), cell counts and scopes of the §VI
    headline numbers of one variant's grid."""
    roles, resamples, confidence = params.figure_configs, params.bootstrap_resamples, params.confidence
    quiet, noisy = params.figure_scenarios["quiet"], params.figure_scenarios["interference"]
    d3, c5 = roles.get("drop_in", ""), roles.get("smallest", "")
    out: dict = {"target_runs": target_runs}
    losses = sorted(summary["loss"].unique())
    # D3 IPv6 / block at 3-4 hops, every loss scenario ("1.8 to 2.6 times ... with or without interference")
    cells = []
    for h in params.ratio_hops:
        for loss in losses:
            ratio, lo, hi = ratio_interval(_row(summary, d3, h, loss, "ipv6"), _row(summary, d3, h, loss, "block"))
            out[f"drop_in_ratio_{h}hop_{loss}_lo"], out[f"drop_in_ratio_{h}hop_{loss}_hi"] = lo, hi
            cells.append((ratio, lo, hi))
    out["drop_in_ratio_3to4hop_cells"] = len(cells)
    out.update(_span("drop_in_ratio_3to4hop", cells))
    # C5 IPv6 / block under heavy Wi-Fi at every hop count ("7 to 9 % faster at all hop counts")
    small = []
    for h in params.hops:
        ratio, lo, hi = ratio_interval(_row(summary, c5, h, noisy, "ipv6"), _row(summary, c5, h, noisy, "block"))
        out[f"smallest_ratio_ipv6_block_{h}hop_heavy_lo"], out[f"smallest_ratio_ipv6_block_{h}hop_heavy_hi"] = lo, hi
        small.append((ratio, lo, hi))
    out["smallest_ratio_ipv6_block_heavy_cells"] = len(small)
    out.update(_span("smallest_ratio_ipv6_block_heavy", small))
    spurious = summary[(summary["config"] == c5) & (summary["loss"] == quiet) & (summary["transport"] == "ipv6")
                       & ~summary["sleepy"]]
    out["smallest_spurious_none_max"] = float(spurious["mean_spurious"].max()) if len(spurious) else None
    # D3 spurious retransmissions with IPv6 fragmentation, no interference (Fig. 2c)
    for i, h in enumerate((2, 4)):
        mine = table[(table["config"] == d3) & (table["hops"] == h) & (table["loss"] == quiet)
                     & (table["transport"] == "ipv6") & ~table["sleepy"]]
        out[f"drop_in_spurious_{h}hop_none_lo"], out[f"drop_in_spurious_{h}hop_none_hi"] = bootstrap_ci(
            mine["spurious"].to_numpy(), np.mean, resamples, confidence, params.seed + 7919 * (i + 1))
    # D3 under heavy Wi-Fi by transport and hop count (Fig. 2a: "from two hops on it is the slowest")
    by_hop = {}
    for h in params.hops:
        medians = {}
        for transport in ("ipv6", "block", "pull"):
            row = _row(summary, d3, h, noisy, transport)
            medians[transport] = float(row["median_s"]) if row is not None and _finite(row["median_s"]) else None
        by_hop[f"{h}hop"] = medians
    out["drop_in_heavy_median_s"] = by_hop
    # radio time at one hop without interference
    for i, role in enumerate(("classical", "drop_in", "smallest", "key_exchange")):
        name = roles.get(role, "")
        mine = table[(table["config"] == name) & (table["hops"] == 1) & (table["loss"] == quiet) & ~table["sleepy"]
                     & table["transport"].isin(["datagram", "block"]) & table["ok"]]
        mine = mine[mine["transport"] == mine["transport"].iloc[0]] if len(mine) else mine
        lo, hi = bootstrap_ci((mine["device_tx_ms"] + mine["device_rx_ms"]).to_numpy(), np.median, resamples,
                              confidence, params.seed + 104729 * (i + 1))
        out[f"radio_1hop_none_{role}_lo_ms"], out[f"radio_1hop_none_{role}_hi_ms"] = lo, hi
    # pull segmentation vs block transfer over every segmented scenario
    keys = ["config", "hops", "loss", "sleepy"]
    pull = summary[summary["transport"] == "pull"].set_index(keys).add_suffix("_pull")
    block = summary[summary["transport"] == "block"].set_index(keys).add_suffix("_block")
    both = pull.join(block, how="inner")
    diff = (both["median_s_pull"] / both["median_s_block"] - 1.0) * 100.0
    diff_lo = (both["median_lo_s_pull"] / both["median_hi_s_block"] - 1.0) * 100.0
    diff_hi = (both["median_hi_s_pull"] / both["median_lo_s_block"] - 1.0) * 100.0
    valid = diff.notna() & diff_lo.notna() & diff_hi.notna()
    diff, diff_lo, diff_hi = diff[valid], diff_lo[valid], diff_hi[valid]
    out["pull_vs_block_median_lo_pct"] = float(diff_lo.median()) if len(diff) else None
    out["pull_vs_block_median_hi_pct"] = float(diff_hi.median()) if len(diff) else None
    for end, pick in (("min", np.min), ("max", np.max)):
        out[f"pull_vs_block_{end}_lo_pct"] = float(pick(diff_lo)) if len(diff) else None
        out[f"pull_vs_block_{end}_hi_pct"] = float(pick(diff_hi)) if len(diff) else None
    out["pull_faster_scenarios_lo"] = int((diff_hi < 0).sum())
    out["pull_faster_scenarios_hi"] = int((diff_lo < 0).sum())
    out["pull_vs_block_max_sleepy"] = bool(diff.idxmax()[3]) if len(diff) else None
    # sleepy devices, IPv6 fragmentation, heavy Wi-Fi
    sed = summary[summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == noisy)]
    sed_runs = table[table["sleepy"] & (table["transport"] == "ipv6") & (table["loss"] == noisy) & ~table["ok"]]
    out["sed_ipv6_heavy_failures_by_message"] = _names(sed_runs["failed_message"])
    out["sed_ipv6_heavy_failures"] = int(sed["failures"].sum())
    for key in ("max_failure_config", "max_failure_hops", "max_failure_rate_lo", "max_failure_rate_hi",
                "drop_in_max_failure_rate", "drop_in_max_failure_rate_lo", "drop_in_max_failure_rate_hi",
                "scenarios_with_failures_lo", "scenarios_with_failures_hi"):
        out[f"sed_ipv6_heavy_{key}"] = None  # no sleepy scenario with oversized messages in this grid
    if len(sed):
        worst = sed.loc[sed["failure_rate"].idxmax()]
        out["sed_ipv6_heavy_max_failure_config"] = str(worst["config"])
        out["sed_ipv6_heavy_max_failure_hops"] = int(worst["hops"])
        cis = [binomial_ci(int(r.failures), int(r.runs), confidence) for r in sed.itertuples()]
        out["sed_ipv6_heavy_max_failure_rate_lo"] = max(c[0] for c in cis)
        out["sed_ipv6_heavy_max_failure_rate_hi"] = max(c[1] for c in cis)
        mine = sed[sed["config"] == d3]
        rates = [(float(r.failure_rate), *binomial_ci(int(r.failures), int(r.runs), confidence))
                 for r in mine.itertuples()]
        out["sed_ipv6_heavy_drop_in_max_failure_rate"] = max(r[0] for r in rates) if rates else None
        out["sed_ipv6_heavy_drop_in_max_failure_rate_lo"] = max(r[1] for r in rates) if rates else None
        out["sed_ipv6_heavy_drop_in_max_failure_rate_hi"] = max(r[2] for r in rates) if rates else None
        lo, hi = expected_with_failures(sed, target_runs, confidence)
        out["sed_ipv6_heavy_scenarios_with_failures_lo"], out["sed_ipv6_heavy_scenarios_with_failures_hi"] = lo, hi
    always = summary[~summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == noisy)
                     & (summary["hops"] == max(params.hops))]
    out["always_on_ipv6_heavy_far_scenarios"] = len(always)
    out["always_on_ipv6_heavy_far_scenarios_with_failures"] = int((always["failures"] > 0).sum())
    lo, hi = expected_with_failures(always, target_runs, confidence)
    out["always_on_ipv6_heavy_far_with_failures_lo"], out["always_on_ipv6_heavy_far_with_failures_hi"] = lo, hi
    # segmented transports over the oversized configurations
    for transport in ("block", "pull"):
        rows = summary[summary["transport"] == transport]
        failures, runs = int(rows["failures"].sum()), int(rows["runs"].sum())
        out[f"{transport}_failure_rate"] = failures / runs if runs else None
        out[f"{transport}_failure_rate_lo"], out[f"{transport}_failure_rate_hi"] = binomial_ci(failures, runs,
                                                                                               confidence)
        out[f"{transport}_scenarios"] = len(rows)
    return out


def model_parameters(params: TransportParams) -> dict:
    """The Table II parameters (and Eq. 1's first timers) this run's Thread model used."""
    f = params.framing
    device_first = timers(params, sender_is_device=True)[0]
    controller_first = timers(params, sender_is_device=False)[0]
    return {
        "max_app_payload_bytes": f.max_app_payload, "ipv6_mtu_bytes": f.ip6_fragment_payload + 48,
        "mac_overhead_bytes": f.mac_overhead_bytes, "max_psdu_bytes": f.max_psdu_bytes,
        "byte_time_us": params.byte_time_us, "direct_retries": params.mac_max_frame_retries,
        "indirect_attempts": params.indirect_attempts, "reassembly_timeout_ms": params.reassembly_timeout_ms,
        "mrp_device_interval_ms": params.mrp_device_interval_ms,
        "mrp_controller_interval_ms": params.mrp_controller_interval_ms,
        "mrp_device_boost_ms": params.mrp_device_boost_ms, "standalone_ack_ms": params.standalone_ack_ms,
        "mrp_transmissions": params.mrp_transmissions, "mrp_base": params.mrp_base,
        "poll_interval_ms": params.poll_interval_ms, "controller_compute_ms": params.controller_compute_ms,
        "segment_payload_bytes": params.segment_payload, "segment_header_bytes": params.segment_header_bytes,
        "device_first_timer_s": [device_first[0], device_first[0] + device_first[1]],
        "controller_first_timer_s": [controller_first[0], controller_first[0] + controller_first[1]],
        "scenarios": {name: {"p_good": s.p_good, "p_bad": s.p_bad, "fraction_bad": s.fraction_bad,
                             "mean_burst_ms": s.mean_burst_ms} for name, s in sorted(params.scenarios.items())},
    }
