"""Stage ``transport_crosscheck`` (beyond the papers): pqlab's Thread transport beside ns-3 (lr-wpan + sixlowpan).

Reads data/raw/transport_crosscheck_runs.parquet (both simulators, every scenario) and writes per scenario the
medians and p90 with intervals, failure rates, frames and retransmissions, the pqlab / ns-3 ratio with its interval
and the two-sample tests; the loss-free single-message transfer table with its per-frame decomposition; the parameters
ns-3 used beside pqlab's; the figure; and the metrics the report's "crosscheck" rows judge
(docs/thread-simulator.md, "Cross-check against ns-3")."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.analysis import transport as thread_analysis
from pqlab.crosscheck import analysis
from pqlab.figures.transport_crosscheck import fig_transport_crosscheck
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.transport_crosscheck import CrosscheckMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "transport_crosscheck"
RAW = registry.raw_spec(STAGE)
MULTI_FRAME = 5  # transfers of at least this many frames show the per-frame extra time (one frame: its backoff)


def label(row) -> str:
    """A scenario's key in the metrics: ``D3.ipv6.3hop.light_wifi.chain``, ``D3.Sigma2.ipv6.2hop.shared``."""
    hops = f"{int(row['hops'])}hop"
    if row["kind"] == "transfer":
        return f"{row['config']}.{row['message']}.{row['transport']}.{hops}.{row['topology']}"
    return f"{row['config']}.{row['transport']}.{hops}.{row['loss']}.{row['topology']}"


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else float(value)


def _scenario_metrics(row) -> dict:
    return {"pqlab_median_s": _number(row["pqlab_median_s"]), "ns3_median_s": _number(row["ns3_median_s"]),
            "pqlab_failure_rate": float(row["pqlab_failure_rate"]), "ns3_failure_rate": float(row["ns3_failure_rate"]),
            "ratio": _number(row["ratio"]), "ratio_lo": _number(row["ratio_lo"]), "ratio_hi": _number(row["ratio_hi"]),
            "ks_p": _number(row["ks_p"]), "ns3_cca_drops": _number(row.get("ns3_cca_drops"))}


def _agreeing(rows: pd.DataFrame, pct: float) -> int:
    """Rows whose ratio is within ±pct and where neither simulator failed a run."""
    ok = (rows["ratio"] - 1.0).abs() <= pct / 100.0
    return int((ok & (rows["pqlab_failure_rate"] == 0) & (rows["ns3_failure_rate"] == 0)).sum())


def _extreme(series: pd.Series, how: str) -> float:
    finite = series.dropna()
    return float(getattr(finite, how)()) if len(finite) else float("nan")


