"""Eq. 1 against the sweep, like with like, and the claims whose verdict depends on the signing library.

The sweep measures a mean (all controller time over all reports), so both model curves are fed means: Eq. 1 **as
published** (the cost study's means: C_mac + C_leaf from Table I's rows, Table I's signature, a 4 KiB write+fsync)
and Eq. 1 with **the path's own terms**, every term probed in the sweep's own trials (the controller path's work
per report and per checkpoint from the path probe, the signature from the checkpoint probe, and the append + fsync
of the real checkpoint of each k right after a signature, as the sweep does it, from the same probe; the
back-to-back fsync probe is kept beside it). The median relative error of each gets a two-level bootstrap
interval (see :func:`median_error_ci`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pqlab.amort import eq1
from pqlab.errors import StudyInputError
from pqlab.raw_labels import beside_scheme
from pqlab.seeds import derive_seed

PUBLISHED, PATH = "as_published", "path_terms"
MODELS = {PUBLISHED: "Eq. 1 as published (Table I rows, 4 KiB fsync; cost-study means)",
          PATH: "Eq. 1 with the path's own terms (path and checkpoint probes in the sweep's rounds)"}


@dataclass(frozen=True)
class PathTerms:
    """Eq. 1's terms measured on the path the sweep runs (µs): per report, per checkpoint (without signature and
    write), the signature (signing probe's mean; the cost study's mean beside it) and the append + fsync of the
    real checkpoint by devices touched."""

    label: str
    per_report_us: float
    per_checkpoint_us: float
    c_sign_us: float
    fsync_us: dict[int, float] = field(default_factory=dict)   # empty: no durable log
    octets: dict[int, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    c_sign_cost_study_us: float | None = None   # the cost study's mean, beside the probe's
    fsync_back_to_back_us: dict[int, float] = field(default_factory=dict)  # the back-to-back fsync probe, beside

    def fsync_at(self, k: np.ndarray) -> np.ndarray:
        """C_fsync at interval ``k``: the probe of the checkpoint size a batch of k reports produces."""
        ks = np.asarray(k, dtype=float)
        if not self.fsync_us:
            return np.zeros_like(ks)
        touched = sorted(self.fsync_us)
        want = np.clip(np.floor(ks), touched[0], touched[-1])
        index = np.searchsorted(touched, want, side="right") - 1   # the largest probed count <= k
        return np.array([self.fsync_us[touched[i]] for i in np.atleast_1d(index)]).reshape(ks.shape)

    def cost(self, k: np.ndarray | float) -> np.ndarray:
        """Amortised cost per report at ``k`` (µs)."""
        ks = np.asarray(k, dtype=float)
        return self.per_report_us + (self.per_checkpoint_us + self.c_sign_us + self.fsync_at(ks)) / ks


def path_terms(path_rows: pd.DataFrame, fsync_rows: pd.DataFrame, sign_rows: pd.DataFrame, sizes: pd.DataFrame,
               means: dict[str, eq1.CostInputs], baselines: dict[str, Any], k_small: int,
               k_large: int) -> dict[str, PathTerms]:
    """Per baseline: the path's per-report cost (slope of the probe's mean checkpoint time between ``k_small`` and
    ``k_large``), its per-checkpoint cost (the intercept), the signing probe's mean signature (the cost study's
    mean beside it) and the checkpoint probe's mean append + fsync after a signature per checkpoint size (the
    back-to-back fsync probe's beside it)."""
    if k_large <= k_small:
        raise StudyInputError(f"the path probe needs two intervals, got {k_small} and {k_large}",
                              field="amortisation.intervals")
    out = {}
    for scheme, base in baselines.items():
        rows = path_rows[path_rows["signer"] == base.signer]
        small = rows.loc[rows["k"] == k_small, "path_ns"].mean() / 1000.0
        large = rows.loc[rows["k"] == k_large, "path_ns"].mean() / 1000.0
        if not (math.isfinite(small) and math.isfinite(large)):
            raise StudyInputError(f"no path probe for {base.signer}", field=f"amortisation.baselines.{scheme}")
        slope = (large - small) / (k_large - k_small)
        fsync, octets = {}, {}
        mine = sizes[sizes["signer"] == base.signer]
        signed = sign_rows[sign_rows["signer"] == base.signer]
        if signed.empty:
            raise StudyInputError(f"no signing probe for {base.signer}", field=f"amortisation.baselines.{scheme}")
        back_to_back = {}
        if base.durable_log:
            probe = fsync_rows[fsync_rows["signer"] == base.signer]
            back_to_back = {int(t): float(g["ns"].mean()) / 1000.0 for t, g in probe.groupby("touched")}
            appended = signed.dropna(subset=["append_ns"]) if "append_ns" in signed else signed.iloc[:0]
            if appended.empty:
                raise StudyInputError(f"no append after a signature for {base.signer}'s durable log",
                                      field=f"amortisation.baselines.{scheme}")
            fsync = {int(t): float(g["append_ns"].mean()) / 1000.0 for t, g in appended.groupby("touched")}
        octets = {int(r.touched): int(r.checkpoint_octets) for r in mine.itertuples()}
        out[scheme] = PathTerms(
            base.label, slope, small - slope * k_small, float(signed["ns"].mean()) / 1000.0, fsync, octets,
            c_sign_cost_study_us=means[scheme].c_sign, fsync_back_to_back_us=back_to_back,
            sources={"per_report": f"path probe, {base.signer}: mean checkpoint time at k = {k_small} and {k_large}",
                     "c_sign": f"signing probe, {base.signer} [{signed['backend'].iloc[0]}]: mean of {len(signed)} "
                               f"signatures in the sweep's trials",
                     "c_fsync": "checkpoint probe: DurableLog.append of the real checkpoint right after a signature, "
                                "mean" if fsync else "none"})
    return out


