"""Stage ``amortisation`` (AMORT-V1 §V-D): Eq. 1 vs the interval sweep, omission/equivocation trials, Fig. 3/4."""

from __future__ import annotations

import itertools
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from pqlab import crypto, io, machine
from pqlab.amort import amortisation as eq1
from pqlab.amort import fastpath, trials
from pqlab.amort.lab import KeySet
from pqlab.analysis import costs as cost_analysis
from pqlab.bench import adaptive_sweep, costs
from pqlab.bench import amortisation as sweep
from pqlab.bench import amortisation_metrics as report
from pqlab.bench import amortisation_models as models
from pqlab.errors import OutputError, StudyInputError
from pqlab.figures.amortisation import amortisation_sensitivity, fig3_amortisation, fig4_tradeoff
from pqlab.params import AmortisationParams, StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet, rounded
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "amortisation"
COSTS_STATS = "costs_stats.parquet"
TRIAL_SIGNER = "ML-DSA-65"  # the detection trials' checkpoint signer (detection does not depend on it)


class ControllerPath(MetricsNode):
    requested: str
    used: str
    reason: str


class InputsProvenance(MetricsNode):
    source: str
    costs_profile: str | None
    costs_git_commit: str | None
    costs_timestamp_utc: str | None
    costs_cpu_model: str | None


class Samples(MetricsNode):
    sweep_trials: int
    omission_trials: int
    equivocation_trials: int
    min_reports: int
    min_checkpoints: int


class ModelBaseline(MetricsNode):
    """Eq. 1 for one baseline, fed with the costs stage's medians."""

    label: str
    c_mac_us: float
    c_leaf_us: float
    c_sign_us: float
    c_fsync_us: float
    floor_us: float
    k_star: float
    share_signature_pct: float
    share_write_pct: float
    dominant: str
    cost_first_us: float
    cost_last_us: float
    reduction: float
    sources: dict[str, str]


class Fit(MetricsNode):
    per_report_us: float
    per_checkpoint_us: float
    median_relative_error_pct: float


class SweepPoint(MetricsNode):
    """One (baseline, k) point of the sweep: its mean with a 95 % interval, how much it rests on, both models."""

    mean_us: float
    ci_us: list[float]
    half_width_pct: float
    checkpoints: int
    reports: int
    trials: int
    model_us: float
    model_path_us: float


class MeasuredBaseline(MetricsNode):
    """The sweep for one baseline on the controller path, Eq. 1 as published and with the path's own terms (each
    with its median error's interval), and where it departs from Eq. 1."""

    backend: str
    cost_first_us: float
    cost_first_ci_us: list[float]
    cost_last_us: float
    cost_last_ci_us: list[float]
    reduction: float
    median_relative_error_pct: float
    median_relative_error_ci_pct: list[float]
    max_relative_error_pct: float
    relative_error_pct_by_k: dict[str, float]
    median_relative_error_pct_path_terms: float
    median_relative_error_ci_pct_path_terms: list[float]
    max_relative_error_pct_path_terms: float
    relative_error_pct_by_k_path_terms: dict[str, float]
    error_interval: str
    points: dict[str, SweepPoint]
    per_report_us_at_last_k: float
    per_checkpoint_sign_write_us: float
    sign_us: float
    write_us: float
    checkpoint_path_overhead_us_at_k1: float
    checkpoint_cost_vs_model: float | None
    fit_a_plus_b_over_k: Fit
    checkpoint_octets: int


class PublishedInputs(MetricsNode):
    """Eq. 1's inputs as the paper states them (the cost study's means) and where each was measured."""

    c_mac_us: float
    c_leaf_us: float
    c_sign_us: float
    c_fsync_us: float
    floor_us: float
    sources: dict[str, str]


