"""Stage ``measure_amortisation`` (AMORT-V1 §V-D): the adaptive interval sweep with its path-terms probes, the
omission and equivocation trials and the backend × storage probe; writes only the data/raw/amortisation_*.parquet
files."""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from pqlab import crypto, io, machine
from pqlab.amort.fastpath.api import resolve_controller_path
from pqlab.errors import OutputError
from pqlab.experiments import adaptive_sweep, detection_trials, interval_sweep
from pqlab.experiments.amort_lab import KeySet
from pqlab.params import AmortisationParams, StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry
from pqlab.raw_labels import beside_scheme
from pqlab.seeds import derive_seed

RAW = registry.raw_spec("amortisation")
TRIAL_SIGNER = "ML-DSA-65"  # the detection trials' checkpoint signer (detection does not depend on it)


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


def _baselines(cfg: AmortisationParams, log_folder: Path) -> list[interval_sweep.Baseline]:
    return [interval_sweep.Baseline(scheme, base.label, base.signer, crypto.resolve_backend(base.signer, cfg.backend),
                           base.durable_log, cfg.log_storage if base.durable_log else "", log_folder)
            for scheme, base in cfg.baselines.items()]


def sweep_points(cfg: AmortisationParams, main: list[interval_sweep.Baseline]) -> list[adaptive_sweep.Point]:
    """The main comparison's points (every baseline on its backend at every interval, ±target) and, for every
    other backend offering a baseline's signer, its first and last interval (±beside target)."""
    points = [adaptive_sweep.Point(b, k, cfg.target_half_width_pct / 100) for b in main for k in cfg.intervals]
    for base in main:
        for name in (name for name in crypto.backends_offering(base.signer) if name != base.backend):
            other = adaptive_sweep.with_backend(base, name, beside_scheme(base.scheme, name))
            points += [adaptive_sweep.Point(other, k, cfg.beside_half_width_pct / 100)
                       for k in dict.fromkeys((cfg.intervals[0], cfg.intervals[-1]))]
    return points


def measure_sweep(settings: StudyParams, path: str, main: list[interval_sweep.Baseline], log_folder: Path, *,
                  progress: bool) -> adaptive_sweep.SweepResult:
    """The adaptive sweep of the main and beside points with the path-terms probes in every trial."""
    cfg = settings.amortisation
    points = sweep_points(cfg, main)
    main_points = [p for p in points if p.baseline.scheme in cfg.baselines]
    probes = adaptive_sweep.probe_plan(main_points, list(cfg.intervals), cfg.devices, log_folder,
                                       small=cfg.path_probe_small, large=cfg.path_probe_large,
                                       fsync_reps=cfg.fsync_probe_reps, sign_reps=cfg.sign_probe_reps)
    target = adaptive_sweep.SweepTarget(cfg.target_half_width_pct / 100, cfg.confidence, cfg.trials,
                                        cfg.sweep_budget_s, cfg.min_reports, cfg.min_checkpoints,
                                        cfg.max_checkpoints, cfg.sweep_rounds)
    return adaptive_sweep.adaptive_sweep(path, points, probes, target, derive_seed(settings.seed, "sweep"),
                                         n_devices=cfg.devices, disclosure_tag=cfg.disclosure_tag,
                                         warmup_reports=cfg.warmup_reports, progress_bar=progress)


