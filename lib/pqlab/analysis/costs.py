"""Table I from the cost harness's raw samples: per-operation quantiles with bootstrap intervals, backend
comparisons, the Table I view and the stage's metrics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pqlab.params import StudyParams
from pqlab.raw_labels import C_LOOP_BACKEND, NATIVE_BACKEND, PYTHON_BACKEND
from pqlab.stats import compare, quantile_cis


def summarise(raw: pd.DataFrame, settings: StudyParams) -> pd.DataFrame:
    """Median, p95 and p99 (µs, empty-call overhead removed) with bootstrap CIs per operation and backend."""
    cfg = settings.costs
    rows = []
    groups = raw.groupby(["op_id", "backend"], sort=False)
    for index, ((op_id, backend), group) in enumerate(groups):
        first = group.iloc[0]
        summary = quantile_cis(group["net_ns"].to_numpy() / 1000.0, cfg.bootstrap_resamples,
                               cfg.confidence, settings.seed + index)
        rows.append({
            "op_id": op_id, "operation": first["operation"], "frequency": first["frequency"],
            "algorithm": first["algorithm"], "backend": backend, "in_table1": bool(first["in_table1"]),
            "trials": int(group["trial"].nunique()), **summary,
            "overhead_us": float(group["overhead_ns"].median() / 1000.0),
        })
    stats = pd.DataFrame(rows)
    stats["n"] = stats["n"].astype(int)
    return stats


def compare_all_backends(raw: pd.DataFrame, algorithms: list[str]) -> pd.DataFrame:
    """:func:`compare_backends` for every algorithm signed on more than one backend, one table."""
    frames = [compare_backends(raw, algorithm) for algorithm in dict.fromkeys(algorithms)]
    return pd.concat(frames, ignore_index=True)


def compare_backends(raw: pd.DataFrame, algorithm: str) -> pd.DataFrame:
    """Every pair of backends that signed with ``algorithm``: median ratio, Mann–Whitney U, Cliff's δ."""
    samples = raw[raw["op_id"] == f"sign_{algorithm}"]
    by_backend = {name: group["net_ns"].to_numpy() / 1000.0 for name, group in samples.groupby("backend")}
    names = sorted(by_backend, key=lambda n: np.median(by_backend[n]))
    rows = []
    for i, fast in enumerate(names):
        for slow in names[i + 1:]:
            result = compare(by_backend[slow], by_backend[fast])
            rows.append({
                "algorithm": algorithm, "slower": slow, "faster": fast,
                "median_slower_us": float(np.median(by_backend[slow])),
                "median_faster_us": float(np.median(by_backend[fast])),
                "ratio": result.median_ratio, "mann_whitney_u": result.u_statistic,
                "p_value": result.p_value, "cliffs_delta": result.cliffs_delta,
            })
    return pd.DataFrame(rows, columns=["algorithm", "slower", "faster", "median_slower_us", "median_faster_us",
                                       "ratio", "mann_whitney_u", "p_value", "cliffs_delta"])


def table1(stats: pd.DataFrame) -> pd.DataFrame:
    """The Table I view: one row per operation on its chosen backend, in µs; the symmetric rows (timed in C)
    carry the same operation timed from Python as a second, labelled column."""
    view = stats[stats["in_table1"]]
    columns = {
        "operation": "Operation", "frequency": "Frequency", "backend": "Backend", "n": "n",
        "median": "Median [µs]", "median_lo": "Median CI low", "median_hi": "Median CI high",
        "p95": "p95 [µs]", "p99": "p99 [µs]", "p99_lo": "p99 CI low", "p99_hi": "p99 CI high",
    }
    out = view[list(columns)].rename(columns=columns).reset_index(drop=True)
    python = stats[(stats["backend"] == PYTHON_BACKEND) & ~stats["in_table1"]].set_index("op_id")
    ids = view["op_id"].reset_index(drop=True)
    out["Python-timed median [µs]"] = ids.map(python["median"]) if len(python) else np.nan
    out["Python-timed p99 [µs]"] = ids.map(python["p99"]) if len(python) else np.nan
    return out


def _row(row: Any) -> dict[str, Any]:
    return {"median_us": round(row.median, 4), "p95_us": round(row.p95, 4), "p99_us": round(row.p99, 4),
            "backend": row.backend, "n": int(row.n)}