def compare(points: pd.DataFrame, published: dict[str, eq1.CostInputs],
            path: dict[str, PathTerms]) -> pd.DataFrame:
    """Each point beside both models at its k: model costs, relative errors |measured - model| / model, and each
    error's range over the point's interval."""
    out = points.copy()
    models = {PUBLISHED: [eq1.cost(published[s], k) for s, k in zip(out["scheme"], out["k"], strict=True)],
              PATH: [float(path[s].cost(k)) for s, k in zip(out["scheme"], out["k"], strict=True)]}
    out["model_us"] = models[PUBLISHED]
    out["model_path_us"] = models[PATH]
    for name, column in ((PUBLISHED, "model_us"), (PATH, "model_path_us")):
        model = out[column].to_numpy()
        suffix = "" if name == PUBLISHED else "_path"
        out[f"relative_error{suffix}"] = eq1.relative_errors(out["measured_us"].to_numpy(), model)
        lo = np.abs(out["measured_lo"].to_numpy() - model) / model
        hi = np.abs(out["measured_hi"].to_numpy() - model) / model
        inside = (out["measured_lo"].to_numpy() <= model) & (model <= out["measured_hi"].to_numpy())
        out[f"relative_error{suffix}_lo"] = np.where(inside, 0.0, np.minimum(lo, hi))
        out[f"relative_error{suffix}_hi"] = np.maximum(lo, hi)
    return out


def median_error_ci(points: pd.DataFrame, replicates: dict[tuple[str, int], np.ndarray], model_column: str,
                    confidence: float, seed: int) -> tuple[float, float, float]:
    """Median relative error over one baseline's points with a two-level percentile bootstrap: each replicate
    resamples the points (k values) with replacement and draws each point's mean from its own bootstrap
    distribution over checkpoints, so the interval carries both which k were swept and how precisely each was
    measured. Hand-written because scipy's bootstrap resamples one level only. Model inputs are held fixed."""
    model = points[model_column].to_numpy(dtype=float)
    measured = points["measured_us"].to_numpy(dtype=float)
    point = float(np.median(np.abs(measured - model) / model))
    draws = np.vstack([replicates[(s, int(k))] for s, k in zip(points["scheme"], points["k"], strict=True)])
    resamples = draws.shape[1]
    rng = np.random.default_rng(seed)
    pick = rng.integers(len(points), size=(resamples, len(points)))
    means = draws[pick, np.arange(resamples)[:, None]]
    medians = np.median(np.abs(means - model[pick]) / model[pick], axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(medians, [alpha, 1 - alpha])
    return point, float(low), float(high)


def library_claims(cost_stats: pd.DataFrame, points: pd.DataFrame, published_medians: dict[str, eq1.CostInputs],
                   baselines: dict[str, Any], main: dict[str, str], beside: dict[str, list[str]], first: int,
                   last: int) -> pd.DataFrame:
    """Per baseline and signing backend: the claims whose verdict depends on the library — the dominant term of
    C_sign + C_fsync and its share and k* (Eq. 1 with Table I's medians and that backend's signature median),
    Eq. 1's reduction from k = ``first`` to ``last`` and the measured one (the backend's sweep points)."""
    rows = []
    for scheme, base in baselines.items():
        for backend in [main[scheme], *beside.get(scheme, [])]:
            sign = cost_stats[(cost_stats["op_id"] == f"sign_{base.signer}") & (cost_stats["backend"] == backend)]
            point_scheme = scheme if backend == main[scheme] else beside_scheme(scheme, backend)
            mine = points[points["scheme"] == point_scheme].set_index("k")
            row: dict[str, Any] = {"baseline": scheme, "label": base.label, "signer": base.signer,
                                   "backend": backend, "main": backend == main[scheme]}
            if len(sign):
                inputs = eq1.CostInputs(published_medians[scheme].c_mac, published_medians[scheme].c_leaf,
                                        float(sign["median"].iloc[0]), published_medians[scheme].c_fsync)
                split = eq1.shares(inputs)
                row |= {"c_sign_median_us": inputs.c_sign, "c_sign_mean_us": float(sign["mean"].iloc[0]),
                        "c_fsync_median_us": inputs.c_fsync, "dominant": eq1.dominant(inputs),
                        "share_signature_pct": 100 * split[eq1.SIGNATURE], "share_write_pct": 100 * split[eq1.WRITE],
                        "k_star": eq1.k_star(inputs), "reduction_eq1": eq1.reduction(inputs, first, last)}
            if first in mine.index and last in mine.index:
                lo, hi = mine.loc[first], mine.loc[last]
                row |= {"cost_first_us": float(lo["measured_us"]), "cost_last_us": float(hi["measured_us"]),
                        "reduction_measured": float(lo["measured_us"] / hi["measured_us"]),
                        "half_width_first_pct": float(lo["half_width_pct"]),
                        "half_width_last_pct": float(hi["half_width_pct"])}
            rows.append(row)
    return pd.DataFrame(rows)


def median_errors(compared: pd.DataFrame, replicates: dict[tuple[str, int], np.ndarray], cfg: Any,
                  seed: int) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Per baseline of ``cfg.baselines``, both models' median relative error with its interval
    (:func:`median_error_ci`, seeded per baseline)."""
    return {scheme: {name: median_error_ci(compared[compared["scheme"] == scheme], replicates, column,
                                           cfg.confidence, derive_seed(seed, scheme))
                     for name, column in ((PUBLISHED, "model_us"), (PATH, "model_path_us"))}
            for scheme in cfg.baselines}