def claims(compared: pd.DataFrame, transfers: pd.DataFrame, pct: float, lifs_us: float) -> dict:
    """The numbers the report's crosscheck rows judge (chain topology, the issue's setting). A transfer or handshake
    row agrees when its ratio of medians is within ±pct and neither simulator failed a run of it."""
    chain_t = transfers[transfers["topology"] == "chain"]
    single_t = chain_t[chain_t["transport"] == "datagram"]
    hand = compared[(compared["kind"] == "handshake") & (compared["topology"] == "chain")]
    lossy = hand[(hand["loss"] != "none") & hand["ratio"].notna()]
    one = hand[hand["transport"].isin(["pull", "datagram"])]
    multi = hand[hand["transport"].isin(["ipv6", "block"])]
    return {
        "agreement_pct": pct, "transfers": len(chain_t), "transfers_within": _agreeing(chain_t, pct),
        "transfer_ratio_min": _extreme(chain_t["ratio"], "min"),
        "transfer_ratio_max": _extreme(chain_t["ratio"], "max"),
        "transfers_ns3_failing": int((chain_t["ns3_failure_rate"] > 0).sum()),
        "single_datagram_transfers": len(single_t), "single_datagram_within": _agreeing(single_t, pct),
        "single_datagram_ratio_min": _extreme(single_t["ratio"], "min"),
        "single_datagram_ratio_max": _extreme(single_t["ratio"], "max"),
        "ns3_extra_per_frame_us_median": float(chain_t[chain_t["ns3_frames"] >= MULTI_FRAME]["ns3_extra_per_frame_us"]
                                               .median()),
        "ns3_lifs_us": lifs_us,
        "lossy_scenarios": len(lossy),
        "lossy_ratio_ci_covers_one": int(((lossy["ratio_lo"] <= 1.0) & (lossy["ratio_hi"] >= 1.0)).sum()),
        "handshake_scenarios": len(hand), "handshakes_within": _agreeing(hand, pct),
        "pull_within": _agreeing(one, pct), "pull_scenarios": len(one),
        "multi_datagram_within": _agreeing(multi, pct), "multi_datagram_scenarios": len(multi),
        "ns3_cca_drops_multi_datagram": float(multi["ns3_cca_drops"].mean()),
        "ns3_cca_drops_single_datagram": float(one["ns3_cca_drops"].mean()),
        "ns3_noack_drops_multi_datagram": float(multi["ns3_noack_drops"].mean()),
        "ns3_failure_rate_multi_datagram": float(multi["ns3_failure_rate"].mean()),
        "pqlab_failure_rate_multi_datagram": float(multi["pqlab_failure_rate"].mean()),
        "ns3_phy_fault_runs": int(compared["ns3_phy_fault_runs"].sum()),
        "ns3_runs": int(compared["ns3_runs"].sum() + compared["ns3_phy_fault_runs"].sum()),
    }


def _interval(value: float, lo: float, hi: float, digits: int = 2) -> str:
    if not np.isfinite(value):
        return "—"
    return f"{value:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def closing_table(compared: pd.DataFrame) -> pd.DataFrame:
    """Scenario × (pqlab, ns-3, ratio with interval): the handshakes on the chain, as the closing note shows them."""
    hand = compared[(compared["kind"] == "handshake") & (compared["topology"] == "chain")]
    rows = []
    for row in hand.itertuples():
        rows.append({
            "scenario": f"{row.config} {row.transport} {row.hops} hop{'s' if row.hops > 1 else ''} {row.loss}",
            "pqlab median s": _interval(row.pqlab_median_s, row.pqlab_median_lo_s, row.pqlab_median_hi_s),
            "ns-3 median s": _interval(row.ns3_median_s, row.ns3_median_lo_s, row.ns3_median_hi_s),
            "pqlab / ns-3": _interval(row.ratio, row.ratio_lo, row.ratio_hi),
            "failed pqlab / ns-3": f"{row.pqlab_failure_rate:.2f} / {row.ns3_failure_rate:.2f}",
            "MRP retx per handshake pqlab / ns-3": f"{row.pqlab_retransmissions:.1f} / {row.ns3_retransmissions:.1f}",
            "frames per handshake pqlab / ns-3": f"{row.pqlab_frames:.0f} / {row.ns3_frames:.0f}",
            "ns-3 CCA drops per handshake": f"{row.ns3_cca_drops:.1f}",
            "KS p": f"{row.ks_p:.2g}" if np.isfinite(row.ks_p) else "—",
        })
    return pd.DataFrame(rows)


def transfer_markdown(transfers: pd.DataFrame) -> pd.DataFrame:
    """The loss-free transfer table as the closing note shows it."""
    rows = []
    for row in transfers.itertuples():
        rows.append({
            "message": f"{row.config} {row.message} ({row.transport})", "hops": row.hops, "ns-3 topology": row.topology,
            "pqlab ms": f"{row.pqlab_median_s * 1e3:.1f}",
            "ns-3 ms": f"{row.ns3_median_s * 1e3:.1f}" if np.isfinite(row.ns3_median_s) else "—",
            "pqlab / ns-3": _interval(row.ratio, row.ratio_lo, row.ratio_hi, 3),
            "never complete pqlab / ns-3": f"{row.pqlab_failure_rate:.2f} / {row.ns3_failure_rate:.2f}",
            "frames pqlab / ns-3": f"{row.pqlab_frames:.0f} / {row.ns3_frames:.0f}",
            "framing ratio": f"{row.framing_ratio:.3f}",
            "ns-3 extra µs/frame": f"{row.ns3_extra_per_frame_us:.0f}" if np.isfinite(row.ns3_extra_per_frame_us)
            else "—",
            "ns-3 CCA drops": f"{row.ns3_cca_drops:.1f}",
        })
    return pd.DataFrame(rows)


