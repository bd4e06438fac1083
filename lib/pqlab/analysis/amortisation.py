"""AMORT-V1 §V-D from the sweep's raw samples: Eq. 1's inputs from the cost study, Table II, the model table,
the curve for ``dvc plots``, the omission and equivocation summaries, the backend × storage summary and the
stage's headline metrics (computes and returns; pqlab.studies.amortisation reads and writes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from pqlab.amort import eq1
from pqlab.analysis import amortisation_metrics as report
from pqlab.errors import StudyInputError
from pqlab.params import AmortisationParams, StudyParams
from pqlab.raw_labels import PER_CHECKPOINT_PHASES, PER_REPORT_PHASES, PHASES
from pqlab.stats import level, median_ci

COSTS_STATS = "costs_stats.parquet"


def per_trial(raw: pd.DataFrame) -> pd.DataFrame:
    """Amortised cost per report of each (scheme, k, trial): all controller time / all reports, and its split."""
    keys = ["scheme", "label", "signer", "backend", "durable_log", "storage", "k", "trial"]
    sums = raw.groupby(keys, sort=False)[["reports", "total_ns", *PHASES]].sum()
    counts = raw.groupby(keys, sort=False).size().rename("checkpoints")
    out = sums.join(counts).reset_index()
    out["amortised_us"] = out["total_ns"] / out["reports"] / 1000.0
    out["per_report_us"] = out[list(PER_REPORT_PHASES)].sum(axis=1) / out["reports"] / 1000.0
    out["per_checkpoint_us"] = out[list(PER_CHECKPOINT_PHASES)].sum(axis=1) / out["checkpoints"] / 1000.0
    out["sign_us"] = out["sign_ns"] / out["checkpoints"] / 1000.0
    out["write_us"] = out["write_ns"] / out["checkpoints"] / 1000.0
    return out


def backends(raw: pd.DataFrame, plan: pd.DataFrame, cfg: AmortisationParams) -> tuple[dict[str, str],
                                                                                       dict[str, list[str]]]:
    """The backend each baseline's main points signed with, and the backends its points beside the main comparison
    signed with (in the sweep plan's order): read from what was measured, wherever that was."""
    main = {scheme: str(raw.loc[raw["scheme"] == scheme, "backend"].iloc[0]) for scheme in cfg.baselines}
    schemes = list(dict.fromkeys(plan["scheme"]))
    beside = {scheme: [s.split("@", 1)[1] for s in schemes if s.startswith(f"{scheme}@")] for scheme in cfg.baselines}
    return main, beside


def _median(stats: pd.DataFrame, op_id: str, backend: str | None, field: str,
            statistic: str = "median") -> tuple[float, str]:
    rows = stats[stats["op_id"] == op_id]
    if backend is not None:
        rows = rows[rows["backend"] == backend]
    elif "in_table1" in rows and rows["in_table1"].any():
        rows = rows[rows["in_table1"]]
    if rows.empty:
        where = f" on backend {backend}" if backend else ""
        raise StudyInputError(f"{COSTS_STATS} has no row {op_id!r}{where}; rerun the costs stage with it",
                              field=field)
    row = rows.iloc[0]
    return float(row[statistic]), f"{op_id} [{row['backend']}]"


def model_inputs(stats: pd.DataFrame, cfg: AmortisationParams, backends: dict[str, str],
                 statistic: str = "median") -> dict[str, eq1.CostInputs]:
    """Eq. 1's inputs as published, per baseline, read from the cost study (never typed in): Table I's HMAC and
    Merkle rows, the signing row of the baseline's signer on the backend the sweep signed with (``backends``),
    Table I's 4 KiB write+fsync. ``statistic="median"`` gives Table I's values (k*, shares, the floor as the paper
    computes them); ``"mean"`` is what the sweep's means are compared with."""
    names = cfg.model_inputs
    c_mac, mac_src = _median(stats, names.mac, None, "amortisation.model_inputs.mac", statistic)
    c_leaf, leaf_src = _median(stats, names.leaf, None, "amortisation.model_inputs.leaf", statistic)
    out = {}
    for scheme, base in cfg.baselines.items():
        c_sign, sign_src = _median(stats, f"sign_{base.signer}", backends[scheme],
                                   f"amortisation.baselines.{scheme}.signer", statistic)
        sources = {"c_mac": mac_src, "c_leaf": leaf_src, "c_sign": sign_src, "statistic": statistic}
        c_fsync = 0.0
        if base.durable_log:
            c_fsync, sources["c_fsync"] = _median(stats, names.fsync, None, "amortisation.model_inputs.fsync",
                                                  statistic)
        out[scheme] = eq1.CostInputs(c_mac, c_leaf, c_sign, c_fsync, label=base.label, sources=sources)
    return out


def table2(compared: pd.DataFrame, inputs: dict[str, eq1.CostInputs], cfg: AmortisationParams) -> pd.DataFrame:
    """Table II: mean amortised cost per report at the first and last interval (with the interval's half-width),
    both Eq. 1 curves (fed the cost study's means), the reductions and each model's median relative error."""
    first, last = cfg.intervals[0], cfg.intervals[-1]
    rows = []
    for scheme, base in cfg.baselines.items():
        points = compared[compared["scheme"] == scheme].set_index("k")
        lo, hi = points.loc[first], points.loc[last]
        rows.append({
            "Signer": base.signer, "Backend": lo["backend"], "Durable log": "Yes" if base.durable_log else "No",
            f"k = {first} measured [µs]": lo["measured_us"], f"k = {first} ± [%]": lo["half_width_pct"],
            f"k = {last} measured [µs]": hi["measured_us"], f"k = {last} ± [%]": hi["half_width_pct"],
            "Reduction measured": lo["measured_us"] / hi["measured_us"],
            f"k = {first} Eq. 1 [µs]": lo["model_us"], f"k = {last} Eq. 1 [µs]": hi["model_us"],
            "Reduction Eq. 1": eq1.reduction(inputs[scheme], first, last),
            f"k = {first} Eq. 1 path terms [µs]": lo["model_path_us"],
            f"k = {last} Eq. 1 path terms [µs]": hi["model_path_us"],
            "Median relative error": float(np.median(points["relative_error"])),
            "Median relative error (path terms)": float(np.median(points["relative_error_path"])),
        })
    return pd.DataFrame(rows)


def model_table(inputs: dict[str, eq1.CostInputs], cfg: AmortisationParams) -> pd.DataFrame:
    """Eq. 1 per baseline: its four measured inputs, floor, k*, the signature/write split, the endpoint reduction."""
    first, last = cfg.intervals[0], cfg.intervals[-1]
    rows = []
    for values in inputs.values():
        split = eq1.shares(values)
        rows.append({"Baseline": values.label, "C_mac [µs]": values.c_mac, "C_leaf [µs]": values.c_leaf,
                     "C_sign [µs]": values.c_sign, "C_fsync [µs]": values.c_fsync, "Floor [µs]": values.floor,
                     "k*": eq1.k_star(values), "Signature share": split[eq1.SIGNATURE],
                     "Write share": split[eq1.WRITE], "Dominant": eq1.dominant(values),
                     f"Reduction k={first}->{last}": eq1.reduction(values, first, last),
                     "Signature measured as": values.sources.get("c_sign", "")})
    return pd.DataFrame(rows)


def omission_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and k: trials, exposed, delay median and max (records), max / k, and which checks fired."""
    rows = []
    for (strategy, k), group in frame.groupby(["strategy", "k"], sort=False):
        delays = group["delay_records"].dropna()
        rows.append({"Strategy": strategy, "k": int(k), "Trials": len(group), "Exposed": int(group["exposed"].sum()),
                     "By next checkpoint": int((group["checkpoints_until_exposed"] == 1).sum()),
                     "Median delay [records]": float(delays.median()) if len(delays) else float("nan"),
                     "Max delay [records]": float(delays.max()) if len(delays) else float("nan"),
                     "Max / k": float(delays.max() / k) if len(delays) else float("nan"),
                     "Checks": "; ".join(f"{name}: {n}" for name, n in group["check"].value_counts().items())})
    return pd.DataFrame(rows)


def curve_csv(compared: pd.DataFrame) -> pd.DataFrame:
    """The amortisation curve for ``dvc plots``: one row per k; per baseline the measured mean with its interval
    and half-width, the checkpoints behind it, and both Eq. 1 curves (µs and log10 µs)."""
    columns = ["measured_us", "measured_lo", "measured_hi", "half_width_pct", "checkpoints", "model_us",
               "model_path_us"]
    wide = compared.pivot(index="k", columns="scheme", values=columns)
    out = pd.DataFrame({"k": wide.index, "log2_k": np.log2(wide.index.to_numpy(dtype=float))})
    for scheme in wide["measured_us"].columns:
        for kind, name in (("measured_us", "measured_us"), ("measured_lo", "measured_lo_us"),
                           ("measured_hi", "measured_hi_us"), ("half_width_pct", "half_width_pct"),
                           ("checkpoints", "checkpoints"), ("model_us", "model_us"),
                           ("model_path_us", "model_path_us")):
            out[f"{scheme}_{name}"] = wide[kind][scheme].to_numpy()
        for kind in ("measured_us", "model_us", "model_path_us"):
            out[f"{scheme}_{kind.removesuffix('_us')}_log10_us"] = np.log10(wide[kind][scheme].to_numpy(dtype=float))
    return out.reset_index(drop=True)


def _delay_interval(delays: pd.Series, statistic, k: int, resamples: int,
                    confidence: float) -> tuple[float | None, float | None]:
    """Percentile-bootstrap interval of a statistic of the omission delays (seeded by k)."""
    data = delays.to_numpy(dtype=float)
    if len(data) < 2 or np.ptp(data) == 0:
        return (float(statistic(data)),) * 2 if len(data) else (None, None)
    boot = stats.bootstrap((data,), statistic, n_resamples=resamples, confidence_level=confidence,
                           method="percentile", rng=np.random.default_rng(int(k)))
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


MODEL_REPLICATES = 4000


def model_holds(group: pd.DataFrame) -> bool:
    """Whether one interval's trials follow the detection model: every omission exposed by the next checkpoint,
    after the records that followed it in its batch (delay = k - position + 1, position 1-based)."""
    k = group["k"].to_numpy()
    return bool(len(group)) and bool(group["exposed"].all()) \
        and bool((group["checkpoints_until_exposed"] == 1).all()) \
        and bool((group["delay_records"].to_numpy() == k - group["position"].to_numpy() + 1).all())


def model_interval(k: int, trials: int, statistic: Any, confidence: float, seed: int) -> tuple[float, float]:
    """Central ``confidence`` interval of a statistic (median, max) of ``trials`` omission delays under the detection
    model: the omitted record's position is uniform in its batch, so its delay is uniform on 1..k (Monte Carlo,
    seeded). A bootstrap of the sample itself cannot do this for a maximum, which it never places above the
    sample's own."""
    rng = np.random.default_rng([seed, k, trials])
    draws = rng.integers(1, k + 1, size=(MODEL_REPLICATES, trials))
    values = statistic(draws, axis=1)
    tail = (1.0 - confidence) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def omission_metrics(frame: pd.DataFrame, resamples: int, confidence: float, seed: int) -> dict[str, Any]:
    """``omission``: per strategy and k the trials, exposures, delays with their intervals (at ``confidence``) and
    the checks fired; where the trials follow the detection model, the model's interval of their median and
    maximum."""
    out: dict[str, Any] = {}
    for strategy, by_strategy in frame.groupby("strategy", sort=False):
        per_k = {}
        for k, group in by_strategy.groupby("k"):
            delays = group["delay_records"].dropna()
            median_ci = _delay_interval(delays, np.median, k, resamples, confidence)
            max_ci = _delay_interval(delays, np.max, k, resamples, confidence)
            holds = model_holds(group)
            trials = len(group)
            model_median = model_interval(int(k), trials, np.median, confidence, seed) if holds else (None, None)
            model_max = model_interval(int(k), trials, np.max, confidence, seed) if holds else (None, None)
            per_k[f"k{k}"] = {
                "model_holds": holds,
                "median_delay_model_lo_records": model_median[0], "median_delay_model_hi_records": model_median[1],
                "max_delay_model_lo_records": model_max[0], "max_delay_model_hi_records": model_max[1],
                "k": int(k), "trials": len(group), "exposed": int(group["exposed"].sum()),
                "median_delay_records": float(delays.median()) if len(delays) else None,
                "median_delay_lo_records": median_ci[0], "median_delay_hi_records": median_ci[1],
                "max_delay_records": int(delays.max()) if len(delays) else None,
                "max_delay_lo_records": max_ci[0], "max_delay_hi_records": max_ci[1],
                "exposed_by_next_checkpoint": int((group["checkpoints_until_exposed"] == 1).sum()),
                "checks": {name: int(n) for name, n in group["check"].value_counts().items()},
            }
        ratio = (by_strategy["delay_records"] / by_strategy["k"]).max()
        out[strategy] = {
            "by_k": per_k, "trials": len(by_strategy), "exposed": int(by_strategy["exposed"].sum()),
            "all_exposed": bool(by_strategy["exposed"].all()),
            "all_by_next_checkpoint": bool((by_strategy["checkpoints_until_exposed"] == 1).all()),
            "exposed_by_next_checkpoint_pct": round(
                100 * float((by_strategy["checkpoints_until_exposed"] == 1).mean()), 3),
            "max_delay_over_k": round(float(ratio), 4) if pd.notna(ratio) else None,
            "checks": {name: int(n) for name, n in by_strategy["check"].value_counts().items()},
        }
    return out