def measure_sensitivity(settings: StudyParams, targets: dict[str, Path], path: str,
                        progress: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every checkpoint signer × every backend offering it × every storage target: probed C_sign and C_fsync, and
    a short sweep with a durable log on that target (its checkpoint rows)."""
    cfg = settings.amortisation
    rng = np.random.default_rng(derive_seed(settings.seed, "sensitivity"))
    rows, baselines = [], []
    signers = list(dict.fromkeys(base.signer for base in cfg.baselines.values()))
    for signer, backend, name in [(s, b, n) for s in signers for b in crypto.backends_offering(s) for n in targets]:
        measured = interval_sweep.probe(signer, backend, targets[name], cfg.probe_reps, cfg.probe_message_octets,
                               cfg.probe_block_octets, rng)
        combo = f"{signer} · {backend} · {name}"
        rows.append({"combo": combo, "signer": signer, "backend": backend, "storage": name,
                     "folder": str(targets[name]), **measured})
        baselines.append(interval_sweep.Baseline(combo, combo, signer, backend, True, name, targets[name]))
    raw = interval_sweep.sweep(path, baselines, list(cfg.sensitivity_intervals), cfg.sensitivity_trials,
                               derive_seed(settings.seed, "sensitivity-sweep"), n_devices=cfg.devices,
                      min_reports=cfg.sensitivity_min_reports, min_checkpoints=cfg.sensitivity_min_checkpoints,
                      disclosure_tag=cfg.disclosure_tag, warmup_reports=cfg.warmup_reports,
                      desc="backend x storage sweep", progress=progress)
    return pd.DataFrame(rows), raw


def measure_trials(settings: StudyParams, folder: Path, progress: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The omission trials (every interval and strategy) and the equivocation trials, over real signatures."""
    cfg = settings.amortisation
    keys = KeySet.generate(cfg.devices, TRIAL_SIGNER)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".amort-trials-") as workdir:
        omission = pd.DataFrame(detection_trials.omission_trials(
            keys, list(cfg.intervals), cfg.omission_trials, settings.seed, Path(workdir),
            strategies=cfg.omission_strategies, n_devices=cfg.devices, progress=progress))
        equivocation = pd.DataFrame(detection_trials.equivocation_trials(
            keys, cfg.equivocation_k, cfg.equivocation_trials, settings.seed, Path(workdir), n_devices=cfg.devices,
            progress=progress))
    return omission.assign(path="reference"), equivocation  # the detection trials run the reference model


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Measure and write the samples; the controller path, the sweep's budget and wall time, the storage targets
    and each phase's wall time go into the metadata."""
    cfg = settings.amortisation
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        resolved = resolve_controller_path(settings.amort.controller_path)
    for warning in caught:
        warnings.warn(warning.message, RuntimeWarning, stacklevel=2)
    targets, skipped = storage_targets(cfg, paths)
    clock = {"start": time.perf_counter()}
    measured = measure_sweep(settings, resolved.path, _baselines(cfg, targets[cfg.log_storage]),
                             targets[cfg.log_storage], progress=progress)
    clock["sweep"] = time.perf_counter()
    omission, equivocation = measure_trials(settings, targets[cfg.log_storage], progress)
    clock["trials"] = time.perf_counter()
    probe, sensitivity = measure_sensitivity(settings, targets, resolved.path, progress)
    clock["sensitivity"] = time.perf_counter()
    signing = sorted(set(measured.raw["backend"]) | set(probe["backend"]))
    metadata = machine.run_metadata(backends={b: crypto.backend_status(b).version or "unknown" for b in signing}) | {
        "controller_path": {"requested": settings.amort.controller_path, "used": resolved.path,
                            "reason": resolved.reason},
        "storage": {name: str(p) for name, p in targets.items()}, "storage_skipped": skipped,
        "sweep_budget_s": measured.budget_s, "sweep_wall_s": round(measured.wall_s, 1),
        "wall_s": {"sweep_s": round(clock["sweep"] - clock["start"], 1),
                   "trials_s": round(clock["trials"] - clock["sweep"], 1),
                   "sensitivity_s": round(clock["sensitivity"] - clock["trials"], 1),
                   "total_s": round(clock["sensitivity"] - clock["start"], 1)}}
    frames = {"amortisation_sweep.parquet": measured.raw, "amortisation_path_probe.parquet": measured.path,
              "amortisation_fsync_probe.parquet": measured.fsync,
              "amortisation_sign_probe.parquet": measured.sign,
              "amortisation_checkpoint_sizes.parquet": measured.sizes,
              "amortisation_sweep_plan.parquet": measured.plan,
              "amortisation_sensitivity_probe.parquet": probe,
              "amortisation_sensitivity_sweep.parquet": sensitivity,
              "amortisation_omission.parquet": omission, "amortisation_equivocation.parquet": equivocation}
    return raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
