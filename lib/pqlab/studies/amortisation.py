"""Stage ``amortisation`` (AMORT-V1 §V-D) from measure_amortisation's raw samples: Eq. 1 against the interval
sweep (Table II, Fig. 3), the omission and equivocation trials, the trade-off (Fig. 4), backend × storage."""

from __future__ import annotations

import functools
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import io, machine
from pqlab.analysis import amortisation as analysis
from pqlab.analysis import costs as cost_analysis
from pqlab.analysis.amortisation_schema import AmortisationMetrics
from pqlab.errors import StudyInputError, warn
from pqlab.experiments import adaptive_sweep, costs, interval_sweep
from pqlab.experiments import amortisation_models as models
from pqlab.figures.amortisation import amortisation_sensitivity, fig3_amortisation, fig4_tradeoff
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.provenance import analysis_profile, hand_edited
from pqlab.studies import raw_samples
from pqlab.studies.outputs import OutputSet, rounded
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import validated

STAGE = "amortisation"
RAW = raw_samples.spec(STAGE)
UPSTREAM_EDITED = "costs_hand_edited"  # in cost_medians' provenance: the costs stage's raw files edited by hand
METRICS = AmortisationMetrics


def cost_medians(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True,
                 measure: bool = True) -> tuple[pd.DataFrame, dict]:
    """The cost study's statistics (``data/derived/costs_stats.parquet``) and where they came from.

    Without that file (a notebook opened in a fresh clone), the cost study's measurement runs here in memory —
    nothing of the costs stage is written — and the provenance says so; with ``measure=False`` (the pipeline's
    analysis, which never measures) its absence is a StudyInputError naming the file.
    """
    file = paths.derived / analysis.COSTS_STATS
    if file.exists():  # checked against the SHA-256 the costs stage recorded: an edited median is refused
        stats, meta = io.read_parquet_checked(file, what="cost statistics file", stage="costs")
        return stats, {
            "source": str(file.relative_to(paths.root)) if file.is_relative_to(paths.root) else str(file),
            "costs_profile": analysis_profile(meta), "costs_git_commit": meta.get("git_commit"),
            "costs_timestamp_utc": meta.get("timestamp_utc"), "costs_cpu_model": meta.get("cpu_model"),
            UPSTREAM_EDITED: hand_edited(meta)}
    if not measure:
        raise StudyInputError("the cost study's statistics are missing: run the costs stage first "
                              "(`dvc repro costs` or `pqlab costs`)", field=str(file))
    raw, _ = costs.measure(settings, paths.raw, progress=progress)
    return cost_analysis.summarise(raw, settings), {
        "source": f"measured in this run: {file.name} was missing (run the costs stage first)",
        "costs_profile": settings.profile, "costs_git_commit": machine.git_commit(),
        "costs_timestamp_utc": None, "costs_cpu_model": machine.cpu_model()}


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True,
            measure_costs: bool = False) -> StudyResult:
    """Both Eq. 1 curves against the sweep, the trials, the trade-off and backend × storage, from the raw files and
    the cost study's statistics (measured in memory when missing only with ``measure_costs``); every output
    written as one set."""
    cfg = settings.amortisation
    paths.check_writable(paths.derived, paths.amort_figs)
    cost_stats, provenance = cost_medians(settings, paths, progress=progress, measure=measure_costs)
    upstream_edited = provenance.pop(UPSTREAM_EDITED, [])
    frames, raw_metadata = raw_samples.read(RAW, settings, paths)
    raw, plan = frames["amortisation_sweep.parquet"], frames["amortisation_sweep_plan.parquet"]
    path_rows, fsync_rows = frames["amortisation_path_probe.parquet"], frames["amortisation_fsync_probe.parquet"]
    omission, equivocation = frames["amortisation_omission.parquet"], frames["amortisation_equivocation.parquet"]
    main_backend, beside = analysis.backends(raw, plan, cfg)
    inputs = analysis.model_inputs(cost_stats, cfg, main_backend)          # Table I's medians, as published
    means = analysis.model_inputs(cost_stats, cfg, main_backend, "mean")   # what the sweep's means are compared with
    all_stats, replicates = adaptive_sweep.summarise(raw, cfg.bootstrap_resamples, cfg.confidence, settings.seed)
    sign_rows = frames["amortisation_sign_probe.parquet"]
    path_inputs = models.path_terms(path_rows, fsync_rows, sign_rows, frames["amortisation_checkpoint_sizes.parquet"],
                                    means, cfg.baselines, int(path_rows["k"].min()), int(path_rows["k"].max()))
    compared = models.compare(all_stats[all_stats["scheme"].isin(list(cfg.baselines))].reset_index(drop=True),
                              means, path_inputs)
    errors = models.median_errors(compared, replicates, cfg, settings.seed)
    claims = models.library_claims(cost_stats, all_stats, inputs, cfg.baselines, main_backend, beside,
                                   cfg.intervals[0], cfg.intervals[-1])
    per_trial = interval_sweep.per_trial(raw)
    sensitivity, sensitivity_points = analysis.sensitivity(
        frames["amortisation_sensitivity_probe.parquet"], frames["amortisation_sensitivity_sweep.parquet"], inputs,
        cfg, settings.seed)
    info = {"metadata": raw_metadata, "all_stats": all_stats, "plan": plan, "path_rows": path_rows,
            "fsync_rows": fsync_rows, "sign_rows": sign_rows, "errors": errors, "means": means, "path": path_inputs,
            "claims": claims, "main_backend": main_backend}
    headline = validated(AmortisationMetrics, analysis.metrics(
        settings, inputs, compared, per_trial, omission, equivocation, sensitivity, provenance, info) | {
        "storage_skipped": raw_metadata["storage_skipped"], "wall_s": raw_metadata["wall_s"],
        "raw_samples": raw_samples.source(raw_metadata, upstream_edited)})
    for failure in headline["sanity"]["failed"]:
        warn(f"amortisation: sanity check failed: {failure['cause']}")
    metadata = raw_samples.analysis_metadata(raw_metadata, RAW, settings) | {"study": STAGE, "inputs": provenance}
    table, model = analysis.table2(compared, means, cfg), analysis.model_table(inputs, cfg)
    detection, curve = analysis.omission_table(omission), analysis.curve_csv(compared)
    cpu, used = raw_metadata["cpu_model"], raw_metadata["controller_path"]["used"]
    figures = {"fig3_amortisation": fig3_amortisation(compared, means, path_inputs, errors, cfg.intervals, cpu, used,
                                                      cfg.confidence),
               "fig4_tradeoff": fig4_tradeoff(inputs, cfg.rates, cfg.intervals, cpu),
               "amortisation_sensitivity": amortisation_sensitivity(sensitivity, sensitivity_points, cpu, used)}
    tables = {"table2_amortised": table, "amortisation_model": model, "amortisation_by_backend": claims,
              "omission_detection": detection}
    with OutputSet(paths, STAGE) as out:
        for frame, name in ((per_trial, "amortisation_trials"), (compared, "amortisation_stats"),
                            (sensitivity, "amortisation_sensitivity"),
                            (sensitivity_points, "amortisation_sensitivity_points")):
            out.parquet(paths.derived / f"{name}.parquet", frame, metadata)
        out.text(paths.derived / "amortisation_curve.csv", curve.to_csv(index=False))
        for name, frame in tables.items():
            out.table(frame, paths.amort_figs / name, markdown=rounded(frame, significant=4))
        for stem, figure in figures.items():
            out.figure(figure, paths.amort_figs / stem)
        out.metrics(paths.derived / "amortisation_metrics.json", headline, label="MAC + leaf floor (Eq. 1)",
                    key="floor_us", unit="us")
    for figure in figures.values():
        plt.close(figure)
    return StudyResult(STAGE, figures=figures, tables=tables, metrics=headline, files=out.written,
                       data={"model_inputs": inputs, "model_inputs_means": means, "path_terms": path_inputs,
                             "sweep": raw, "trials": per_trial, "stats": compared, "all_stats": all_stats,
                             "plan": plan, "path_probe": path_rows, "fsync_probe": fsync_rows, "sign_probe": sign_rows,
                             "omission": omission, "equivocation": equivocation, "sensitivity": sensitivity,
                             "sensitivity_points": sensitivity_points, "curve": curve, "metadata": metadata})


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True, analyse_only: bool = False,
        **measure_options: Any) -> StudyResult:
    """Measure when the raw samples are missing or do not match (never with ``analyse_only``), then analyse; only a
    run that may measure may also measure the cost study's inputs in memory when they are missing."""
    return raw_samples.measured_then_analysed(STAGE, functools.partial(analyse, measure_costs=not analyse_only),
                                              settings, paths, analyse_only=analyse_only, progress=progress,
                                              **measure_options)
