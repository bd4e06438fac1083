"""Stage ``design_space`` (PQ-CASE §IV-B, §VIII): 3,780 points, Table I's Device PQ column, Pareto fronts, Fig. 6."""

from __future__ import annotations

import time

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.case import design_space as ds
from pqlab.case import design_tables
from pqlab.case.device_compute import load_cycles
from pqlab.figures.design_space import fig6_design_space
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult

STAGE = "design_space"


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Compute the whole space, tabulate, plot and write the outputs (byte-stable across runs)."""
    p = settings.design_space
    paths.check_writable(paths.derived, paths.case_figs, paths.plots)
    cycles = load_cycles(paths.input(settings.inputs.cycles_file))
    device = design_tables.device_pq_table(p.configurations, cycles)
    start = time.perf_counter()
    space = design_tables.build_space(p, cycles, settings.framing.max_app_payload)
    seconds = time.perf_counter() - start
    pareto = design_tables.pareto_table(space)
    smallest = pd.concat([ds.smallest_largest_message(ds.restrict(space, fam)).assign(restriction=name)
                          for name, fam in design_tables.RESTRICTIONS.items()], ignore_index=True)
    fits = design_tables.fits_table(space)
    headline = design_tables.metrics(space, device, pareto) | {"profile": settings.profile}
    figure = fig6_design_space(space, pareto)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), stable=True) | {
        "cycles_source": cycles.source_commit}
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "design_space.parquet", space, metadata)
        out.table(device, paths.case_figs / "table1_device_pq")
        out.table(pareto, paths.case_figs / "design_space_pareto")
        out.text(paths.case_figs / "design_space_fits.md", fits.to_markdown(index=False) + "\n")
        out.figure(figure, paths.case_figs / "fig6_design_space")
        out.metrics(paths.derived / "design_space_metrics.json", headline, label="design points that fit",
                    key="fits.points", unit=f"of {headline['points']}")
        points = space[["device_ms", "total", "family"]].rename(columns={"total": "total_bytes"})
        out.text(paths.plots / "design_space_points.csv", points.to_csv(index=False))   # dvc plots
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig6_design_space": figure},
                       tables={"table1_device_pq": device, "design_space_pareto": pareto, "design_space_fits": fits},
                       metrics=headline, files=out.written,
                       data={"space": space, "smallest_largest": smallest, "compute_seconds": seconds})