class PathInputs(MetricsNode):
    """Eq. 1 with the path's own terms: per-report and per-checkpoint path costs, the real checkpoint's fsync."""

    per_report_us: float
    per_checkpoint_us: float
    c_sign_us: float
    c_fsync_us_by_devices: dict[str, float]
    checkpoint_octets_by_devices: dict[str, int]
    sources: dict[str, str]


class Eq1Inputs(MetricsNode):
    statistic: str
    as_published: dict[str, PublishedInputs]
    path_terms: dict[str, PathInputs]


class PathProbe(MetricsNode):
    k_small: int
    k_large: int
    checkpoints: int


class SweepSummary(MetricsNode):
    """What the adaptive sweep aimed for, how many points met it, and what it spent."""

    target_half_width_pct: float
    beside_half_width_pct: float
    budget_s: float
    wall_s: float
    trials: int
    points: int
    points_meeting_target: int
    max_half_width_pct: float
    checkpoints: int
    reports: int
    order: str
    path_probe: PathProbe
    fsync_probe_appends: int


class BackendClaims(MetricsNode):
    """One baseline on one signing backend: Eq. 1's split and reduction, and the sweep's (when it ran there)."""

    main: bool
    c_sign_median_us: float | None = None
    c_sign_mean_us: float | None = None
    c_fsync_median_us: float | None = None
    dominant: str | None = None
    share_signature_pct: float | None = None
    share_write_pct: float | None = None
    k_star: float | None = None
    reduction_eq1: float | None = None
    cost_first_us: float | None = None
    cost_last_us: float | None = None
    reduction_measured: float | None = None
    half_width_first_pct: float | None = None
    half_width_last_pct: float | None = None


class LibraryDependent(MetricsNode):
    main_backend: dict[str, str]
    baselines: dict[str, dict[str, BackendClaims]]


class WallTimes(MetricsNode):
    inputs_s: float
    sweep_s: float
    analysis_s: float
    trials_s: float
    sensitivity_s: float
    total_s: float


class OmissionAtK(MetricsNode):
    k: int
    trials: int
    exposed: int
    median_delay_records: float | None
    median_delay_lo_records: float | None
    median_delay_hi_records: float | None
    max_delay_records: int | None
    max_delay_lo_records: float | None
    max_delay_hi_records: float | None
    exposed_by_next_checkpoint: int
    checks: dict[str, int]


class OmissionStrategy(MetricsNode):
    by_k: dict[str, OmissionAtK]
    trials: int
    exposed: int
    all_exposed: bool
    all_by_next_checkpoint: bool
    exposed_by_next_checkpoint_pct: float
    max_delay_over_k: float | None
    checks: dict[str, int]


class Equivocation(MetricsNode):
    k: int
    trials: int
    exposed: int
    exposed_pct: float
    exposed_by_gossip: int
    views_valid_alone: int
    variants: dict[str, int]


class SensitivityCombo(MetricsNode):
    signer: str
    backend: str
    storage: str
    c_sign_us: float
    c_fsync_us: float
    k_star: float
    dominant: str
    share_signature_pct: float
    median_relative_error_pct: float


class Dominant(MetricsNode):
    scheme: str
    term: str
    sentence: str


class LoadAverage(MetricsNode):
    start: list[float]
    end: list[float]


class AmortisationMetrics(StageMetrics):
    """``amortisation_metrics.json``: Eq. 1 per baseline, the measured sweep, omission and equivocation trials,
    the backend × storage probe, which term dominates, and the run's provenance."""

    cpu_model: str | None
    controller_path: ControllerPath
    inputs: InputsProvenance
    intervals: list[int]
    k_first: int
    k_last: int
    samples: Samples
    floor_us: float
    model: dict[str, ModelBaseline]
    measured: dict[str, MeasuredBaseline]
    omission: dict[str, OmissionStrategy]
    equivocation: Equivocation
    sensitivity: dict[str, SensitivityCombo]
    dominant: Dominant
    eq1_inputs: Eq1Inputs
    sweep: SweepSummary
    library_dependent: LibraryDependent
    load_average: LoadAverage
    storage_skipped: dict[str, str]
    wall_s: WallTimes


