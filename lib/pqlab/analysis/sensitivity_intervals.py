"""Intervals (at ``transport.confidence``) for the §VII sensitivity numbers (Fig. 4 a–c, Fig. 5) from the sweep's own
runs.

Each cell's ratio of medians gets a percentile bootstrap (scipy; both samples resampled independently); each cell's
success rate (of the worse of its two transports, as the figure marks it) an exact binomial interval; a minimum
or maximum over cells the interval its cells' intervals allow. Pure computation on the sweep's run table and its
cell table (``sweeps.cell_stats``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from pqlab.analysis.transport_intervals import binomial_ci
from pqlab.transport.sweep_config import SensitivityParams


def ratio_of_medians_ci(num: np.ndarray, den: np.ndarray, resamples: int, confidence: float,
                        rng: np.random.Generator) -> tuple[float | None, float | None]:
    """Percentile-bootstrap interval of median(num) / median(den), the two samples resampled independently
    (scipy); a sample of one run has nothing to resample and enters as its value."""
    if len(num) == 0 or len(den) == 0:
        return None, None
    varied = tuple(sample for sample in (num, den) if len(sample) > 1)
    if not varied:
        ratio = float(np.median(num) / np.median(den))
        return ratio, ratio

    def ratio_of_medians(*resampled: np.ndarray, axis: int) -> np.ndarray:
        drawn = iter(resampled)
        a = np.median(next(drawn), axis=axis) if len(num) > 1 else np.median(num)
        b = np.median(next(drawn), axis=axis) if len(den) > 1 else np.median(den)
        return a / b

    boot = stats.bootstrap(varied, ratio_of_medians, n_resamples=resamples, confidence_level=confidence,
                           method="percentile", vectorized=True, rng=rng)
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def _times(table: pd.DataFrame, point_id: str) -> np.ndarray:
    rows = table[(table["point_id"] == point_id) & table["ok"]]
    return rows["time_s"].to_numpy(dtype=np.float64)


def _pairs(cells: pd.DataFrame, panel: str, keys: list[str], numerator: str, denominator: str) -> pd.DataFrame:
    part = cells[cells["panel"] == panel]
    num = part[part["transport"] == numerator].set_index(keys).add_suffix("_num")
    den = part[part["transport"] == denominator].set_index(keys).add_suffix("_den")
    return num.join(den, how="inner").reset_index()


def _cell(table: pd.DataFrame, r: pd.Series, threshold: float, resamples: int, confidence: float,
          rng: np.random.Generator) -> dict:
    num, den = _times(table, r["point_id_num"]), _times(table, r["point_id_den"])
    lo, hi = ratio_of_medians_ci(num, den, resamples, confidence, rng)
    ratio = float(np.median(num) / np.median(den)) if len(num) and len(den) else None
    s_num = [1.0 - p for p in reversed(binomial_ci(int(r["failures_num"]), int(r["runs_num"]), confidence))]
    s_den = [1.0 - p for p in reversed(binomial_ci(int(r["failures_den"]), int(r["runs_den"]), confidence))]
    failure = max(float(r["failure_rate_num"]), float(r["failure_rate_den"]))
    return {"ratio": ratio, "ratio_lo": lo, "ratio_hi": hi, "failure_rate": failure,
            "success_lo": min(s_num[0], s_den[0]), "success_hi": min(s_num[1], s_den[1]),
            "marked": bool(1.0 - failure < threshold),
            "spurious": float(r["mean_spurious_num"]), "runs": int(r["runs_num"])}


def _span(cells: list[dict], field: str = "ratio") -> dict:
    ok = [c for c in cells if c[field] is not None]
    full = ok and all(c[f"{field}_lo"] is not None for c in ok)
    out: dict = {"cells": len(ok)}
    for end, pick in (("min", min), ("max", max)):
        out[end] = pick(c[field] for c in ok) if ok else None
        out[f"{end}_lo"] = pick(c[f"{field}_lo"] for c in ok) if full else None
        out[f"{end}_hi"] = pick(c[f"{field}_hi"] for c in ok) if full else None
    return out


def sweep_intervals(table: pd.DataFrame, cell_stats: pd.DataFrame, settings: SensitivityParams,
                    ratio_hops: Sequence[int], resamples: int, confidence: float, seed: int) -> dict:
    """Every Fig. 4a/4b cell with its ratio interval and success interval; the §VII ranges with theirs (``cell_stats``:
    the sweep's cell table)."""
    rng = np.random.default_rng(seed)
    r, threshold = settings.report, settings.success_threshold
    out: dict = {}
    grid = {}
    for figure, numerator in (("fig4a", "ipv6"), ("fig4b", "pull")):
        cells = {}
        for _, row in _pairs(cell_stats, "interference", ["occupancy_pct", "burst_ms"], numerator, "block").iterrows():
            key = f"occ{row['occupancy_pct']:g}_burst{row['burst_ms']:g}"
            cells[key] = {"occupancy_pct": float(row["occupancy_pct"]), "burst_ms": float(row["burst_ms"]),
                          **_cell(table, row, threshold, resamples, confidence, rng)}
        out[figure] = cells
        grid[figure] = list(cells.values())
    a, b = grid["fig4a"], grid["fig4b"]
    long = [c for c in a if c["burst_ms"] >= r.long_burst_ms]
    out["fig4a_range"] = _span(a) | {"cells_total": len(a)}
    failures = [(c["failure_rate"], 1.0 - c["success_hi"], 1.0 - c["success_lo"]) for c in long]
    out["fig4a_long_burst_failure"] = {
        "max": max(f[0] for f in failures) if failures else None,
        "max_lo": max(f[1] for f in failures) if failures else None,
        "max_hi": max(f[2] for f in failures) if failures else None, "cells": len(failures)}
    short = [c for c in b if c["burst_ms"] <= r.short_burst_ms]
    busy = [c for c in b if c["burst_ms"] >= r.long_burst_ms and c["occupancy_pct"] >= r.busy_occupancy_pct]
    out["fig4b_short_range"] = _span(short)
    out["fig4b_long_busy_range"] = _span(busy)
    timers = {}
    for _, row in _pairs(cell_stats, "timers", ["controller_interval_ms", "device_boost_ms", "hops"], "ipv6",
                         "block").iterrows():
        key = f"ctrl{int(row['controller_interval_ms'])}ms_boost{int(row['device_boost_ms'])}ms_{int(row['hops'])}hop"
        timers[key] = {"controller_interval_ms": int(row["controller_interval_ms"]),
                       "device_boost_ms": int(row["device_boost_ms"]), "hops": int(row["hops"]),
                       **_cell(table, row, threshold, resamples, confidence, rng)}
    out["fig4c"] = timers
    far = [c for c in timers.values() if c["hops"] in set(ratio_hops)]
    out["fig4c_far_range"] = _span(far) | {"cells_total": len(far),
                                          "settings": len({(c["controller_interval_ms"], c["device_boost_ms"])
                                                           for c in timers.values()})}
    segs = cell_stats[cell_stats["panel"] == "segments"]
    reference = settings.segments.reference_payload
    seg_out: dict = {}
    for size in sorted({int(s) for s in segs["segment_payload"]} - {reference}):
        cells = []
        for index in sorted({int(i) for i in segs["scenario_index"]}):
            mine = segs[segs["scenario_index"] == index]
            num, den = mine[mine["segment_payload"] == size], mine[mine["segment_payload"] == reference]
            if num.empty or den.empty:
                continue
            a_t, b_t = _times(table, num["point_id"].iloc[0]), _times(table, den["point_id"].iloc[0])
            lo, hi = ratio_of_medians_ci(a_t, b_t, resamples, confidence, rng)
            rel = float(np.median(a_t) / np.median(b_t)) if len(a_t) and len(b_t) else None
            cells.append({"slower": None if rel is None else (rel - 1) * 100,
                          "slower_lo": None if lo is None else (lo - 1) * 100,
                          "slower_hi": None if hi is None else (hi - 1) * 100})
        seg_out[str(size)] = _span(cells, "slower")
    out["segments_range"] = seg_out
    return out
