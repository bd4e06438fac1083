"""The amortisation stage's metrics for the sweep and Eq. 1 like with like: per baseline the measured endpoints and
both models' errors with their intervals and every point's precision, both models' inputs, what the sweep spent, and
the claims per signing backend (the study writes them; this module only builds the dicts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pqlab.amort import eq1
from pqlab.analysis import amortisation_models as models
from pqlab.params import AmortisationParams


def fit_a_plus_b_over_k(points: pd.DataFrame) -> dict[str, float]:
    """Least squares of measured = a + b / k in relative terms: does the 1/k form hold, whatever the inputs?"""
    y, k = points["measured_us"].to_numpy(), points["k"].to_numpy(dtype=float)
    design = np.column_stack([1 / y, 1 / (k * y)])
    (a, b), *_ = np.linalg.lstsq(design, np.ones_like(y), rcond=None)
    fitted = a + b / k
    return {"per_report_us": round(float(a), 4), "per_checkpoint_us": round(float(b), 3),
            "median_relative_error_pct": round(float(np.median(np.abs(y - fitted) / y) * 100), 3)}


def pct(value: float) -> float:
    """A fraction as a percentage with three decimals."""
    return round(100 * float(value), 3)


def error_block(points: pd.DataFrame, column: str, ci: tuple[float, float, float]) -> dict[str, Any]:
    """One model's median relative error with its interval, the maximum and the error at every k (%)."""
    errors = points[column]
    return {"median_relative_error_pct": pct(ci[0]), "median_relative_error_ci_pct": [pct(ci[1]), pct(ci[2])],
            "max_relative_error_pct": pct(errors.max()),
            "relative_error_pct_by_k": {f"k{k}": pct(e) for k, e in errors.items()}}


def measured_block(values: eq1.CostInputs, points: pd.DataFrame, trials_here: pd.DataFrame,
                   errors: dict[str, tuple[float, float, float]], first: int, last: int) -> dict[str, Any]:
    """``measured.<baseline>``: the endpoints with their intervals, both models' errors, every point's precision,
    and where a miss comes from (``points``: the baseline's compared points indexed by k)."""
    lo, hi = points.loc[first], points.loc[last]
    published = error_block(points, "relative_error", errors[models.PUBLISHED])
    path = error_block(points, "relative_error_path", errors[models.PATH])
    return {
        "backend": lo["backend"], "cost_first_us": round(lo["measured_us"], 4),
        "cost_first_ci_us": [round(lo["measured_lo"], 4), round(lo["measured_hi"], 4)],
        "cost_last_us": round(hi["measured_us"], 4),
        "cost_last_ci_us": [round(hi["measured_lo"], 4), round(hi["measured_hi"], 4)],
        "reduction": round(lo["measured_us"] / hi["measured_us"], 2),
        # Eq. 1 as published, fed the cost study's means (the paper's comparison, like with like)
        **published,
        # Eq. 1 with the path's own terms
        **{f"{key}_path_terms": value for key, value in path.items()},
        "error_interval": "two-level percentile bootstrap: points resampled, each point's mean redrawn from its "
                          "bootstrap over checkpoints; model inputs fixed",
        "points": {f"k{k}": {"mean_us": round(r.measured_us, 4), "ci_us": [round(r.measured_lo, 4),
                                                                             round(r.measured_hi, 4)],
                             "half_width_pct": round(r.half_width_pct, 3), "checkpoints": int(r.checkpoints),
                             "reports": int(r.reports), "trials": int(r.trials),
                             "model_us": round(r.model_us, 4), "model_path_us": round(r.model_path_us, 4)}
                   for k, r in points.iterrows()},
        # where a miss comes from: the path's own per-report and per-checkpoint costs in the sweep itself
        "per_report_us_at_last_k": round(float(hi["per_report_us"]), 4),
        "per_checkpoint_sign_write_us": round(float(trials_here["per_checkpoint_us"].median()), 3),
        "sign_us": round(float(trials_here["sign_us"].median()), 3),
        "write_us": round(float(trials_here["write_us"].median()), 3),
        "checkpoint_path_overhead_us_at_k1": round(float(lo["per_report_us"] - hi["per_report_us"]) * first, 3),
        "checkpoint_cost_vs_model": round(float(trials_here["per_checkpoint_us"].median()) / values.amortisable, 4)
        if values.amortisable else None,
        "fit_a_plus_b_over_k": fit_a_plus_b_over_k(points.reset_index()),
        "checkpoint_octets": int(points["checkpoint_octets"].median()),
    }


