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
from pqlab.pipeline.metrics.design_space import DesignSpaceMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated

STAGE = "design_space"


def space_facts(space: pd.DataFrame, pareto: pd.DataFrame) -> dict:
    """The space's dimensions, the members of each Pareto front (and the distinct points outlined in Fig. 6), the
    fully post-quantum FIPS points that fit, and how many MAYO / SNOVA / UOV points the whole space dominates."""
    outlined = {(round(r.total), round(r.device_ms, 6)) for r in pareto[pareto["restriction"] != "all"].itertuples()}
    new = space["family"] == ds.FAMILY_ADDITIONAL
    on_front = pd.Series(ds.pareto_mask(space["total"].to_numpy(), space["device_ms"].to_numpy()), index=space.index)
    return {"dimensions": {c: int(space[c].nunique()) for c in ("key_exchange", "noc", "icac", "rcac", "mode")},
            "pareto_members": {str(k): int(v) for k, v in pareto.groupby("restriction", sort=False).size().items()},
            "pareto_outlined": len(outlined),
            "fips_points_that_fit": int(space[space["family"] == ds.FAMILY_FIPS]["fits"].sum()),
            "new_signature_points": int(new.sum()),
            "new_signature_dominated_fraction": float((~on_front[new]).mean()) if new.any() else 0.0}


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
    headline = validated(DesignSpaceMetrics, design_tables.metrics(space, device, pareto)
                         | {"profile": settings.profile, "device_clock_mhz": cycles.clock_mhz}
                         | space_facts(space, pareto))
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
