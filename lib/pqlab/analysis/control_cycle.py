"""AMORT-V1 §V-G from the control-cycle loop's raw samples: response percentiles and deadline misses per
configuration, what evidence adds to a scan (bootstrap intervals), per-scan cost, the Fig. 6 table and metrics."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from pqlab.errors import CycleError
from pqlab.params import ControlCycleParams, StudyParams
from pqlab.raw_labels import SCAN_COST, VARIANTS
from pqlab.stats import level


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The Fig. 6 numbers as a table (µs): response, and its two parts — wake-up latency and execution time."""
    columns = {"label": "Configuration", "cycles": "Cycles", "evidence_cycles": "Evidence cycles",
               "p50_us": "p50 [µs]", "p99_us": "p99 [µs]", "p999_us": "p99.9 [µs]", "max_us": "Max [µs]",
               "deadline_misses": "Deadline misses", "latency_p50_us": "Wake-up p50 [µs]",
               "latency_p99_us": "Wake-up p99 [µs]", "latency_max_us": "Wake-up max [µs]",
               "execution_p50_us": "Execution p50 [µs]", "execution_p99_us": "Execution p99 [µs]",
               "execution_p999_us": "Execution p99.9 [µs]", "execution_max_us": "Execution max [µs]"}
    return summary[list(columns)].rename(columns=columns).round(3)


def _split(row: Any, prefix: str) -> dict[str, float]:
    return {name: round(getattr(row, f"{prefix}{name}_us"), 3) for name in ("p50", "p99", "p999", "max")}


def _second_tag(added: pd.DataFrame) -> float | None:
    """Median execution with two tags and the chain step minus with one tag, in the rotation run (§V-F's prover
    cost measured inside the scan loop)."""
    row = added[added["what"] == "second_tag_and_chain"] if len(added) else added
    return round(float(row["added_us"].iloc[0]), 3) if len(row) else None


def metrics(summary: pd.DataFrame, cost: pd.DataFrame, runs: list[dict[str, Any]], settings: StudyParams,
            extra: dict[str, Any], added: pd.DataFrame | None = None) -> dict[str, Any]:
    """Headline numbers: misses over all cycles, the median range, the maximum, per configuration (the response and
    its wake-up / execution split), per-scan cost and what evidence adds to a scan's execution."""
    cfg = settings.control_cycle
    by_tags = {0: "scan", 1: "one_tag", 2: "two_tags_chain"}
    added = added if added is not None else pd.DataFrame(columns=["what", "added_us", "added_lo_us", "added_hi_us"])
    return {
        "profile": settings.profile,
        "confidence": cfg.confidence,
        "period_us": cfg.period_us,
        "deadline_us": deadline_ns(cfg) / 1000,
        "cycles_total": int(summary["cycles"].sum()),
        "configurations_measured": len(summary),
        "deadline_misses_total": int(summary["deadline_misses"].sum()),
        "median_range_us": {"low": round(float(summary["p50_us"].min()), 3),
                            "high": round(float(summary["p50_us"].max()), 3)},
        "max_response_us": round(float(summary["max_us"].max()), 3),
        "configurations": {
            row.configuration: {"label": row.label, "cycles": int(row.cycles), "p50_us": round(row.p50_us, 3),
                                "p99_us": round(row.p99_us, 3), "p999_us": round(row.p999_us, 3),
                                "max_us": round(row.max_us, 3), "deadline_misses": int(row.deadline_misses),
                                "wakeup_us": _split(row, "latency_"), "execution_us": _split(row, "execution_")}
            for row in summary.itertuples()},
        # the response split: the host's timer wake-up latency apart from the scan's execution time, so the
        # AMORT-V1 cost added to a scan compares with Fig. 6 whatever this host's wake-up costs
        "execution_median_range_us": {"low": round(float(summary["execution_p50_us"].min()), 3),
                                      "high": round(float(summary["execution_p50_us"].max()), 3)},
        "wakeup_median_range_us": {"low": round(float(summary["latency_p50_us"].min()), 3),
                                   "high": round(float(summary["latency_p50_us"].max()), 3)},
        "max_execution_us": round(float(summary["execution_max_us"].max()), 3),
        "added_execution_us": {r.what: {"median": round(r.added_us, 3),
                                        "ci": [round(r.added_lo_us, 3), round(r.added_hi_us, 3)]}
                               for r in added.itertuples()},
        "per_scan_cost_us": {by_tags[int(r.tags)]: round(r.execution_p50_us, 3) for r in cost.itertuples()},
        "evidence_us": {by_tags[int(r.tags)]: round(r.evidence_p50_us, 3) for r in cost.itertuples() if r.tags},
        "second_tag_and_chain_us": _second_tag(added),
        "per_scan_cost_scans": {by_tags[int(r.tags)]: int(r.scans) for r in cost.itertuples()},
        "rounds": cfg.rounds,
        "sanity": sanity(summary, cost, added, settings.control_cycle.confidence),
        "evidence_back_to_back_us": {by_tags[int(r.tags)]: round(r.back_to_back_evidence_p50_us, 3)
                                     for r in cost.itertuples() if r.tags},
        "scheduling": {
            "cpu": runs[0]["cpu_requested"],
            "policies": sorted({r["policy_name"] for r in runs}),
            "realtime_obtained": all(r["realtime_obtained"] for r in runs),
            "fifo_errors": sorted({r["fifo_error"] for r in runs if r["fifo_error"]}),
            "pinned": all(r["affinity_is_target"] == 1 for r in runs),
            "off_target_cycles": sum(r["off_target_cycles"] for r in runs),
            "steal_ms": {r["configuration"]: r["steal_ms"] for r in runs},
        },
        **extra,
    }