def reference_operations(stats: pd.DataFrame, metadata: dict[str, Any]) -> dict[str, Any]:
    """Table I's symmetric rows as timed in C: the reference operations for comparing timings across machines
    (median and p99 with their bootstrap intervals)."""
    rows = stats[stats["in_table1"] & (stats["backend"] == C_LOOP_BACKEND)]
    return {row.op_id: {"median_us": round(row.median, 4), "median_lo_us": round(row.median_lo, 4),
                        "median_hi_us": round(row.median_hi, 4), "p99_us": round(row.p99, 4),
                        "p99_lo_us": round(row.p99_lo, 4), "p99_hi_us": round(row.p99_hi, 4),
                        "mean_us": round(row.mean, 4), "n": int(row.n), "backend": row.backend,
                        "method": metadata.get("symmetric_rows", "")}
            for row in rows.itertuples()}


def library_dependent(stats: pd.DataFrame, signers: list[str], main: dict[str, str]) -> dict[str, Any]:
    """Per signer and backend: the signing median and mean, and what the paper's "the durable write dominates
    checkpoint cost" claim becomes with that library (4 KiB write+fsync median over the signing median)."""
    write = stats[(stats["op_id"] == "write_fsync") & stats["in_table1"]]
    write_us = float(write["median"].iloc[0]) if len(write) else float("nan")
    out: dict[str, Any] = {"main_backend": dict(main), "write_fsync_median_us": round(write_us, 4), "signers": {}}
    for algorithm in signers:
        rows = stats[stats["op_id"] == f"sign_{algorithm}"]
        out["signers"][algorithm] = {
            row.backend: {"median_us": round(row.median, 4), "mean_us": round(row.mean, 4),
                          "main": row.backend == main.get(algorithm),
                          "write_over_sign": round(write_us / row.median, 4) if row.median > 0 else None,
                          "dominant_with_log": "durable write" if write_us > row.median else "signature"}
            for row in rows.itertuples()}
    return out


def metrics(stats: pd.DataFrame, comparison: pd.DataFrame, metadata: dict[str, Any]) -> dict[str, Any]:
    """Headline numbers for ``dvc metrics show`` and REPORT.md."""
    table = {row.op_id: _row(row) for row in stats[stats["in_table1"]].itertuples()}
    python = stats[(stats["backend"] == PYTHON_BACKEND) & ~stats["in_table1"]]
    c_variants = stats[(stats["backend"] == C_LOOP_BACKEND) & ~stats["in_table1"]]
    signing = stats[stats["op_id"].str.startswith("sign_")]
    by_backend: dict[str, dict[str, Any]] = {}
    for row in signing.itertuples():
        by_backend.setdefault(row.algorithm, {})[row.backend] = {"median_us": round(row.median, 4),
                                                                 "mean_us": round(row.mean, 4),
                                                                 "backend": row.backend}

    def _ratios(frame: pd.DataFrame) -> dict[str, Any]:
        return {f"{r.slower}/{r.faster}": {"ratio": round(r.ratio, 3), "cliffs_delta": round(r.cliffs_delta, 4),
                                            "p_value": float(f"{r.p_value:.3g}")} for r in frame.itertuples()}

    main_comparison = comparison[comparison["algorithm"] == metadata.get("comparison_signer", "ML-DSA-65")]
    native_rows = stats[stats["backend"] == NATIVE_BACKEND]
    main = {row.algorithm: row.backend for row in signing[signing["in_table1"]].itertuples()}
    return {
        "table1": table,
        "table1_python": {row.op_id: _row(row) for row in python.itertuples()},
        "symmetric_c_variants": {row.op_id: _row(row) for row in c_variants.itertuples()},
        "reference_operations": reference_operations(stats, metadata),
        "library_dependent": library_dependent(stats, sorted(set(signing["algorithm"])), main),
        "backend_comparison_by_algorithm": {algorithm: _ratios(group)
                                            for algorithm, group in comparison.groupby("algorithm")},
        "native_per_report": {row.op_id: {"median_us": round(row.median, 4), "p99_of_batch_means_us": round(row.p99, 4),
                                          "n_batches": int(row.n)} for row in native_rows.itertuples()},
        "sign_by_backend": by_backend,
        "backend_comparison": _ratios(main_comparison),
        "empty_call_overhead_ns": round(float(np.median(metadata["empty_call_overhead_ns_per_trial"])), 1),
    }
