"""Stage ``device_origin`` (AMORT-V1 §V-F, RQ2): Fig. 5, one vs two tags at the controller, the prover's extra work."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab import machine
from pqlab.amort.fastpath import resolve_controller_path
from pqlab.bench import device_origin as bench
from pqlab.figures.device_origin import fig5_auditor
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.stats import compare
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "device_origin"


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


class DeviceOriginMetrics(StageMetrics):
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


METRICS = DeviceOriginMetrics


def auditor_table(auditor: pd.DataFrame, delays: pd.DataFrame) -> pd.DataFrame:
    """Per k: the median µs per report of every audit component, in-order + MAC, and the disclosure delay."""
    wide = auditor.pivot_table(index="k", columns="component", values="us_per_report", aggfunc="median")
    wide = wide[[c for c in bench.COMPONENTS if c in wide.columns]]
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


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Measure the auditor at every k, one vs two tags at the controller, the prover; then write every output."""
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    cfg = settings.device_origin
    resolved = resolve_controller_path(settings.amort.controller_path)
    auditor, delays = bench.measure_auditor(settings, paths.raw, progress=progress)
    tags = bench.measure_controller_tags(settings, resolved.path, paths.raw, progress=progress)
    samples, builds = bench.measure_prover(settings, resolved.path, progress=progress)
    table = auditor_table(auditor, bench.delay_summary(delays, cfg.report_rate_hz))
    comparison = tags_table(tags, samples, builds)
    provenance = {"controller_path_requested": settings.amort.controller_path, "controller_path": resolved.path,
                  "controller_path_reason": resolved.reason, "device_path": resolved.path,
                  "auditor_path": "reference (pqlab.amort.auditor.ColdAuditor)", "profile": settings.profile}
    metadata = machine.run_metadata(params=settings.model_dump(mode="json")) | provenance
    headline = validated(DeviceOriginMetrics, metrics(table, comparison, provenance, cfg.report_rate_hz)
                         | {"cpu_model": metadata["cpu_model"]})
    figure = fig5_auditor(auditor, metadata["cpu_model"])
    for frame in (auditor, tags, samples, builds):
        frame["controller_path"] = resolved.path
    rounded = table.round(4)
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "device_origin_auditor.parquet", auditor, metadata)
        out.parquet(paths.raw / "device_origin_delays.parquet", delays, metadata)
        out.parquet(paths.raw / "device_origin_tags.parquet", tags, metadata)
        out.parquet(paths.raw / "device_origin_prover.parquet", samples, metadata)
        out.parquet(paths.raw / "device_origin_chain_setup.parquet", builds, metadata)
        out.table(table, paths.amort_figs / "device_origin_auditor", markdown=rounded)
        out.table(comparison, paths.amort_figs / "device_origin_tags", markdown=comparison.round(4))
        out.figure(figure, paths.amort_figs / "fig5_auditor")
        out.metrics(paths.derived / "device_origin_metrics.json", headline, label="in-order verify incl. MAC",
                    key="in_order_with_mac_us", unit="us")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig5_auditor": figure},
                       tables={"device_origin_auditor": table, "device_origin_tags": comparison},
                       metrics=headline, files=out.written,
                       data={"auditor": auditor, "delays": delays, "tags": tags, "prover": samples,
                             "chain_setup": builds, "metadata": metadata})