def equivocation_metrics(frame: pd.DataFrame, k: int) -> dict[str, Any]:
    """``equivocation``: how many forked views were exposed, by gossip or alone, per variant."""
    return {
        "k": k, "trials": len(frame), "exposed": int(frame["exposed"].sum()),
        "exposed_pct": round(100 * float(frame["exposed"].mean()), 3),
        "exposed_by_gossip": int(frame["exposed_by_gossip"].sum()),
        "views_valid_alone": int((frame["view_a_valid_alone"] & frame["view_b_valid_alone"]).sum()),
        "variants": {name: int(n) for name, n in frame["variant"].value_counts().items()},
    }


def dominant_sentence(inputs: eq1.CostInputs, signer: str, backend: str, storage: str,
                      sensitivity: pd.DataFrame) -> str:
    """One sentence, from measured values only: which term dominates the amortisable cost here, and why."""
    split = eq1.shares(inputs)
    term = eq1.dominant(inputs)
    text = (f"The {term} dominates {signer}'s amortisable cost here ({split[term]:.0%} of "
            f"{inputs.amortisable:,.0f} µs) because {backend} signs in {inputs.c_sign:,.0f} µs while a write+fsync "
            f"on the {storage} takes {inputs.c_fsync:,.0f} µs (cost-study medians)")
    if len(sensitivity):
        by_term = {t: ", ".join(f"{r.backend} on {r.storage}" for r in group.itertuples())
                   for t, group in sensitivity.groupby("dominant", sort=False)}
        text += "; this run's backend × storage probe finds " + " and ".join(
            f"the {t} dominant with {names}" for t, names in by_term.items())
    return text + "."


