"""Stage ``control_cycle`` (AMORT-V1 §V-G): scan response time in seven configurations (Fig. 6) and per-scan cost."""

from __future__ import annotations

import os
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab import machine
from pqlab.bench import control_cycle
from pqlab.figures.control_cycle import fig6_scan
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "control_cycle"


class Percentiles(MetricsNode):
    p50: float
    p99: float
    p999: float
    max: float


class AddedCost(MetricsNode):
    """Execution time a configuration adds over the baseline: median difference and its 95 % interval."""

    median: float
    ci: list[float]


class Configuration(MetricsNode):
    """One Fig. 6 configuration: scan response time percentiles and deadline misses over its cycles."""

    label: str
    cycles: int
    p50_us: float
    p99_us: float
    p999_us: float
    max_us: float
    deadline_misses: int
    wakeup_us: Percentiles
    execution_us: Percentiles


class MedianRange(MetricsNode):
    low: float
    high: float


class TagCosts(MetricsNode):
    one_tag: float
    two_tags_chain: float


class ScanCosts(TagCosts):
    scan: float


class Scheduling(MetricsNode):
    cpu: int | None
    policies: list[str]
    realtime_obtained: bool
    fifo_errors: list[str]
    pinned: bool
    off_target_cycles: int
    steal_ms: dict[str, float | None]


class ControlCycleMetrics(StageMetrics):
    host: str
    period_us: float
    deadline_us: float
    cycles_total: int
    deadline_misses_total: int
    median_range_us: MedianRange
    max_response_us: float
    execution_median_range_us: MedianRange
    wakeup_median_range_us: MedianRange
    max_execution_us: float
    added_execution_us: dict[str, AddedCost]
    configurations: dict[str, Configuration]
    per_scan_cost_us: ScanCosts
    evidence_us: TagCosts
    second_tag_and_chain_us: float | None
    evidence_back_to_back_us: TagCosts
    scheduling: Scheduling
    cpu_model: str | None
    clock_read_ns: float
    loadavg_before: list[float]
    loadavg_after: list[float]


METRICS = ControlCycleMetrics

HOST_NOTE = "Linux host, not a PLC: the same method as the paper's OpenPLC prover, on this machine"


def _signer_backends(runs: list[dict[str, Any]]) -> dict[str, str]:
    return {r["background_signer"]: f"{r['signer']['ready']['backend']} {r['signer']['ready']['version']}"
            for r in runs if r.get("signer")}


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


def _second_tag(cost: pd.DataFrame) -> float | None:
    """Median evidence time with two tags and the chain step minus with one tag (§V-F's prover cost)."""
    evidence = dict(zip(cost["tags"], cost["evidence_p50_us"], strict=True))
    return round(evidence[2] - evidence[1], 3) if 1 in evidence and 2 in evidence else None


def metrics(summary: pd.DataFrame, cost: pd.DataFrame, runs: list[dict[str, Any]], settings: StudyParams,
            extra: dict[str, Any], added: pd.DataFrame | None = None) -> dict[str, Any]:
    """Headline numbers: misses over all cycles, the median range, the maximum, per configuration (the response and
    its wake-up / execution split), per-scan cost and what evidence adds to a scan's execution."""
    cfg = settings.control_cycle
    by_tags = {0: "scan", 1: "one_tag", 2: "two_tags_chain"}
    added = added if added is not None else pd.DataFrame(columns=["what", "added_us", "added_lo_us", "added_hi_us"])
    return {
        "host": HOST_NOTE,
        "profile": settings.profile,
        "period_us": cfg.period_us,
        "deadline_us": control_cycle.deadline_ns(cfg) / 1000,
        "cycles_total": int(summary["cycles"].sum()),
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
        "second_tag_and_chain_us": _second_tag(cost),
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


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Run every configuration, summarise, draw Fig. 6, write samples, tables and metrics."""
    cfg = settings.control_cycle
    load_before = os.getloadavg()
    clock_ns = control_cycle.clock_overhead_ns()
    samples, runs = control_cycle.run_all(cfg, settings.seed, progress=progress)
    warm = control_cycle.back_to_back_evidence_us(cfg, np.random.default_rng([settings.seed, 1]))
    load_after = os.getloadavg()
    summary = control_cycle.summarise(samples, cfg)
    cost = control_cycle.per_scan_cost(samples, cfg)
    cost["back_to_back_evidence_p50_us"] = [warm.get(int(t), 0.0) for t in cost["tags"]]
    added = control_cycle.added_cost(samples, cfg, seed=settings.seed)
    if len(added):
        cost = cost.merge(added[["tags", "added_us", "added_lo_us", "added_hi_us"]], on="tags", how="left")
    extra = {"cpu_model": machine.cpu_model(), "clock_read_ns": clock_ns,
             "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in load_after]}
    headline = validated(ControlCycleMetrics, metrics(summary, cost, runs, settings, extra, added))
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends=_signer_backends(runs)) | {
        "study": "control_cycle", "host_note": HOST_NOTE, "runs": runs, **extra}
    figure = fig6_scan(samples, summary, control_cycle.deadline_ns(cfg) / 1000, machine.cpu_model())
    table = summary_table(summary)
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "control_cycle_samples.parquet", samples, metadata)
        out.parquet(paths.derived / "control_cycle_summary.parquet", summary, metadata)
        out.table(table, paths.amort_figs / "fig6_scan_summary")
        out.table(cost.round(3), paths.amort_figs / "control_cycle_scan_cost")
        out.figure(figure, paths.amort_figs / "fig6_scan")
        out.metrics(paths.derived / "control_cycle_metrics.json", headline, label="largest scan response",
                    key="max_response_us", unit="us")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig6_scan": figure},
                       tables={"fig6_scan_summary": table, "control_cycle_scan_cost": cost}, metrics=headline,
                       files=out.written, data={"samples": samples, "summary": summary, "runs": runs})