METRICS = AmortisationMetrics


# --- inputs: the cost study's measured medians --------------------------------------------------------------------

def cost_medians(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> tuple[pd.DataFrame, dict]:
    """The cost study's statistics (``data/derived/costs_stats.parquet``) and where they came from.

    Without that file (a notebook opened in a fresh clone), the cost study's measurement runs here in memory —
    nothing of the costs stage is written — and the provenance says so.
    """
    file = paths.derived / COSTS_STATS
    if file.exists():  # checked against the SHA-256 the costs stage recorded: an edited median is INPUT_CORRUPT
        stats = io.read_parquet(file, what="cost statistics file", stage="costs")
        meta = io.read_parquet_metadata(file)
        return stats, {
            "source": str(file.relative_to(paths.root)) if file.is_relative_to(paths.root) else str(file),
            "costs_profile": (meta.get("params") or {}).get("profile"), "costs_git_commit": meta.get("git_commit"),
            "costs_timestamp_utc": meta.get("timestamp_utc"), "costs_cpu_model": meta.get("cpu_model")}
    raw, _ = costs.measure(settings, paths.raw, progress=progress)
    return cost_analysis.summarise(raw, settings), {
        "source": f"measured in this run: {file.name} was missing (run the costs stage first)",
        "costs_profile": settings.profile, "costs_git_commit": machine.git_commit(),
        "costs_timestamp_utc": None, "costs_cpu_model": machine.cpu_model()}


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


def model_inputs(stats: pd.DataFrame, cfg: AmortisationParams, statistic: str = "median") -> dict[str, eq1.CostInputs]:
    """Eq. 1's inputs as published, per baseline, read from the cost study (never typed in): Table I's HMAC and
    Merkle rows, the signing row of the baseline's signer on the backend the sweep signs with, Table I's 4 KiB
    write+fsync. ``statistic="median"`` gives Table I's values (k*, shares, the floor as the paper computes them);
    ``"mean"`` is what the sweep's means are compared with."""
    names = cfg.model_inputs
    c_mac, mac_src = _median(stats, names.mac, None, "amortisation.model_inputs.mac", statistic)
    c_leaf, leaf_src = _median(stats, names.leaf, None, "amortisation.model_inputs.leaf", statistic)
    out = {}
    for scheme, base in cfg.baselines.items():
        backend = crypto.resolve_backend(base.signer, cfg.backend)
        c_sign, sign_src = _median(stats, f"sign_{base.signer}", backend, f"amortisation.baselines.{scheme}.signer",
                                   statistic)
        sources = {"c_mac": mac_src, "c_leaf": leaf_src, "c_sign": sign_src, "statistic": statistic}
        c_fsync = 0.0
        if base.durable_log:
            c_fsync, sources["c_fsync"] = _median(stats, names.fsync, None, "amortisation.model_inputs.fsync",
                                                  statistic)
        out[scheme] = eq1.CostInputs(c_mac, c_leaf, c_sign, c_fsync, label=base.label, sources=sources)
    return out


def storage_targets(cfg: AmortisationParams, paths: ProjectPaths) -> tuple[dict[str, Path], dict[str, str]]:
    """(usable targets, skipped targets with the reason): each folder must exist or be creatable, and writable."""
    usable, skipped = {}, {}
    for name, folder in cfg.storage.items():
        path = Path(folder) if Path(folder).is_absolute() else paths.root / folder
        try:
            usable[name] = io.ensure_writable_dir(path, field=f"amortisation.storage.{name}")
        except OutputError as exc:
            if name == cfg.log_storage:
                raise
            skipped[name] = str(exc)
    return usable, skipped


# --- analysis -----------------------------------------------------------------------------------------------------

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


def _delay_interval(delays: pd.Series, statistic, k: int) -> tuple[float | None, float | None]:
    """95 % percentile-bootstrap interval of a statistic of the omission delays (seeded by k)."""
    data = delays.to_numpy(dtype=float)
    if len(data) < 2 or np.ptp(data) == 0:
        return (float(statistic(data)),) * 2 if len(data) else (None, None)
    boot = stats.bootstrap((data,), statistic, n_resamples=2000, confidence_level=0.95, method="percentile",
                           rng=np.random.default_rng(int(k)))
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def _omission_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for strategy, by_strategy in frame.groupby("strategy", sort=False):
        per_k = {}
        for k, group in by_strategy.groupby("k"):
            delays = group["delay_records"].dropna()
            median_ci, max_ci = _delay_interval(delays, np.median, k), _delay_interval(delays, np.max, k)
            per_k[f"k{k}"] = {
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


def _equivocation_metrics(frame: pd.DataFrame, k: int) -> dict[str, Any]:
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


# --- the stage ----------------------------------------------------------------------------------------------------

def _baselines(cfg: AmortisationParams, log_folder: Path) -> list[sweep.Baseline]:
    return [sweep.Baseline(scheme, base.label, base.signer, crypto.resolve_backend(base.signer, cfg.backend),
                           base.durable_log, cfg.log_storage if base.durable_log else "", log_folder)
            for scheme, base in cfg.baselines.items()]


def sweep_points(cfg: AmortisationParams, main: list[sweep.Baseline]) -> tuple[list[adaptive_sweep.Point],
                                                                              dict[str, list[str]]]:
    """The main comparison's points (every baseline on its backend at every interval, ±target) and, for every
    other backend offering a baseline's signer, its first and last interval (±beside target)."""
    points = [adaptive_sweep.Point(b, k, cfg.target_half_width_pct / 100) for b in main for k in cfg.intervals]
    beside: dict[str, list[str]] = {}
    for base in main:
        others = [name for name in crypto.backends_offering(base.signer) if name != base.backend]
        beside[base.scheme] = others
        for name in others:
            other = adaptive_sweep.with_backend(base, name, models.beside_scheme(base.scheme, name))
            points += [adaptive_sweep.Point(other, k, cfg.beside_half_width_pct / 100)
                       for k in dict.fromkeys((cfg.intervals[0], cfg.intervals[-1]))]
    return points, beside


def measure_sweep(settings: StudyParams, path: str, main: list[sweep.Baseline], log_folder: Path, *,
                  progress: bool) -> tuple[adaptive_sweep.SweepResult, list[adaptive_sweep.Point],
                                           dict[str, list[str]], adaptive_sweep.ProbePlan]:
    """The adaptive sweep of the main and beside points with the path-terms probes in every trial."""
    cfg = settings.amortisation
    points, beside = sweep_points(cfg, main)
    main_points = [p for p in points if p.baseline.scheme in cfg.baselines]
    probes = adaptive_sweep.probe_plan(main_points, list(cfg.intervals), cfg.devices, log_folder,
                                       small=cfg.path_probe_small, large=cfg.path_probe_large,
                                       fsync_reps=cfg.fsync_probe_reps)
    target = adaptive_sweep.SweepTarget(cfg.target_half_width_pct / 100, cfg.confidence, cfg.trials,
                                        cfg.sweep_budget_s, cfg.min_reports, cfg.min_checkpoints,
                                        cfg.max_checkpoints)
    result = adaptive_sweep.adaptive_sweep(path, points, probes, target, trials.derive_seed(settings.seed, "sweep"),
                                           n_devices=cfg.devices, disclosure_tag=cfg.disclosure_tag,
                                           warmup_reports=cfg.warmup_reports, progress_bar=progress)
    return result, points, beside, probes


def _sensitivity(settings: StudyParams, inputs: dict[str, eq1.CostInputs], targets: dict[str, Path], path: str,
                 progress: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every checkpoint signer x every backend offering it x every storage target: probed C_sign and C_fsync,
    Eq. 1 with them, and a short sweep with a durable log on that target."""
    cfg = settings.amortisation
    rng = np.random.default_rng(trials.derive_seed(settings.seed, "sensitivity"))
    any_inputs = next(iter(inputs.values()))
    rows, baselines, models = [], [], {}
    signers = list(dict.fromkeys(base.signer for base in cfg.baselines.values()))
    combos = [(s, b, name) for s in signers for b in crypto.backends_offering(s) for name in targets]
    for signer, backend, name in combos:
        measured = sweep.probe(signer, backend, targets[name], cfg.probe_reps, cfg.probe_message_octets,
                               cfg.probe_block_octets, rng)
        combo = f"{signer} · {backend} · {name}"
        model = eq1.CostInputs(any_inputs.c_mac, any_inputs.c_leaf, measured["c_sign_us"], measured["c_fsync_us"],
                               label=combo)
        models[combo] = model
        split = eq1.shares(model)
        rows.append({"combo": combo, "signer": signer, "backend": backend, "storage": name,
                     "folder": str(targets[name]), **measured, "floor_us": model.floor,
                     "k_star": eq1.k_star(model), "share_signature": split[eq1.SIGNATURE],
                     "share_write": split[eq1.WRITE], "dominant": eq1.dominant(model)})
        baselines.append(sweep.Baseline(combo, combo, signer, backend, True, name, targets[name]))
    summary = pd.DataFrame(rows)
    raw = sweep.sweep(path, baselines, list(cfg.sensitivity_intervals), cfg.sensitivity_trials,
                      trials.derive_seed(settings.seed, "sensitivity-sweep"), n_devices=cfg.devices,
                      min_reports=cfg.sensitivity_min_reports, min_checkpoints=cfg.sensitivity_min_checkpoints,
                      disclosure_tag=cfg.disclosure_tag, warmup_reports=cfg.warmup_reports,
                      desc="backend x storage sweep", progress=progress)
    points = sweep.summarise(sweep.per_trial(raw), cfg.bootstrap_resamples, cfg.confidence, settings.seed)
    points["model_us"] = [eq1.cost(models[s], k) for s, k in zip(points["scheme"], points["k"], strict=True)]
    points["relative_error"] = eq1.relative_errors(points["measured_us"].to_numpy(), points["model_us"].to_numpy())
    errors = points.groupby("scheme")["relative_error"].median()
    summary["median_relative_error"] = summary["combo"].map(errors)
    return summary, points.rename(columns={"scheme": "combo"})


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Model, sweep, trials, trade-off and sensitivity; every output written as one set at the end."""
    cfg = settings.amortisation
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    load_start = os.getloadavg()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        resolved = fastpath.resolve_controller_path(settings.amort.controller_path)
    for warning in caught:
        warnings.warn(warning.message, RuntimeWarning, stacklevel=2)
    controller = {"requested": settings.amort.controller_path, "used": resolved.path, "reason": resolved.reason}
    clock = {"start": time.perf_counter()}
    cost_stats, provenance = cost_medians(settings, paths, progress=progress)
    inputs = model_inputs(cost_stats, cfg)            # Table I's medians: k*, shares, the floor as published
    means = model_inputs(cost_stats, cfg, "mean")     # what the sweep's means are compared with
    targets, skipped = storage_targets(cfg, paths)

    main = _baselines(cfg, targets[cfg.log_storage])
    clock["sweep"] = time.perf_counter()
    measured, points, beside, probes = measure_sweep(settings, resolved.path, main, targets[cfg.log_storage],
                                                     progress=progress)
    clock["analysis"] = time.perf_counter()
    raw = measured.raw
    all_stats, replicates = adaptive_sweep.summarise(raw, cfg.bootstrap_resamples, cfg.confidence, settings.seed)
    path_inputs = models.path_terms(measured.path, measured.fsync, measured.sizes, means, cfg.baselines,
                                    probes.k_small, probes.k_large)
    compared = models.compare(all_stats[all_stats["scheme"].isin(list(cfg.baselines))].reset_index(drop=True),
                              means, path_inputs)
    errors = {scheme: {name: models.median_error_ci(compared[compared["scheme"] == scheme], replicates, column,
                                                    cfg.confidence, trials.derive_seed(settings.seed, scheme))
                       for name, column in ((models.PUBLISHED, "model_us"), (models.PATH, "model_path_us"))}
              for scheme in cfg.baselines}
    main_backend = {b.scheme: b.backend for b in main}
    claims = models.library_claims(cost_stats, all_stats, inputs, cfg.baselines, main_backend, beside,
                                   cfg.intervals[0], cfg.intervals[-1])
    per_trial = sweep.per_trial(raw)

    clock["trials"] = time.perf_counter()
    keys = KeySet.generate(cfg.devices, TRIAL_SIGNER)
    with tempfile.TemporaryDirectory(dir=targets[cfg.log_storage], prefix=".amort-trials-") as workdir:
        omission = pd.DataFrame(trials.omission_trials(
            keys, list(cfg.intervals), cfg.omission_trials, settings.seed, Path(workdir),
            strategies=cfg.omission_strategies, n_devices=cfg.devices, progress=progress))
        equivocation = pd.DataFrame(trials.equivocation_trials(
            keys, cfg.equivocation_k, cfg.equivocation_trials, settings.seed, Path(workdir), n_devices=cfg.devices,
            progress=progress))

    clock["sensitivity"] = time.perf_counter()
    sensitivity, sensitivity_points = _sensitivity(settings, inputs, targets, resolved.path, progress)
    clock["end"] = time.perf_counter()
    load_end = os.getloadavg()
    wall = {f"{'inputs' if name == 'start' else name}_s": round(clock[after] - clock[name], 1)
            for name, after in itertools.pairwise(list(clock))}
    wall["total_s"] = round(clock["end"] - clock["start"], 1)

    table = table2(compared, means, cfg)
    model = model_table(inputs, cfg)
    detection = omission_table(omission)
    by_backend = rounded(claims, significant=4)
    curve = curve_csv(compared)
    load = {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in load_end]}
    sweep_info = {"result": measured, "points": points, "errors": errors, "means": means, "path": path_inputs,
                  "claims": claims, "all_stats": all_stats, "main_backend": main_backend}
    headline = metrics(settings, inputs, compared, per_trial, omission, equivocation, sensitivity, provenance,
                       controller, sweep_info) | {"load_average": load, "storage_skipped": skipped,
                                                  "wall_s": wall}
    headline = validated(AmortisationMetrics, headline)
    backends = {b: crypto.backend_status(b).version or "unknown"
                for b in sorted(set(raw["backend"]) | set(sensitivity["backend"]))}
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends=backends) | {
        "study": STAGE, "controller_path": controller, "inputs": provenance, "load_average": headline["load_average"],
        "storage": {name: str(p) for name, p in targets.items()}, "storage_skipped": skipped}
    cpu = metadata["cpu_model"]
    figures = {
        "fig3_amortisation": fig3_amortisation(compared, means, path_inputs, errors, cfg.intervals, cpu,
                                               resolved.path),
        "fig4_tradeoff": fig4_tradeoff(inputs, cfg.rates, cfg.intervals, cpu),
        "amortisation_sensitivity": amortisation_sensitivity(sensitivity, sensitivity_points, cpu, resolved.path),
    }
    omission_out = omission.assign(path="reference")  # the detection trials run the reference model
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "amortisation_sweep.parquet", raw, metadata)
        out.parquet(paths.raw / "amortisation_path_probe.parquet", measured.path, metadata)
        out.parquet(paths.raw / "amortisation_fsync_probe.parquet", measured.fsync, metadata)
        out.parquet(paths.raw / "amortisation_sensitivity_sweep.parquet", sensitivity_points, metadata)
        out.parquet(paths.raw / "amortisation_omission.parquet", omission_out, metadata)
        out.parquet(paths.raw / "amortisation_equivocation.parquet", equivocation, metadata)
        out.parquet(paths.derived / "amortisation_trials.parquet", per_trial, metadata)
        out.parquet(paths.derived / "amortisation_stats.parquet", compared, metadata)
        out.parquet(paths.derived / "amortisation_sweep_plan.parquet", measured.plan, metadata)
        out.parquet(paths.derived / "amortisation_sensitivity.parquet", sensitivity, metadata)
        out.text(paths.derived / "amortisation_curve.csv", curve.to_csv(index=False))
        out.table(table, paths.amort_figs / "table2_amortised", markdown=rounded(table, significant=4))
        out.table(model, paths.amort_figs / "amortisation_model", markdown=rounded(model, significant=4))
        out.table(claims, paths.amort_figs / "amortisation_by_backend", markdown=by_backend)
        out.table(detection, paths.amort_figs / "omission_detection", markdown=rounded(detection, significant=4))
        for stem, figure in figures.items():
            out.figure(figure, paths.amort_figs / stem)
        out.metrics(paths.derived / "amortisation_metrics.json", headline, label="MAC + leaf floor (Eq. 1)",
                    key="floor_us", unit="us")
    for figure in figures.values():
        plt.close(figure)
    tables = {"table2_amortised": table, "amortisation_model": model, "amortisation_by_backend": claims,
              "omission_detection": detection}
    return StudyResult(STAGE, figures=figures, tables=tables, metrics=headline,
                       files=out.written,
                       data={"model_inputs": inputs, "model_inputs_means": means, "path_terms": path_inputs,
                             "sweep": raw, "trials": per_trial, "stats": compared, "all_stats": all_stats,
                             "plan": measured.plan, "path_probe": measured.path, "fsync_probe": measured.fsync,
                             "omission": omission, "equivocation": equivocation, "sensitivity": sensitivity,
                             "sensitivity_points": sensitivity_points, "curve": curve, "metadata": metadata})


