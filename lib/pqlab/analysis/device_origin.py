"""AMORT-V1 §V-F from the device-origin raw samples: the auditor table per k, one vs two tags, the prover's extra
work, the disclosure delay and the stage's metrics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pqlab.stats import compare


def delay_summary(delays: pd.DataFrame, rate_hz: float) -> pd.DataFrame:
    """Per k: the most and the mean records a report waits before its key may be disclosed, and in seconds."""
    out = delays.groupby("k")["delay_records"].agg(max_records="max", mean_records="mean").reset_index()
    out["max_seconds"] = out["max_records"] / rate_hz
    out["mean_seconds"] = out["mean_records"] / rate_hz
    return out


def auditor_table(auditor: pd.DataFrame, delays: pd.DataFrame, components: list[str]) -> pd.DataFrame:
    """Per k: the median µs per report of every audit component (in ``components``' order), in-order + MAC, and the
    disclosure delay."""
    wide = auditor.pivot_table(index="k", columns="component", values="us_per_report", aggfunc="median")
    wide = wide[[c for c in components if c in wide.columns]]
    wide["in_order_with_mac"] = wide["chain_in_order"] + wide["mac_recheck"]
    wide["independent_with_mac"] = wide["chain_independent"] + wide["mac_recheck"]
    wide.columns = [f"{c}_us" for c in wide.columns]
    return wide.reset_index().merge(delays, on="k", how="left")


def tags_table(tags: pd.DataFrame, samples: pd.DataFrame, builds: pd.DataFrame) -> pd.DataFrame:
    """One-tag vs two-tag: controller µs per report (medians over rounds) and the prover's per-report work."""
    one = tags[tags["tags"] == 1]["us_per_report"].to_numpy()
    two = tags[tags["tags"] == 2]["us_per_report"].to_numpy()
    test = compare(two, one)
    one_dev = samples["one_tag_ns"].to_numpy() / 1000.0
    two_dev = samples["two_tag_ns"].to_numpy() / 1000.0
    chain = float(builds["chain_us_per_report"].median())
    second = float(np.median(two_dev) - np.median(one_dev))
    rows = [
        {"side": "controller", "quantity": "µs per report, one tag", "value": float(np.median(one)), "n": len(one)},
        {"side": "controller", "quantity": "µs per report, two tags", "value": float(np.median(two)), "n": len(two)},
        {"side": "controller", "quantity": "two tags − one tag, µs per report",
         "value": float(np.median(two) - np.median(one)), "n": len(two)},
        {"side": "controller", "quantity": "Cliff's δ (two vs one tag)", "value": test.cliffs_delta, "n": len(two)},
        {"side": "controller", "quantity": "Mann–Whitney p (two vs one tag)", "value": test.p_value, "n": len(two)},
        {"side": "prover", "quantity": "µs per one-tag report", "value": float(np.median(one_dev)),
         "n": len(one_dev)},
        {"side": "prover", "quantity": "µs per two-tag report", "value": float(np.median(two_dev)),
         "n": len(two_dev)},
        {"side": "prover", "quantity": "second tag, µs per report (difference of medians)", "value": second,
         "n": len(two_dev)},
        {"side": "prover", "quantity": "chain set-up spread over its reports, µs per report", "value": chain,
         "n": len(builds)},
        {"side": "prover", "quantity": "extra work per report: second tag + chain step, µs", "value": second + chain,
         "n": len(two_dev)},
    ]
    return pd.DataFrame(rows)


def metrics(table: pd.DataFrame, tags: pd.DataFrame, provenance: dict[str, Any], rate: float) -> dict[str, Any]:
    """Headline numbers for REPORT.md (keys k<interval>)."""
    by_k = table.set_index("k")
    values = dict(zip(tags["quantity"], tags["value"], strict=True))
    in_order = by_k["chain_in_order_us"]
    independent = by_k["chain_independent_us"]
    return {
        **provenance,
        "auditor": {f"k{k}": {c: round(float(v), 4) for c, v in row.items() if c.endswith("_us")}
                    for k, row in by_k.iterrows()},
        "in_order_with_mac_us": round(float(by_k["in_order_with_mac_us"].median()), 4),
        "in_order_traversal_us": round(float(in_order.median()), 4),
        "in_order_max_over_min": round(float(in_order.max() / in_order.min()), 3),
        "independent_traversal_us": {f"k{k}": round(float(v), 3) for k, v in independent.items()},
        "independent_largest_over_smallest_k": round(float(independent.iloc[-1] / independent.iloc[0]), 3),
        "k_range": [int(by_k.index.min()), int(by_k.index.max())],
        "controller_tags": {"one_tag_us": round(values["µs per report, one tag"], 4),
                            "two_tag_us": round(values["µs per report, two tags"], 4),
                            "difference_us": round(values["two tags − one tag, µs per report"], 4),
                            "cliffs_delta": round(values["Cliff's δ (two vs one tag)"], 4)},
        "prover": {"second_tag_us": round(values["second tag, µs per report (difference of medians)"], 4),
                   "chain_us_per_report": round(values["chain set-up spread over its reports, µs per report"], 4),
                   "extra_us_per_report": round(values["extra work per report: second tag + chain step, µs"], 4)},
        "disclosure_delay": {f"k{int(r.k)}": {"max_records": int(r.max_records), "max_seconds": r.max_seconds,
                                              "mean_records": r.mean_records}
                             for r in table.itertuples()},
        "report_rate_hz": rate,
    }