def summarise_trials(trials: pd.DataFrame, resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    """Per (scheme, k): median amortised cost over trials with a percentile-bootstrap CI, and the phase medians."""
    rows = []
    keys = ["scheme", "label", "signer", "backend", "durable_log", "storage", "k"]
    for index, (key, group) in enumerate(trials.groupby(keys, sort=False)):
        median, lo, hi = median_ci(group["amortised_us"].to_numpy(), resamples, confidence, seed + index)
        rows.append({**dict(zip(keys, key, strict=True)), "trials": len(group), "reports": int(group["reports"].sum()),
                     "checkpoints": int(group["checkpoints"].sum()),
                     "measured_us": median, "measured_lo": lo, "measured_hi": hi,
                     "measured_min": float(group["amortised_us"].min()),
                     "measured_max": float(group["amortised_us"].max()),
                     "per_report_us": float(group["per_report_us"].median()),
                     "per_checkpoint_us": float(group["per_checkpoint_us"].median()),
                     "sign_us": float(group["sign_us"].median()), "write_us": float(group["write_us"].median())})
    return pd.DataFrame(rows).sort_values(["scheme", "k"], kind="stable").reset_index(drop=True)


def sensitivity(probe: pd.DataFrame, raw: pd.DataFrame, inputs: dict[str, eq1.CostInputs], cfg: AmortisationParams,
                seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per backend × storage combination: Eq. 1 with its probed C_sign and C_fsync (the cost study's C_mac and
    C_leaf), k*, the split, and the median error against its short sweep; and the sweep's points beside it."""
    any_inputs = next(iter(inputs.values()))
    rows, combos = [], {}
    for row in probe.to_dict("records"):
        model = eq1.CostInputs(any_inputs.c_mac, any_inputs.c_leaf, row["c_sign_us"], row["c_fsync_us"],
                               label=row["combo"])
        combos[row["combo"]] = model
        split = eq1.shares(model)
        rows.append(row | {"floor_us": model.floor, "k_star": eq1.k_star(model),
                           "share_signature": split[eq1.SIGNATURE], "share_write": split[eq1.WRITE],
                           "dominant": eq1.dominant(model)})
    summary = pd.DataFrame(rows)
    points = summarise_trials(per_trial(raw), cfg.bootstrap_resamples, cfg.confidence, seed)
    points["model_us"] = [eq1.cost(combos[s], k) for s, k in zip(points["scheme"], points["k"], strict=True)]
    points["relative_error"] = eq1.relative_errors(points["measured_us"].to_numpy(), points["model_us"].to_numpy())
    errors = points.groupby("scheme")["relative_error"].median()
    summary["median_relative_error"] = summary["combo"].map(errors)
    return summary, points.rename(columns={"scheme": "combo"})


def metrics(settings: StudyParams, inputs: dict[str, eq1.CostInputs], compared: pd.DataFrame,
            per_trial: pd.DataFrame, omission: pd.DataFrame, equivocation: pd.DataFrame,
            sensitivity: pd.DataFrame, provenance: dict, info: dict[str, Any]) -> dict[str, Any]:
    """Headline numbers for ``dvc metrics show`` and REPORT.md (``info``: the measurement's metadata, the sweep's
    statistics, its errors, both models' inputs, the per-backend claims)."""
    cfg = settings.amortisation
    first, last = cfg.intervals[0], cfg.intervals[-1]
    model, measured = {}, {}
    for scheme, values in inputs.items():
        split = eq1.shares(values)
        model[scheme] = {
            "label": values.label, "c_mac_us": values.c_mac, "c_leaf_us": values.c_leaf, "c_sign_us": values.c_sign,
            "c_fsync_us": values.c_fsync, "floor_us": round(values.floor, 4), "k_star": round(eq1.k_star(values), 1),
            "share_signature_pct": round(100 * split[eq1.SIGNATURE], 2),
            "share_write_pct": round(100 * split[eq1.WRITE], 2), "dominant": eq1.dominant(values),
            "cost_first_us": round(eq1.cost(values, first), 4), "cost_last_us": round(eq1.cost(values, last), 4),
            "reduction": round(eq1.reduction(values, first, last), 2), "sources": values.sources}
        points = compared[compared["scheme"] == scheme].set_index("k")
        measured[scheme] = report.measured_block(info["means"][scheme], points,
                                                 per_trial[per_trial["scheme"] == scheme], info["errors"][scheme],
                                                 first, last)
    log_schemes = [s for s, b in cfg.baselines.items() if b.durable_log and b.signer == "ML-DSA-65"] \
        or list(cfg.baselines)
    focus = log_schemes[0]
    focus_backend = info["main_backend"][focus]
    moves = sensitivity[sensitivity["signer"] == cfg.baselines[focus].signer]
    return {
        "profile": settings.profile, "confidence": cfg.confidence, "cpu_model": info["metadata"]["cpu_model"],
        "controller_path": info["metadata"]["controller_path"],
        "inputs": provenance, "intervals": list(cfg.intervals), "k_first": first, "k_last": last,
        "samples": {"sweep_trials": cfg.trials, "omission_trials": cfg.omission_trials,
                    "equivocation_trials": cfg.equivocation_trials, "min_reports": cfg.min_reports,
                    "min_checkpoints": cfg.min_checkpoints},
        "floor_us": round(next(iter(inputs.values())).floor, 4),
        "model": model, "measured": measured,
        "eq1_inputs": report.eq1_inputs_block(info["means"], info["path"]),
        "sweep": report.sweep_summary(cfg, info["all_stats"], info["plan"], info["path_rows"], info["fsync_rows"],
                                      info["sign_rows"],
                                      info["metadata"]["sweep_wall_s"], info["metadata"]["sweep_budget_s"]),
        "library_dependent": report.library_dependent_block(info["claims"], info["main_backend"]),
        "omission": omission_metrics(omission, cfg.bootstrap_resamples, cfg.confidence, settings.seed),
        "equivocation": equivocation_metrics(equivocation, cfg.equivocation_k),
        "sensitivity": {
            r.combo: {"signer": r.signer, "backend": r.backend, "storage": r.storage,
                      "c_sign_us": round(r.c_sign_us, 3), "c_fsync_us": round(r.c_fsync_us, 3),
                      "k_star": round(r.k_star, 1), "dominant": r.dominant,
                      "share_signature_pct": round(100 * r.share_signature, 2),
                      "median_relative_error_pct": round(100 * r.median_relative_error, 3)}
            for r in sensitivity.itertuples()},
        "dominant": {"scheme": focus, "term": eq1.dominant(inputs[focus]),
                     "sentence": dominant_sentence(inputs[focus], cfg.baselines[focus].signer, focus_backend,
                                                   cfg.log_storage, moves)},
        "sanity": sanity(measured, per_trial, first, cfg.confidence),
    }


def sanity(measured: dict[str, Any], per_trial: pd.DataFrame, first: int, confidence: float) -> dict[str, Any]:
    """The sweep checked against its own parts: at the first interval every report pays its share of a whole
    checkpoint, so the cost per report is at least the signature and write the same checkpoints took (their means
    over those trials, divided by k). The top of the cost's interval (at ``confidence``) below that sum is a
    contradiction in the measurement; the failure names the keys it makes unusable."""
    failed = []
    for scheme, block in measured.items():
        mine = per_trial[(per_trial["scheme"] == scheme) & (per_trial["k"] == first)]
        if mine.empty:
            continue
        weight = mine["checkpoints"].to_numpy(dtype=float)
        parts = float(((mine["sign_us"] + mine["write_us"]).to_numpy() * weight).sum() / weight.sum()) / first
        top = block["cost_first_ci_us"][1]
        if top < parts:
            failed.append({"check": f"{scheme}: the cost at k = {first} is at least its signature and write",
                           "keys": [f"measured.{scheme}", f"model.{scheme}"],
                           "cause": f"{scheme}'s cost per report at k = {first} ({top:.1f} µs at the top of its "
                                    f"{level(confidence)} interval) is below the signature + write its checkpoints "
                                    f"took ({parts:.1f} µs)"})
    return {"checks": len(measured), "failed": failed}