def deadline_ns(cfg: ControlCycleParams) -> int:
    """The scan deadline: ``deadline_us``, or the period when it is not set."""
    return 1000 * (cfg.deadline_us if cfg.deadline_us is not None else cfg.period_us)


TAILS = (("p50", 50), ("p99", 99), ("p999", 99.9))


def _tails(values_ns: np.ndarray, prefix: str) -> dict[str, float]:
    us = np.asarray(values_ns, dtype=float) / 1000.0
    out = {f"{prefix}{name}_us": float(np.percentile(us, q)) for name, q in TAILS}
    out[f"{prefix}max_us"] = float(us.max())
    return out


def summarise(samples: pd.DataFrame, cfg: ControlCycleParams) -> pd.DataFrame:
    """Per configuration: cycles, response p50 / p99 / p99.9 / max (µs), deadline misses, and the response split
    into its two parts with the same percentiles: the timer wake-up latency (wake − scheduled release, the host's)
    and the execution time (scan + evidence, the work)."""
    limit = deadline_ns(cfg)
    rows = []
    fig6 = samples[samples["configuration"].isin(list(cfg.configurations))]
    for name, group in fig6.groupby("configuration", sort=False, observed=True):
        evid = group.loc[group["evidence"], "evidence_ns"].to_numpy() / 1000.0
        rows.append({
            "configuration": name, "label": cfg.configurations[name].label, "cycles": len(group),
            "evidence_cycles": int(group["evidence"].sum()),
            **_tails(group["response_ns"].to_numpy(), ""),
            "deadline_misses": int((group["response_ns"] > limit).sum()),
            **_tails(group["latency_ns"].to_numpy(), "latency_"),
            **_tails(group["execution_ns"].to_numpy(), "execution_"),
            "evidence_p50_us": float(np.median(evid)) if len(evid) else float("nan"),
        })
    return pd.DataFrame(rows)


def _rotation(samples: pd.DataFrame) -> pd.DataFrame:
    """The per-scan cost run's cycles (variant 0: scan only, 1: one tag, 2: two tags + chain step)."""
    rotation = samples[samples["configuration"] == SCAN_COST]
    if rotation.empty:
        raise CycleError("the samples hold no per-scan cost rotation run; rerun stage measure_control_cycle",
                         field="control_cycle_samples.parquet")
    return rotation


def _median_difference(mine: np.ndarray, base: np.ndarray, resamples: int, confidence: float,
                       seed: int) -> tuple[float, float, float]:
    """median(mine) - median(base) with a percentile-bootstrap interval (scipy, both samples resampled)."""
    boot = stats.bootstrap((mine, base), lambda a, b, axis: np.median(a, axis=axis) - np.median(b, axis=axis),
                           n_resamples=resamples, confidence_level=confidence, method="percentile",
                           vectorized=True, rng=np.random.default_rng(seed))
    return (float(np.median(mine) - np.median(base)), float(boot.confidence_interval.low),
            float(boot.confidence_interval.high))


ADDED = ((1, 0, "one_tag"), (2, 0, "two_tags_chain"), (2, 1, "second_tag_and_chain"))