def parameters(settings: StudyParams, used: dict[str, str]) -> pd.DataFrame:
    """pqlab's `transport:` value beside what ns-3 reported it used, per MAC/PHY quantity."""
    t = settings.transport
    pairs = [("byte time µs", t.byte_time_us, "byte_us"), ("turnaround µs", t.turnaround_us, "turnaround_us"),
             ("CCA µs", t.cca_us, "cca_us"), ("backoff unit µs", t.backoff_unit_us, "unit_backoff_us"),
             ("ACK wait µs", t.ack_wait_us, "ack_wait_us"), ("PHY header bytes", t.phy_header_bytes, "shr_bytes"),
             ("interframe space after a long frame µs", 0, "lifs_us"),
             ("MAC payload per frame bytes", t.framing.max_psdu_bytes - t.framing.mac_overhead_bytes,
              "mtu_6lowpan_payload")]
    return pd.DataFrame([{"quantity": name, "pqlab": float(ours), "ns-3": float(used.get(key, "nan")),
                          "same": math.isclose(float(ours), float(used.get(key, "nan")))}
                         for name, ours, key in pairs])


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Both simulators per scenario, the ratios and tests, the transfer table, the figure and the metrics."""
    paths.check_writable(paths.derived, paths.case_figs)
    cross, thread = settings.transport_crosscheck, settings.transport
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    runs = frames["transport_crosscheck_runs.parquet"]
    used_frame = frames["transport_crosscheck_ns3_used.parquet"]
    used = dict(zip(used_frame["key"], used_frame["value"], strict=True))
    compared = analysis.compare_scenarios(runs, thread.bootstrap_resamples, thread.confidence, settings.seed)
    lifs_us = float(used.get("lifs_us", "nan"))
    transfers = analysis.transfer_table(compared, runs, thread, lifs_us)
    table = closing_table(compared)
    params_table = parameters(settings, used)
    judged = claims(compared, transfers, cross.agreement_pct, lifs_us)
    metrics = {
        "profile": settings.profile, "confidence": thread.confidence, "runs_per_scenario": cross.runs,
        "transfer_runs": cross.transfer_runs,
        "ns3_version": used.get("ns3_version", "unknown"),
        "ns3_used": {k: v for k, v in used.items() if k != "ns3_version"},
        "claims": judged,
        "scenarios": {label(r): _scenario_metrics(r) for r in compared[compared["kind"] == "handshake"].to_dict(
            "records")},
        "transfers": {label(r): _scenario_metrics(r) for r in transfers.to_dict("records")},
        "raw_samples": raw_provenance.source(raw_metadata),
    }
    figure = fig_transport_crosscheck(compared, transfers, agreement_pct=cross.agreement_pct, runs=cross.runs)
    with OutputSet(paths, STAGE) as out:
        out.table(compared, paths.case_figs / "crosscheck_scenarios", markdown=table)
        out.table(transfers, paths.case_figs / "crosscheck_transfers", markdown=transfer_markdown(transfers))
        out.table(params_table, paths.case_figs / "crosscheck_parameters")
        out.figure(figure, paths.case_figs / "fig_transport_crosscheck")
        out.metrics(paths.derived / "transport_crosscheck_metrics.json",
                    validated(CrosscheckMetrics, thread_analysis.jsonable(metrics)),
                    label="loss-free within ±10 %", key="claims.transfers_within", unit="rows")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_transport_crosscheck": figure},
                       tables={"crosscheck_scenarios": compared, "crosscheck_transfers": transfers,
                               "crosscheck_parameters": params_table, "crosscheck_closing": table},
                       metrics=metrics, files=out.written)


run = measuring.runner(STAGE, analyse)
