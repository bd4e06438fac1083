"""The unstated-assumption study's analysis: one assumption set's headline numbers from its simulated runs, the slack
bound per hop count under both acknowledgement semantics and the drop-in configuration's loss-free per-hop times
(analytic, from the thread model's own estimator)."""

from __future__ import annotations

import pandas as pd

from pqlab.analysis.transport import drop_in_ratios
from pqlab.transport import bounds
from pqlab.transport.config import TransportParams
from pqlab.transport.model import MESSAGES


def slack_table(thread: TransportParams, sizes, compute, hops: tuple[int, ...], tail: float) -> pd.DataFrame:
    """The slack bound at each hop count under both acknowledgement semantics (estimated, on arrival)."""
    rows = []
    for on_arrival in (False, True):
        switches = thread.switches.model_copy(update={"piggyback_ack_on_arrival": on_arrival})
        model = thread.model_copy(update={"switches": switches})
        for h in hops:
            b = bounds.slack_bound(bounds.loss_free(sizes, compute, model, h, "ipv6"),
                                   bounds.loss_free(sizes, compute, model, h, "block"), model, tail)
            rows.append({"hops": h, "ack_semantics": b["ack_semantics"], "eq2_expected_total": b["eq2_expected_total"],
                         "eq2_counts": "/".join(f"{c:.2f}" for c in b["counts_expected"]),
                         "counts_kept": "/".join(str(k) for k in b["counts_within"]),
                         "t_clean_ipv6_s": b["t_clean_ipv6_s"], "t_clean_block_s": b["t_clean_block_s"],
                         "t_max_s": b["t_max_s"], "slack_s": b["slack_s"],
                         "slack_by_message": ", ".join(f"{k} {v:.2f}" for k, v in b["slack_by_message_s"].items()),
                         "ratio_ceiling": b["ratio_ceiling"]})
    return pd.DataFrame(rows)


def loss_free_per_hop(thread: TransportParams, sizes, compute, hops: tuple[int, ...]) -> dict:
    """§VI: the drop-in configuration's loss-free Sigma2 and Sigma3 transfer times per hop with IPv6 fragmentation
    (the model's own estimator) at each hop count of the bound."""
    out = {}
    for h in hops:
        lf = bounds.loss_free(sizes, compute, thread, h, "ipv6")
        out[f"{h}hop"] = {"sigma2_per_hop_s": lf.message_s[1] / h, "sigma3_per_hop_s": lf.message_s[2] / h,
                          "device_compute_s": lf.compute_s[0], "controller_compute_s": lf.compute_s[1]}
    return out


def _value(summary: pd.DataFrame, column: str, **where) -> float | None:
    rows = summary
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if len(rows) != 1 or pd.isna(rows[column].iloc[0]):
        return None
    return float(rows[column].iloc[0])


def headline(summary: pd.DataFrame, thread: TransportParams) -> dict:
    """One set's numbers (``summary``: ``summary.counts_and_medians`` of its rows): IPv6/block ratio range at
    ``ratio_hops`` over every loss scenario, spurious retransmissions at 2 and 4 hops without interference, the
    drop-in configuration at 4 hops under interference, and sleepy-device failures with IPv6 fragmentation."""
    d3 = thread.figure_configs["drop_in"]
    quiet, noisy = thread.figure_scenarios["quiet"], thread.figure_scenarios["interference"]
    ratios = drop_in_ratios(summary, d3, [h for h in thread.ratio_hops if h in set(summary["hops"])])
    out: dict = {"ratio_min": ratios["drop_in_ratio_3to4hop_min"], "ratio_max": ratios["drop_in_ratio_3to4hop_max"],
                 "ratio_scenarios": ratios["drop_in_ratio_3to4hop_scenarios"]}
    for key, value in ratios.items():
        if key.endswith(f"hop_{quiet}") and key.startswith("drop_in_ratio_"):
            out[key.removeprefix("drop_in_").replace(f"_{quiet}", "_none")] = value
    d3_hops = set(summary.loc[(summary["config"] == d3) & ~summary["sleepy"], "hops"])
    for hops in sorted(d3_hops - set(thread.ratio_hops)):  # below the ratio hops, e.g. 2
        ip = _value(summary, "median_s", config=d3, hops=hops, loss=quiet, sleepy=False, transport="ipv6")
        blk = _value(summary, "median_s", config=d3, hops=hops, loss=quiet, sleepy=False, transport="block")
        out[f"ratio_{hops}hop_none"] = ip / blk if ip and blk else None
    always = dict(config=d3, sleepy=False)
    for hops in sorted(d3_hops):
        out[f"d3_{hops}hop_none_ipv6_median_s"] = _value(summary, "median_s", hops=hops, loss=quiet,
                                                         transport="ipv6", **always)
    for hops in (2, 4):
        out[f"spurious_{hops}hop"] = _value(summary, "mean_spurious", hops=hops, loss=quiet, transport="ipv6", **always)
    for transport in ("ipv6", "block"):
        rate = _value(summary, "failure_rate", hops=4, loss=noisy, transport=transport, **always)
        out[f"d3_4hop_heavy_{transport}_completion"] = None if rate is None else 1.0 - rate
        out[f"d3_4hop_heavy_{transport}_median_s"] = _value(summary, "median_s", hops=4, loss=noisy,
                                                            transport=transport, **always)
    sed = summary[summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == noisy)]
    failed = sorted({int(m) for text in sed["failed_in"] for m in text.split(",") if m})
    out["sed_scenarios"] = len(sed)
    out["sed_scenarios_with_failures"] = int((sed["failures"] > 0).sum())
    out["sed_max_failure_rate"] = float(sed["failure_rate"].max()) if len(sed) else None
    out["sed_failed_in"] = "+".join(MESSAGES[m] if 0 <= m < len(MESSAGES) else str(m) for m in failed)
    total = int(sed["failures"].sum())
    for m, name in enumerate(MESSAGES):  # where the sleepy device's failures happen (the paper: all in Sigma3)
        out[f"sed_failures_in_{name}"] = float(sed[f"failed_{m}"].sum() / total) if total else None
    return out