def metrics(settings: StudyParams, inputs: dict[str, eq1.CostInputs], compared: pd.DataFrame,
            per_trial: pd.DataFrame, omission: pd.DataFrame, equivocation: pd.DataFrame,
            sensitivity: pd.DataFrame, provenance: dict, controller: dict, info: dict[str, Any]) -> dict[str, Any]:
    """Headline numbers for ``dvc metrics show`` and REPORT.md (``info``: the sweep, its errors, the path terms,
    the per-backend claims)."""
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
    focus_backend = crypto.resolve_backend(cfg.baselines[focus].signer, cfg.backend)
    moves = sensitivity[sensitivity["signer"] == cfg.baselines[focus].signer]
    return {
        "profile": settings.profile, "cpu_model": machine.cpu_model(), "controller_path": controller,
        "inputs": provenance, "intervals": list(cfg.intervals), "k_first": first, "k_last": last,
        "samples": {"sweep_trials": cfg.trials, "omission_trials": cfg.omission_trials,
                    "equivocation_trials": cfg.equivocation_trials, "min_reports": cfg.min_reports,
                    "min_checkpoints": cfg.min_checkpoints},
        "floor_us": round(next(iter(inputs.values())).floor, 4),
        "model": model, "measured": measured,
        "eq1_inputs": report.eq1_inputs_block(info["means"], info["path"]),
        "sweep": report.sweep_summary(cfg, info),
        "library_dependent": report.library_dependent_block(info["claims"], info["main_backend"]),
        "omission": _omission_metrics(omission),
        "equivocation": _equivocation_metrics(equivocation, cfg.equivocation_k),
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
    }
