"""The PQ-CASE transport analysis (§VI): grid variants and the headline numbers of a summarised grid.

Pure computation: ``pqlab.studies.transport`` runs the grids, calls these, and writes the outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pqlab.analysis.transport_summary import summarise
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import SINGLE_LABEL
from pqlab.transport.model import MESSAGES


def one_label_per_fitting_config(summary: pd.DataFrame, fitting: set[str]) -> pd.DataFrame:
    """The summary with one ``datagram`` row per scenario of a configuration whose messages all fit.

    With ``fitting_under_every_transport`` such a configuration ran under all three transport labels with the
    identical plan (identical handshakes); the figures and headline numbers count it once, as the paper does
    (e.g. its 416 segmented scenarios).
    """
    mine = summary["config"].isin(fitting)
    out = summary[~mine | summary["transport"].isin([SINGLE_LABEL, "ipv6"])].copy()
    out.loc[out["config"].isin(fitting), "transport"] = SINGLE_LABEL
    return out.reset_index(drop=True)


def figure_table(summary: pd.DataFrame, params: TransportParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 2's plotted numbers as two small long tables for ``dvc plots`` (one ``series`` per line): median
    handshake time by hops under the interference scenario for the drop-in, smallest and classical configurations
    by transport (always-on device), and the drop-in configuration's mean spurious retransmissions with IPv6
    fragmentation by hops, one series per loss scenario."""
    noisy = params.figure_scenarios["interference"]
    rows = summary[~summary["sleepy"]]
    names = [params.figure_configs.get(role, "") for role in ("drop_in", "smallest", "classical")]
    times = rows[(rows["loss"] == noisy) & rows["config"].isin(names)].sort_values(["config", "transport", "hops"])
    times = times.assign(series=times["config"] + " " + times["transport"])[["series", "hops", "median_s", "p90_s"]]
    d3 = params.figure_configs.get("drop_in", "")
    spur = rows[(rows["config"] == d3) & (rows["transport"] == "ipv6")].sort_values(["loss", "hops"])
    spurious = spur.assign(series=spur["loss"])[["series", "hops", "mean_spurious"]]
    return times.reset_index(drop=True), spurious.reset_index(drop=True)


def _value(summary: pd.DataFrame, column: str, config: str, hops: int, loss: str, transport: str,
           sleepy: bool = False) -> float | None:
    if column not in summary:  # a summary without bootstrap intervals (counts_and_medians) has no median_lo_s
        return None
    row = summary[(summary["config"] == config) & (summary["hops"] == hops) & (summary["loss"] == loss)
                  & (summary["transport"] == transport) & (summary["sleepy"] == sleepy)]
    if len(row) != 1 or pd.isna(row[column].iloc[0]):
        return None
    return float(row[column].iloc[0])


def _failed_in(summary: pd.DataFrame, config: str, hops: int, loss: str, transports: Sequence[str],
               sleepy: bool = False) -> str | None:
    """The messages that exhausted MRP in one scenario, by name ("Sigma2, Sigma3"); None when none failed."""
    row = summary[(summary["config"] == config) & (summary["hops"] == hops) & (summary["loss"] == loss)
                  & summary["transport"].isin(transports) & (summary["sleepy"] == sleepy)]
    codes = sorted({int(c) for text in row["failed_in"] for c in str(text).split(",") if c.strip()})
    return ", ".join(MESSAGES[c] if 0 <= c < len(MESSAGES) else f"message {c}" for c in codes) or None


def _time_with_failures(summary: pd.DataFrame, stem: str, config: str, hops: int, loss: str,
                        transports: Sequence[str]) -> dict:
    """``<stem>_s`` (median over completed handshakes), ``<stem>_failure_rate`` and ``<stem>_failed_in``: the
    last two say why ``<stem>_s`` is empty when no handshake of the scenario completed."""
    transport = next((t for t in transports if _value(summary, "failure_rate", config, hops, loss, t) is not None),
                     transports[0])
    return {f"{stem}_s": _value(summary, "median_s", config, hops, loss, transport),
            f"{stem}_lo_s": _value(summary, "median_lo_s", config, hops, loss, transport),
            f"{stem}_hi_s": _value(summary, "median_hi_s", config, hops, loss, transport),
            f"{stem}_runs": _value(summary, "runs", config, hops, loss, transport),
            f"{stem}_failure_rate": _value(summary, "failure_rate", config, hops, loss, transport),
            f"{stem}_failed_in": _failed_in(summary, config, hops, loss, (transport,))}


