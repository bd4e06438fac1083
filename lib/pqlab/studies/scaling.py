"""Stage ``scaling`` (AMORT-V1 §V-E, §V-H): Table III, the scaling figure, isolation and re-keying, partition replay."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.amort.fastpath import resolve_controller_path
from pqlab.bench import isolation, rekey_parts, scaling
from pqlab.figures.scaling import fig_scaling
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "scaling"


class Table3Row(MetricsNode):
    """One Table III identity count: controller cost, checkpoint size, bytes per report, verification, memory."""

    us_per_report: float
    checkpoint_octets: int
    checkpoint_kib: float
    bytes_per_report: float
    verify_ms: float
    rss_peak_mib: float
    fleet_rss_octets_per_identity: float
    state_octets_per_identity: int
    trials: int


class ByteParts(MetricsNode):
    record: int
    tags: int
    report: int
    span: int
    close: int
    signature: int
    checkpoint_fixed: int


class Budget(MetricsNode):
    budget_octets: int
    identities_within_budget: int
    first_identities_over_budget: int
    checkpoint_octets_at_limit: int
    checkpoint_octets_over_limit: int


class Isolation(MetricsNode):
    others: int
    others_attesting: int
    attesting_fraction: float
    revoked_next_report: str
    rekeyed: int
    rekey_us_per_identity: float
    rekey_ms_fleet: float
    rekey_fleet_extrapolated: bool


class ReplayBacklog(MetricsNode):
    merge_us_per_record: float
    total_ms: float


class Replay(MetricsNode):
    by_backlog: dict[str, ReplayBacklog]
    us_per_record: float
    us_per_record_with_checkpoint: float
    one_window_records: int
    one_window_merge_ms: float
    one_window_total_ms: float


class RekeyParts(MetricsNode):
    """Re-keying one identity split into its parts (medians), their sums, and the end-to-end time beside them."""

    parts_us: dict[str, float]
    sums_us: dict[str, float]
    sums: dict[str, list[str]]
    end_to_end_controller_us: float | None
    end_to_end_rest_us: float | None
    identities: int
    kem_backend: str
    signature_backend: str
    method: str


class ScalingMetrics(StageMetrics):
    """``scaling_metrics.json``: Table III per identity count, the byte parts, the size budget, isolation and
    re-keying per fleet, partition replay, and the controller path that ran."""

    table3: dict[str, Table3Row]
    bytes: ByteParts
    budget: Budget
    isolation: dict[str, Isolation]
    rekey_us_per_identity: float | None
    rekey_parts: RekeyParts
    replay: Replay
    controller_path: str
    controller_path_reason: str
    controller_path_requested: str
    wire_format: str
    variant: str
    signature_backend: str
    cpu_model: str | None


METRICS = ScalingMetrics

TABLE3_COLUMNS = {
    "identities": "Identities", "us_per_report": "µs/report", "us_per_report_min": "µs/report min",
    "us_per_report_max": "µs/report max", "checkpoint_octets": "Checkpoint [B]", "checkpoint_kib": "Checkpoint [KiB]",
    "record_octets": "Record [B]", "tag_octets": "Tags [B]", "report_octets": "Report [B]",
    "checkpoint_share_octets": "Checkpoint share [B]", "bytes_per_report": "B/report", "verify_ms": "Verify [ms]",
    "rss_peak_mib": "RSS peak [MiB]", "rss_interpreter_mib": "RSS before fleet [MiB]",
    "state_octets_per_identity": "State/identity [B]", "fleet_rss_octets_per_identity": "Fleet RSS/identity [B]",
    "trials": "Trials", "in_paper": "Table III row",
}


def _markdown(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.select_dtypes("float").columns:
        out[column] = out[column].round(3)
    return out


def metrics(table3: pd.DataFrame, parts: scaling.Decomposition, crossing: dict[str, Any], iso: pd.DataFrame,
            replay: pd.DataFrame, provenance: dict[str, Any], rekeying: pd.DataFrame) -> dict[str, Any]:
    """Headline numbers for REPORT.md (keys n<identities>, b<backlog>)."""
    table = {f"n{int(r.identities)}": {
        "us_per_report": round(r.us_per_report, 4), "checkpoint_octets": int(r.checkpoint_octets),
        "checkpoint_kib": round(r.checkpoint_kib, 3), "bytes_per_report": round(r.bytes_per_report, 3),
        "verify_ms": round(r.verify_ms, 4), "rss_peak_mib": round(r.rss_peak_mib, 2),
        "state_octets_per_identity": int(r.state_octets_per_identity),
        "fleet_rss_octets_per_identity": round(r.fleet_rss_octets_per_identity, 1), "trials": int(r.trials),
    } for r in table3.itertuples()}
    isolation_metrics = {f"n{int(r.identities)}": {
        "others": int(r.others), "others_attesting": int(r.others_attesting),
        "attesting_fraction": r.others_attesting / r.others, "revoked_next_report": r.revoked_next_report,
        "rekey_us_per_identity": round(r.rekey_us_per_identity, 3), "rekey_ms_fleet": round(r.rekey_ms_fleet, 3),
        "rekey_fleet_extrapolated": bool(r.rekey_fleet_extrapolated), "rekeyed": int(r.rekeyed),
    } for r in iso.itertuples()}
    window = replay[replay["one_window"]]
    configured = replay[~replay["one_window"]] if (~replay["one_window"]).any() else replay
    return {
        **provenance,
        "table3": table,
        "bytes": {"record": parts.record, "tags": parts.tags, "report": parts.report,
                  "signature": parts.signature, "checkpoint_fixed": parts.checkpoint_fixed, "span": parts.span,
                  "close": parts.close},
        "budget": crossing,
        "isolation": isolation_metrics,
        "rekey_us_per_identity": round(float(iso["rekey_us_per_identity"].median()), 3),
        "rekey_parts": rekey_parts.parts_metrics(rekeying),
        "replay": {
            "us_per_record": round(float(configured["merge_us_per_record"].median()), 4),
            "us_per_record_with_checkpoint": round(float(configured["total_us_per_record"].median()), 4),
            "by_backlog": {f"b{int(r.backlog)}": {"merge_us_per_record": round(r.merge_us_per_record, 4),
                                                   "total_ms": round(r.total_ms, 4)} for r in replay.itertuples()},
            "one_window_records": int(window["backlog"].iloc[0]) if len(window) else None,
            "one_window_merge_ms": round(float(window["merge_ms"].iloc[0]), 4) if len(window) else None,
            "one_window_total_ms": round(float(window["total_ms"].iloc[0]), 4) if len(window) else None,
        },
    }


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Measure every identity count (a process per trial), isolation, re-keying and replay; then write all."""
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    cfg = settings.scaling
    resolved = resolve_controller_path(settings.amort.controller_path)
    rounds, trials, samples = scaling.measure(settings, resolved.path, paths.raw, progress=progress)
    parts = scaling.decompose(samples[min(samples)], int(trials["signature_octets"].iloc[0]),
                              settings.amort.wire_format)
    table3 = scaling.summarise(trials, settings, parts)
    layouts, crossing = scaling.budget(parts, cfg.size_budget_octets)
    counts, rekeying = isolation.measure_isolation(settings, resolved.path, paths.raw, progress=progress)
    replay = isolation.measure_replay(settings, resolved.path, paths.raw, progress=progress)
    iso, replay_summary = isolation.isolation_table(counts, rekeying), isolation.replay_table(replay)
    provenance = {"controller_path_requested": settings.amort.controller_path, "controller_path": resolved.path,
                  "controller_path_reason": resolved.reason, "profile": settings.profile,
                  "wire_format": settings.amort.wire_format, "variant": settings.amort.variant,
                  "signature_backend": str(trials["signature_backend"].iloc[0])}
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"),
                                    backends={"signature": provenance["signature_backend"]}) | provenance
    headline = validated(ScalingMetrics, metrics(table3, parts, crossing, iso, replay_summary, provenance, rekeying)
                         | {"cpu_model": metadata["cpu_model"]})
    rekey_table = rekey_parts.parts_table(rekeying)
    figure = fig_scaling(table3, crossing, resolved.path, metadata["cpu_model"])
    table = table3[list(TABLE3_COLUMNS)].rename(columns=TABLE3_COLUMNS)
    for frame in (rounds, trials, counts, rekeying, replay):
        frame["controller_path"] = resolved.path
    trials = trials.drop(columns=["checkpoint_hex"])
    counts = counts.assign(rejections_after=counts["rejections_after"].astype(str))
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "scaling_rounds.parquet", rounds, metadata)
        out.parquet(paths.raw / "scaling_trials.parquet", trials, metadata)
        out.parquet(paths.raw / "scaling_rekey.parquet", rekeying, metadata)
        out.parquet(paths.raw / "scaling_isolation.parquet", counts, metadata)
        out.parquet(paths.raw / "scaling_replay.parquet", replay, metadata)
        out.table(table, paths.amort_figs / "table3_scaling", markdown=_markdown(table))
        out.table(iso, paths.amort_figs / "isolation", markdown=_markdown(iso))
        out.table(rekey_table, paths.amort_figs / "rekey_parts", markdown=_markdown(rekey_table))
        out.table(replay_summary, paths.amort_figs / "partition_replay", markdown=_markdown(replay_summary))
        out.table(layouts, paths.amort_figs / "checkpoint_budget", markdown=_markdown(layouts))
        out.figure(figure, paths.amort_figs / "fig_scaling")
        out.metrics(paths.derived / "scaling_metrics.json", headline, label="attesting, 1 of 1000 out",
                    key="isolation.n1000.attesting_fraction", unit="fraction")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_scaling": figure},
                       tables={"table3_scaling": table, "isolation": iso, "partition_replay": replay_summary,
                               "checkpoint_budget": layouts, "rekey_parts": rekey_table},
                       metrics=headline, files=out.written,
                       data={"rounds": rounds, "trials": trials, "table3": table3, "rekey": rekeying,
                             "isolation": counts, "replay": replay, "decomposition": parts, "budget": crossing,
                             "metadata": metadata})