def added_cost(samples: pd.DataFrame, cfg: ControlCycleParams, seed: int) -> pd.DataFrame:
    """What evidence adds to a scan's execution time, from the rotation run (the three variants interleaved cycle
    by cycle): one tag and two tags + chain over the scan alone, and the second tag + chain over one tag; median
    differences with percentile-bootstrap intervals (``cfg.bootstrap_resamples``, ``cfg.confidence``). Independent
    of the host's wake-up latency."""
    rotation = _rotation(samples)
    us = {v: rotation.loc[rotation["variant"] == v, "execution_ns"].to_numpy() / 1000.0 for v in VARIANTS}
    rows = []
    for mine, base, what in ADDED:
        if not len(us[mine]) or not len(us[base]):
            continue
        added, lo, hi = _median_difference(us[mine], us[base], cfg.bootstrap_resamples, cfg.confidence,
                                           seed + mine * 3 + base)
        rows.append({"tags": mine, "over": base, "what": what, "configurations": SCAN_COST,
                     "scans": len(us[mine]), "baseline_scans": len(us[base]), "added_us": added,
                     "added_lo_us": lo, "added_hi_us": hi})
    return pd.DataFrame(rows)


def per_scan_cost(samples: pd.DataFrame, cfg: ControlCycleParams) -> pd.DataFrame:
    """Median execution per scan without evidence, with one tag, and with two tags and the chain step.

    Taken from the rotation run, where the three variants alternate cycle by cycle and so meet the same state of
    the host: a difference between them is the added work, not a change in the host between two runs.
    """
    rotation = _rotation(samples)
    rows = []
    for tags, what in ((0, "scan only"), (1, "scan + evidence tag"), (2, "scan + two tags + chain step")):
        group = rotation[rotation["variant"] == tags]
        if group.empty:
            continue
        rows.append({"tags": tags, "what": what, "configurations": SCAN_COST, "scans": len(group),
                     "execution_p50_us": float(np.median(group["execution_ns"]) / 1000.0),
                     "evidence_p50_us": float(np.median(group["evidence_ns"]) / 1000.0) if tags else 0.0})
    return pd.DataFrame(rows)


def sanity(summary: pd.DataFrame, cost: pd.DataFrame, added: pd.DataFrame, confidence: float) -> dict[str, Any]:
    """The study's own structure checked on its numbers: added work costs time (a one-tag scan is not faster than
    the scan alone, two tags and the chain step not faster than one tag, beyond the bootstrap interval of the
    difference), and every percentile ladder rises (p50 <= p99 <= p99.9 <= max). Each failure names the metrics it
    invalidates (REPORT.md reads them as "measurement failed" with the cause)."""
    checks: list[str] = []
    failed: list[dict[str, Any]] = []
    order = {"one_tag": ("the scan alone", ["per_scan_cost_us", "evidence_us", "added_execution_us"]),
             "two_tags_chain": ("the scan alone", ["per_scan_cost_us", "evidence_us", "added_execution_us"]),
             "second_tag_and_chain": ("one tag", ["per_scan_cost_us", "evidence_us", "added_execution_us",
                                                  "second_tag_and_chain_us"])}
    for r in added.itertuples():
        base, keys = order[r.what]
        checks.append(f"{r.what} adds time over {base}")
        if r.added_hi_us < 0:
            failed.append({"check": f"{r.what} adds time over {base}", "keys": keys,
                           "cause": f"{r.what.replace('_', ' ')} measures {-r.added_us:.3f} µs faster than {base} "
                                    f"({level(confidence)} interval of the difference {r.added_lo_us:.3f} to "
                                    f"{r.added_hi_us:.3f} µs, entirely below zero)"})
    for row in summary.itertuples():
        for part, prefix in (("response", ""), ("wake-up", "latency_"), ("execution", "execution_")):
            ladder = [getattr(row, f"{prefix}{name}_us") for name in ("p50", "p99", "p999", "max")]
            checks.append(f"{row.configuration} {part}: p50 <= p99 <= p99.9 <= max")
            if any(a > b for a, b in itertools.pairwise(ladder)):
                failed.append({"check": f"{row.configuration} {part}: p50 <= p99 <= p99.9 <= max",
                               "keys": [f"configurations.{row.configuration}"],
                               "cause": f"{row.configuration}'s {part} percentiles fall: "
                                        + " / ".join(f"{v:.3f}" for v in ladder) + " µs"})
    return {"checks": len(checks), "failed": failed}