def headline(summary: pd.DataFrame, params: TransportParams) -> dict:
    """The §VI numbers, from one variant's summary (None where a configuration is absent).

    Configuration roles (``figure_configs``) and scenario roles (``figure_scenarios``: quiet, interference)
    come from params; metric keys name the roles (quiet, "heavy"), as the paper does.
    """
    roles = params.figure_configs
    quiet, noisy = params.figure_scenarios["quiet"], params.figure_scenarios["interference"]
    d3, c5 = roles.get("drop_in", ""), roles.get("smallest", "")
    med = lambda *a: _value(summary, "median_s", *a)  # noqa: E731
    out: dict = {"scenarios": len(summary), "handshakes": int(summary["runs"].sum()),
                 "runs_per_scenario": int(summary["runs"].max()) if len(summary) else 0}
    for transport in ("ipv6", "block", "pull"):
        out.update(_time_with_failures(summary, f"drop_in_1hop_none_{transport}", d3, 1, quiet, (transport,)))
        out.update(_time_with_failures(summary, f"drop_in_3hop_none_{transport}", d3, 3, quiet, (transport,)))
        out.update(_time_with_failures(summary, f"drop_in_4hop_heavy_{transport}", d3, 4, noisy, (transport,)))
    for hops in params.ratio_hops:
        ip, blk = med(d3, hops, noisy, "ipv6"), med(d3, hops, noisy, "block")
        out[f"drop_in_ratio_ipv6_block_{hops}hop_heavy"] = ip / blk if ip and blk else None
    # §VI: for the smallest configuration "IPv6 fragmentation is 7 to 9% faster than block transfer at all hop
    # counts" (Fig. 2b, heavy Wi-Fi)
    smallest = {}
    for hops in params.hops:
        ip_s, blk_s = med(c5, hops, noisy, "ipv6"), med(c5, hops, noisy, "block")
        out[f"smallest_ratio_ipv6_block_{hops}hop_heavy"] = smallest[hops] = ip_s / blk_s if ip_s and blk_s else None
    ratios = [r for r in smallest.values() if r is not None]
    out["smallest_ratio_ipv6_block_heavy_hops"] = len(ratios)
    out["smallest_ratio_ipv6_block_heavy_min"] = min(ratios) if ratios else None
    out["smallest_ratio_ipv6_block_heavy_max"] = max(ratios) if ratios else None
    out["smallest_ipv6_faster_hops"] = sum(r < 1.0 for r in ratios)
    # Table I's time columns (block transfer, or one datagram where every message fits; always-on device)
    fits = ("block", "datagram")
    out["table1_times"] = {config: _time_with_failures(summary, "1hop_none", config, 1, quiet, fits)
                           | _time_with_failures(summary, "3hop_heavy", config, 3, noisy, fits)
                           for config in sorted(summary["config"].unique())}
    # §IX-B: hybrid key exchange with a cached device chain "costs 70 ms at one hop" (vs the classical handshake)
    classical = out["table1_times"].get(roles.get("classical", ""), {}).get("1hop_none_s")
    key_exchange = out["table1_times"].get(roles.get("key_exchange", ""), {}).get("1hop_none_s")
    out["key_exchange_cost_1hop_none_ms"] = ((key_exchange - classical) * 1000.0
                                             if classical is not None and key_exchange is not None else None)
    ends = [out["table1_times"].get(roles.get(role, ""), {}).get(f"1hop_none_{end}_s")
            for role, end in (("key_exchange", "lo"), ("classical", "hi"), ("key_exchange", "hi"), ("classical", "lo"))]
    out["key_exchange_cost_1hop_none_lo_ms"] = (ends[0] - ends[1]) * 1000.0 if None not in ends[:2] else None
    out["key_exchange_cost_1hop_none_hi_ms"] = (ends[2] - ends[3]) * 1000.0 if None not in ends[2:] else None
    out.update(drop_in_ratios(summary, d3, params.ratio_hops))
    for hops in (2, 4):
        out[f"drop_in_spurious_{hops}hop_none"] = _value(summary, "mean_spurious", d3, hops, quiet, "ipv6")
    keys = ["config", "hops", "loss", "sleepy"]
    pull = summary[summary["transport"] == "pull"].set_index(keys)["median_s"]
    block = summary[summary["transport"] == "block"].set_index(keys)["median_s"]
    diff = ((pull / block - 1.0) * 100.0).dropna()
    out["pull_vs_block_scenarios"] = len(diff)
    out["pull_vs_block_median_pct"] = float(diff.median()) if len(diff) else None
    out["pull_vs_block_min_pct"] = float(diff.min()) if len(diff) else None
    out["pull_vs_block_max_pct"] = float(diff.max()) if len(diff) else None
    out["pull_faster_scenarios"] = int((diff < 0).sum())
    sed = summary[summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == noisy)]
    out["sed_ipv6_heavy_scenarios"] = len(sed)
    out["sed_ipv6_heavy_scenarios_with_failures"] = int((sed["failures"] > 0).sum())
    out["sed_ipv6_heavy_max_failure_rate"] = float(sed["failure_rate"].max()) if len(sed) else None
    segmented = summary[summary["transport"].isin(["block", "pull"])]
    for transport in ("block", "pull"):
        rows = segmented[segmented["transport"] == transport]
        out[f"{transport}_failures"] = int(rows["failures"].sum())
        out[f"{transport}_handshakes"] = int(rows["runs"].sum())
    for role in ("classical", "drop_in", "smallest", "key_exchange"):
        name = roles.get(role, "")
        rows = summary[(summary["config"] == name) & (summary["hops"] == 1) & (summary["loss"] == quiet)
                       & ~summary["sleepy"] & summary["transport"].isin(["datagram", "block"])]
        out[f"radio_1hop_none_{role}_ms"] = float(rows["median_radio_ms"].iloc[0]) if len(rows) else None
    return out


