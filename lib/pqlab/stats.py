"""One place for summary statistics: medians and quantiles with percentile-bootstrap CIs, Mann–Whitney U,
Cliff's δ (scipy). Empty input gives NaN statistics with ``n = 0`` everywhere, never an exception."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

QUANTILES = {"median": 0.5, "p95": 0.95, "p99": 0.99}


@dataclass(frozen=True)
class Comparison:
    """Two conditions compared: Mann–Whitney U (two-sided), its p-value, and Cliff's δ (a vs b)."""

    u_statistic: float
    p_value: float
    cliffs_delta: float
    median_ratio: float


def quantile_cis(
    samples: np.ndarray, resamples: int, confidence: float, seed: int,
    quantiles: dict[str, float] | None = None,
) -> dict[str, float]:
    """Quantiles of ``samples`` (default median, p95, p99) with percentile-bootstrap confidence intervals.

    Keys: ``n``, ``mean`` and, per quantile, ``name``, ``name_lo``, ``name_hi``. No samples: NaN values, n = 0.
    """
    quantiles = QUANTILES if quantiles is None else quantiles
    data = np.asarray(samples, dtype=np.float64)
    result: dict[str, float] = {"n": float(data.size), "mean": float(data.mean()) if data.size else float("nan")}
    if data.size == 0:
        for name in quantiles:
            result[name] = result[f"{name}_lo"] = result[f"{name}_hi"] = float("nan")
        return result
    levels = np.array(list(quantiles.values()))
    point = np.quantile(data, levels)
    if data.size > 1 and np.ptp(data) > 0:
        boot = stats.bootstrap(
            (data,),
            lambda x, axis: np.quantile(x, levels, axis=axis),
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            vectorized=True,
            batch=max(1, 2_000_000 // data.size),
            rng=np.random.default_rng(seed),
        )
        lows, highs = boot.confidence_interval.low, boot.confidence_interval.high
    else:
        lows = highs = point
    for name, value, low, high in zip(quantiles, point, lows, highs, strict=True):
        result[name] = float(value)
        result[f"{name}_lo"] = float(low)
        result[f"{name}_hi"] = float(high)
    return result


def level(confidence: float) -> str:
    """A confidence level as the text says it: 0.95 -> "95 %"."""
    return f"{confidence * 100:g} %"


def median_ci(samples: np.ndarray, resamples: int, confidence: float, seed: int) -> tuple[float, float, float]:
    """(median, CI low, CI high) with a percentile bootstrap; NaN for no samples."""
    out = quantile_cis(samples, resamples, confidence, seed, {"median": 0.5})
    return out["median"], out["median_lo"], out["median_hi"]


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """Cliff's δ = P(a > b) − P(a < b), derived from scipy's Mann–Whitney U (δ = 2U/(n·m) − 1).

    scipy has no Cliff's δ; deriving it from U avoids an O(n·m) pairwise loop.
    """
    return compare(a, b).cliffs_delta


def compare(a: np.ndarray, b: np.ndarray) -> Comparison:
    """Mann–Whitney U test and Cliff's δ for two independent sets of timings (a relative to b)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    test = stats.mannwhitneyu(a, b, alternative="two-sided")
    delta = float(2.0 * test.statistic / (a.size * b.size) - 1.0)
    median_b = float(np.median(b))
    ratio = float(np.median(a)) / median_b if median_b else float("nan")
    return Comparison(float(test.statistic), float(test.pvalue), delta, ratio)