def eq1_inputs_block(means: dict[str, eq1.CostInputs], path: dict[str, models.PathTerms]) -> dict[str, Any]:
    """``eq1_inputs``: both models' inputs per baseline (µs) and where each was measured."""
    return {
        "statistic": "mean",
        models.PUBLISHED: {s: {"c_mac_us": round(v.c_mac, 4), "c_leaf_us": round(v.c_leaf, 4),
                               "c_sign_us": round(v.c_sign, 3), "c_fsync_us": round(v.c_fsync, 3),
                               "floor_us": round(v.floor, 4), "sources": v.sources} for s, v in means.items()},
        models.PATH: {s: {"per_report_us": round(t.per_report_us, 4),
                          "per_checkpoint_us": round(t.per_checkpoint_us, 3), "c_sign_us": round(t.c_sign_us, 3),
                          "c_sign_cost_study_us": round(t.c_sign_cost_study_us, 3),
                          "c_fsync_us_by_devices": {f"d{d}": round(v, 3) for d, v in t.fsync_us.items()},
                          "c_fsync_back_to_back_us_by_devices": {f"d{d}": round(v, 3)
                                                                 for d, v in t.fsync_back_to_back_us.items()},
                          "checkpoint_octets_by_devices": {f"d{d}": v for d, v in t.octets.items()},
                          "sources": t.sources} for s, t in path.items()},
    }


def sweep_summary(cfg: AmortisationParams, stats_all: pd.DataFrame, plan: pd.DataFrame, path_rows: pd.DataFrame,
                  fsync_rows: pd.DataFrame, sign_rows: pd.DataFrame, wall_s: float,
                  budget_s: float) -> dict[str, Any]:
    """``sweep``: the target, how many points met it, the widest interval, and what the sweep spent (``plan``: the
    sweep's per-trial plan, which carries each point's target half-width)."""
    targets = {(r.scheme, int(r.k)): r.target_half_width_pct for r in plan.itertuples()}
    met = [row.half_width_pct <= targets[(row.scheme, int(row.k))] for row in stats_all.itertuples()]
    return {"target_half_width_pct": cfg.target_half_width_pct, "beside_half_width_pct": cfg.beside_half_width_pct,
            "budget_s": budget_s, "wall_s": round(wall_s, 1), "trials": cfg.trials,
            "points": len(stats_all), "points_meeting_target": int(sum(met)),
            "max_half_width_pct": round(float(stats_all["half_width_pct"].max()), 3),
            "checkpoints": int(stats_all["checkpoints"].sum()), "reports": int(stats_all["reports"].sum()),
            "order": "points and probes in a seeded random order within each trial",
            "path_probe": {"k_small": int(path_rows["k"].min()), "k_large": int(path_rows["k"].max()),
                           "checkpoints": len(path_rows)},
            "fsync_probe_appends": len(fsync_rows), "sign_probe_signatures": len(sign_rows)}


def library_dependent_block(claims: pd.DataFrame, main_backend: dict[str, str]) -> dict[str, Any]:
    """``library_dependent``: the per-backend claims table as nested dicts (baseline -> backend -> values)."""
    out: dict[str, Any] = {"main_backend": main_backend, "baselines": {}}
    for row in claims.to_dict("records"):
        values = {key: (round(value, 4) if isinstance(value, float) else value) for key, value in row.items()
                  if key not in ("baseline", "label", "signer", "backend") and not pd.isna(value)}
        out["baselines"].setdefault(row["baseline"], {})[row["backend"]] = values
    return out
