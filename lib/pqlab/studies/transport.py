"""Stage ``transport`` (PQ-CASE §IV-C, §VI): from ``measure_transport``'s grids (the paper's model and the
source_accurate variant), Fig. 2, Table I's time columns, sleepy-device failures, radio time, the headline metrics."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab.analysis import transport as analysis
from pqlab.analysis import transport_intervals as intervals
from pqlab.analysis.transport_summary import summarise
from pqlab.figures.transport import fig2_transport
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.transport import TransportMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import VARIANTS, fitting_configs, variant_params

STAGE = "transport"
RAW = registry.raw_spec(STAGE)


def suffix(variant: str) -> str:
    """The file-name suffix of a model variant's raw and derived files."""
    return "" if variant == "paper" else f"_{variant}"


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Summarise both variants' grids (with the configurations they were simulated with), plot and write."""
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    params = settings.transport
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    configs = {name: tuple(sizes) for name, sizes in raw_metadata["configs"].items()}
    compute = raw_metadata["device_compute_ms"]
    compute = None if compute is None else {name: tuple(ms) for name, ms in compute.items()}
    metadata = raw_provenance.analysis_metadata(raw_metadata, RAW, settings)
    summaries: dict[str, pd.DataFrame] = {}
    metrics: dict = {"profile": settings.profile, "confidence": params.confidence,
                     "model": intervals.model_parameters(params),
                     "raw_samples": raw_provenance.source(raw_metadata)}
    for variant in VARIANTS:
        vp, table = variant_params(params, variant), frames[f"transport_grid{suffix(variant)}.parquet"]
        summary = analysis.one_label_per_fitting_config(
            summarise(table, params.bootstrap_resamples, params.confidence, settings.seed,
                      progress=progress, desc=f"{variant} statistics"), fitting_configs(configs, vp))
        summaries[variant] = summary
        metrics[variant] = analysis.headline(summary, vp)
        metrics[variant].update(intervals.headline_intervals(
            table, summary, vp, TransportParams.model_fields["runs"].default))
        # as run: with fitting_under_every_transport the grid counts B and C1 under three labels (the paper's
        # 432,000), while the summary and the headline numbers count them once
        metrics[variant].update(scenarios=int(table["point_id"].nunique()), handshakes=len(table))
        metrics[variant]["channel_priority"] = analysis.channel_priority_sensitivity(
            summary, frames[f"transport_channel_rule{suffix(variant)}.parquet"], vp, configs)
    paper = summaries["paper"]
    roles, scen = params.figure_configs, params.figure_scenarios
    figure = fig2_transport(paper, roles.get("drop_in", ""), roles.get("smallest", ""),
                            roles.get("classical", ""), interference=scen["interference"])
    times = analysis.table1_times(paper, params)
    sed = paper[paper["sleepy"]][["config", "hops", "loss", "transport", "runs", "failures", "failure_rate",
                                  "failed_in"]]
    radio = paper[(paper["hops"] == 1) & (paper["loss"] == scen["quiet"]) & ~paper["sleepy"]][
        ["config", "transport", "median_radio_ms"]]
    plot_times, plot_spurious = analysis.figure_table(paper, params)
    with OutputSet(paths, STAGE) as out:
        for variant in VARIANTS:
            out.parquet(paths.derived / f"transport_summary{suffix(variant)}.parquet", summaries[variant], metadata)
        out.figure(figure, paths.case_figs / "fig2_transport")
        out.table(times, paths.case_figs / "table1_case_times", markdown=times.round(3))
        out.text(paths.case_figs / "sed_failures.csv", sed.to_csv(index=False))
        out.text(paths.case_figs / "radio_time.csv", radio.to_csv(index=False))
        out.text(paths.plots / "fig2_transport_times.csv", plot_times.to_csv(index=False))   # dvc plots
        out.text(paths.plots / "fig2_transport_spurious.csv", plot_spurious.to_csv(index=False))
        hops = f"{min(params.ratio_hops)}-{max(params.ratio_hops)}"
        out.metrics(paths.derived / "transport_metrics.json", validated(TransportMetrics, analysis.jsonable(metrics)),
                    label=f"{roles.get('drop_in', 'drop-in')} IPv6/block {hops} hops max",
                    key="paper.drop_in_ratio_3to4hop_max", unit="x")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig2_transport": figure}, tables={"table1_case_times": times},
                       metrics=metrics, files=out.written,
                       data={"summaries": summaries, "sed_failures": sed, "radio_time": radio,
                             "grid_seconds": raw_metadata["grid_seconds"],
                             "handshakes": {v: len(frames[f"transport_grid{suffix(v)}.parquet"]) for v in VARIANTS}})


run = measuring.runner(STAGE, analyse)
