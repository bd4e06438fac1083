"""Stage ``transport`` (PQ-CASE §IV-C, §VI): the Thread grid under the paper's model and the source_accurate
variant; Fig. 2, Table I's time columns, sleepy-device failures, radio time, the headline metrics."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.cache import PartStore
from pqlab.figures.transport import fig2_transport
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.thread import analysis
from pqlab.thread.case_inputs import table1_inputs
from pqlab.thread.grid import fitting_configs, grid_points, run_grid
from pqlab.thread.summary import summarise

STAGE = "transport"


def parts_folder(paths: ProjectPaths, variant: str) -> Path:
    """Where one variant's resume cache lives while the stage runs (deleted when its outputs are written)."""
    return paths.derived / f".transport-{variant}.parts"


def run(
    settings: StudyParams,
    paths: ProjectPaths,
    *,
    configs: Mapping[str, Sequence[int]] | None = None,
    device_compute_ms: Mapping[str, tuple[float, float]] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
) -> StudyResult:
    """Run both variants' grids (resumable), summarise, and write every output as one set.

    ``configs`` (name -> four message sizes) and ``device_compute_ms`` default to the Table I configurations
    named in ``thread.configurations``, with sizes from the CASE size model and device computation from
    ``inputs.cycles_file``.
    """
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    params = settings.thread
    if configs is None:
        configs, device_compute_ms = table1_inputs(params.configurations,
                                                   paths.input(settings.inputs.cycles_file))
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"))
    summaries: dict[str, pd.DataFrame] = {}
    tables: dict[str, pd.DataFrame] = {}
    metrics: dict = {"profile": settings.profile}
    seconds: dict[str, float] = {}
    with ExitStack() as held:  # each variant's resume cache stays locked until the outputs are committed
        stores = {v: held.enter_context(PartStore(parts_folder(paths, v))) for v in analysis.VARIANTS}
        for variant in analysis.VARIANTS:
            vp = analysis.variant_params(params, variant)
            points = grid_points(configs, vp, device_compute_ms)
            start = time.perf_counter()
            tables[variant] = run_grid(points, vp, stores[variant], workers=workers, scheduler=scheduler,
                                       progress=progress)
            seconds[variant] = time.perf_counter() - start
            summary = analysis.one_label_per_fitting_config(
                summarise(tables[variant], params.bootstrap_resamples, params.confidence, settings.seed,
                          progress=progress, desc=f"{variant} statistics"),
                fitting_configs(configs, vp))
            summaries[variant] = summary
            metrics[variant] = analysis.headline(summary, vp)
            # as run: with fitting_under_every_transport the grid counts B and C1 under three labels (the paper's
            # 432,000), while the summary and the headline numbers count them once
            metrics[variant].update(scenarios=int(tables[variant]["point_id"].nunique()),
                                    handshakes=len(tables[variant]))
            metrics[variant]["channel_priority"] = analysis.channel_priority_sensitivity(summary, configs, vp,
                                                                                         device_compute_ms)
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
            for variant in analysis.VARIANTS:
                suffix = "" if variant == "paper" else f"_{variant}"
                out.parquet(paths.derived / f"thread_grid{suffix}.parquet", tables[variant], metadata)
                out.parquet(paths.derived / f"thread_summary{suffix}.parquet", summaries[variant], metadata)
            out.figure(figure, paths.case_figs / "fig2_transport")
            out.table(times, paths.case_figs / "table1_case_times", markdown=times.round(3))
            out.text(paths.case_figs / "sed_failures.csv", sed.to_csv(index=False))
            out.text(paths.case_figs / "radio_time.csv", radio.to_csv(index=False))
            out.text(paths.plots / "fig2_transport_times.csv", plot_times.to_csv(index=False))   # dvc plots
            out.text(paths.plots / "fig2_transport_spurious.csv", plot_spurious.to_csv(index=False))
            hops = f"{min(params.ratio_hops)}-{max(params.ratio_hops)}"
            out.metrics(paths.derived / "thread_metrics.json", analysis.jsonable(metrics),
                        label=f"{roles.get('drop_in', 'drop-in')} IPv6/block {hops} hops max",
                        key="paper.drop_in_ratio_3to4hop_max", unit="x")
        for store in stores.values():  # the results are committed: the resume caches are no longer needed
            store.clear()
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig2_transport": figure}, tables={"table1_case_times": times},
                       metrics=metrics, files=out.written, data={"summaries": summaries, "sed_failures": sed,
                                                                  "radio_time": radio, "grid_seconds": seconds,
                                                                  "handshakes": {v: len(t) for v, t in tables.items()}})
