"""AMORT-V1 §V-E, §V-H from the scaling raw samples: the Table III view and the stage's metrics."""

from __future__ import annotations

from typing import Any

import pandas as pd

from pqlab.amort.sizes import Decomposition, checkpoint_octets
from pqlab.analysis import rekey_parts
from pqlab.errors import MeasurementError
from pqlab.params import StudyParams
from pqlab.stats import median_ci

KIB = 1024
PAPER_IDENTITIES = (10, 100, 1000, 4000, 10_000)  # Table III's rows

TABLE3_COLUMNS = {
    "identities": "Identities", "us_per_report": "µs/report", "us_per_report_lo": "µs/report CI low",
    "us_per_report_hi": "µs/report CI high", "us_per_report_min": "µs/report min",
    "us_per_report_max": "µs/report max", "checkpoint_octets": "Checkpoint [B]", "checkpoint_kib": "Checkpoint [KiB]",
    "record_octets": "Record [B]", "tag_octets": "Tags [B]", "report_octets": "Report [B]",
    "checkpoint_share_octets": "Checkpoint share [B]", "bytes_per_report": "B/report", "verify_ms": "Verify [ms]",
    "rss_peak_mib": "RSS peak [MiB]", "rss_interpreter_mib": "RSS before fleet [MiB]",
    "state_octets_per_identity": "State/identity [B]", "fleet_rss_octets_per_identity": "Fleet RSS/identity [B]",
    "trials": "Trials", "in_paper": "Table III row",
}


def rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Floats to three decimals, for a markdown table."""
    out = frame.copy()
    for column in out.select_dtypes("float").columns:
        out[column] = out[column].round(3)
    return out


def metrics(table3: pd.DataFrame, parts: Decomposition, crossing: dict[str, Any], iso: pd.DataFrame,
            replay: pd.DataFrame, provenance: dict[str, Any], rekeying: pd.DataFrame) -> dict[str, Any]:
    """Headline numbers for REPORT.md (keys n<identities>, b<backlog>)."""
    table = {f"n{int(r.identities)}": {
        "us_per_report": round(r.us_per_report, 4), "us_per_report_lo": round(r.us_per_report_lo, 4),
        "us_per_report_hi": round(r.us_per_report_hi, 4), "checkpoint_octets": int(r.checkpoint_octets),
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


def summarise(trials: pd.DataFrame, settings: StudyParams, parts: Decomposition) -> pd.DataFrame:
    """Table III: per identity count, medians over trials (bootstrap CI of the cost) and the byte columns."""
    rows = []
    for index, (n, group) in enumerate(trials.groupby("identities", sort=True)):
        median, low, high = median_ci(group["us_per_report"].to_numpy(), settings.scaling.bootstrap_resamples,
                                      settings.scaling.confidence, settings.seed + index)
        checkpoint = int(group["checkpoint_octets"].iloc[0])
        if group["checkpoint_octets"].nunique() != 1 or group["report_octets"].nunique() != 1:
            raise MeasurementError("checkpoint or report size differs between trials", field=f"n={n}")
        report = int(group["report_octets"].iloc[0])
        fleet_rss = (group["rss_after_register_kib"] - group["rss_before_fleet_kib"]) * KIB
        rows.append({
            "identities": int(n), "in_paper": int(n) in PAPER_IDENTITIES, "trials": len(group),
            "us_per_report": median, "us_per_report_lo": low, "us_per_report_hi": high,
            "us_per_report_min": float(group["us_per_report"].min()),
            "us_per_report_max": float(group["us_per_report"].max()),
            **{f"{p}_us_per_report": float(group[f"{p}_us_per_report"].median())
               for p in ("ingest", "body", "sign", "commit", "durable")},
            "checkpoint_octets": checkpoint, "checkpoint_kib": checkpoint / KIB,
            "record_octets": parts.record, "tag_octets": parts.tags, "report_octets": report,
            "checkpoint_share_octets": checkpoint / n, "bytes_per_report": report + checkpoint / n,
            "verify_ms": float(group["verify_ms"].median()),
            "rss_peak_mib": float(group["rss_peak_kib"].median()) / KIB,
            "rss_interpreter_mib": float(group["rss_before_fleet_kib"].median()) / KIB,
            "state_octets_per_identity": int(group["state_octets"].iloc[0]),
            "fleet_rss_octets_per_identity": float(fleet_rss.median()) / n,
        })
    table = pd.DataFrame(rows)
    expected = [parts.checkpoint(n) for n in table["identities"]]
    if list(table["checkpoint_octets"]) != expected:
        raise MeasurementError(f"checkpoint sizes {list(table['checkpoint_octets'])} are not fixed + spans × "
                               f"{parts.span} ({expected})", field="checkpoint_octets")
    return table


# What-if span layouts: the per-identity octets if the span's fields changed (field widths, not encodings).
SPAN_LAYOUTS: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    ("explicit wire format: dev_id, epoch, seq_lo, seq_hi, subtree",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 8), ("seq_hi", 8), ("subtree", 32))),
    ("implied wire format, the paper's tuple: dev_id, seq_lo, seq_hi, subtree (epoch once per checkpoint)",
     (("dev_id", 8), ("seq_lo", 8), ("seq_hi", 8), ("subtree", 32))),
    ("4-octet epoch-relative seq_lo and a 2-octet count instead of seq_hi",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 4), ("count", 2), ("subtree", 32))),
    ("one-report spans: no subtree (it equals the leaf hash the global tree commits)",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 8))),
)


def budget(parts: Decomposition, budget_octets: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Where a checkpoint of one-report spans passes ``budget_octets``, confirmed by encoding checkpoints of
    the last fitting count and the first one over; the same limit under what-if span layouts."""
    fits = (budget_octets - parts.checkpoint_fixed) // parts.span
    first_over = fits + 1
    sizes = {}
    for n in (fits, first_over):
        sizes[n] = checkpoint_octets(n, parts.signature, parts.wire_format)
    if not (sizes[fits] <= budget_octets < sizes[first_over]):
        raise MeasurementError(f"encoded sizes {sizes} do not straddle {budget_octets}", field="size_budget_octets")
    rows = []
    for label, fields in SPAN_LAYOUTS:
        span = sum(width for _, width in fields)
        rows.append({"span_layout": label, "span_octets": span,
                     "identities_within_budget": (budget_octets - parts.checkpoint_fixed) // span,
                     "bytes_per_report_at_10000": parts.report + (parts.checkpoint_fixed + 10_000 * span) / 10_000})
    crossing = {"budget_octets": budget_octets, "identities_within_budget": fits,
                "first_identities_over_budget": first_over, "checkpoint_octets_at_limit": sizes[fits],
                "checkpoint_octets_over_limit": sizes[first_over]}
    return pd.DataFrame(rows), crossing