def drop_in_ratios(summary: pd.DataFrame, config: str, hops: Sequence[int] = (3, 4)) -> dict:
    """Median time with IPv6 fragmentation / with block transfer for ``config`` (always-on device) at each of
    ``hops`` and every loss scenario, and their min and max (the paper's "1.8 to 2.6 times" at 3-4 hops)."""
    out: dict = {}
    for h in hops:
        for loss in sorted(summary["loss"].unique()):
            ip, blk = _value(summary, "median_s", config, h, loss, "ipv6"), _value(summary, "median_s", config, h,
                                                                                   loss, "block")
            if ip and blk:
                out[f"drop_in_ratio_{h}hop_{loss}"] = ip / blk
    values = list(out.values())
    # scenarios where no IPv6-fragmented handshake completed have no ratio; they are counted here
    out["drop_in_ratio_3to4hop_scenarios"] = len(values)
    out["drop_in_ratio_3to4hop_min"] = min(values) if values else None
    out["drop_in_ratio_3to4hop_max"] = max(values) if values else None
    return out


def channel_priority_sensitivity(summary: pd.DataFrame, rerun: pd.DataFrame, params: TransportParams,
                                  configs: Mapping[str, Sequence[int]]) -> dict:
    """The drop-in IPv6/block ratios at 3-4 hops under both channel-arbitration rules (``channel_priority``).

    The configured rule's numbers come from ``summary``; the other rule's from ``rerun``, the simulated runs of
    just those scenarios under it (:func:`pqlab.transport.grid.channel_rule_points`).
    """
    d3 = params.figure_configs.get("drop_in", "")
    hops = tuple(h for h in params.hops if h in params.ratio_hops)
    out: dict = {"configured": params.channel_priority}
    if d3 not in configs or not hops or rerun.empty:
        return out
    out[params.channel_priority] = drop_in_ratios(summary, d3, hops)
    other = "message_age" if params.channel_priority == "node_arrival" else "node_arrival"
    out[other] = drop_in_ratios(summarise(rerun, params.bootstrap_resamples, params.confidence, params.seed), d3, hops)
    return out


def table1_times(summary: pd.DataFrame, params: TransportParams) -> pd.DataFrame:
    """Table I time columns: block transfer (one datagram where everything fits), always-on device."""
    quiet, noisy = params.figure_scenarios["quiet"], params.figure_scenarios["interference"]
    rows = summary[summary["transport"].isin(["block", "datagram"]) & ~summary["sleepy"]]
    one = rows[(rows["hops"] == 1) & (rows["loss"] == quiet)].set_index("config")["median_s"]
    three = rows[(rows["hops"] == 3) & (rows["loss"] == noisy)].set_index("config")["median_s"]
    return pd.DataFrame({"config": one.index, "time_1hop_none_s": one.to_numpy(),
                         "time_3hop_heavy_s": three.reindex(one.index).to_numpy()})


def jsonable(value):
    """Metrics with NumPy scalars turned into plain Python numbers (for JSON)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value
