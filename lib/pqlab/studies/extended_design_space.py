"""Stage ``extended_design_space`` (beyond PQ-CASE §VIII): the design space with newer algorithms, its fits and fronts.

The paper's dimensions plus ``extended_design_space``'s additions (HQC; MAYO-1, SNOVA-25-8-3, HAWK-512, SQIsign-I,
CROSS-RSDPG-128-small; UOV-Ip-pkc as a root), each point built with the real encoder and costed from
``params/pqm4_implementations.yaml`` (the fastest implementation per operation at the paper's clock: for the
paper's algorithms the numbers of ``pqm4_cycles.yaml``, checked). Which new points enter the Pareto fronts, which
of the paper points' front they displace, which new points fit Matter's message limit, and the points whose device
cost pqm4 cannot give. The paper's ``design_space`` stage and its outputs are untouched.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.case import design_space as ds
from pqlab.case import extended_space as ext
from pqlab.case import pqm4
from pqlab.case.device_compute import load_cycles
from pqlab.errors import ParamsError
from pqlab.figures.extended_design_space import fig_extended_design_space
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline.metrics.extended_design_space import ExtendedDesignSpaceMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated

STAGE = "extended_design_space"
SHOWN = ["total", "device_ms", "largest", "points", *ext.KEY_COLUMNS, "family"]


def cycle_table(paths: ProjectPaths, settings: StudyParams):
    """pqm4's fastest counts for every registry algorithm at the paper's clock; for the paper's algorithms they must
    equal ``pqm4_cycles.yaml`` (the same rule on the same data), else the comparison would not be like with like."""
    paper = load_cycles(paths.input(settings.inputs.cycles_file))
    table = pqm4.load_implementations(paths.input(pqm4.IMPLEMENTATIONS_FILE))
    cycles = pqm4.cycle_table(table, clock_mhz=paper.clock_mhz,
                              controller_ms_per_message=paper.controller_ms_per_message, field="pqm4_implementations")
    for name, entry in paper.algorithms.items():
        mine = cycles.algorithms.get(name)
        if mine is None or any(getattr(entry, op) != getattr(mine, op) for op in pqm4.OPERATIONS):
            raise ParamsError(f"{name}: {pqm4.IMPLEMENTATIONS_FILE} and {settings.inputs.cycles_file} disagree "
                              "on its fastest cycle counts", field=pqm4.IMPLEMENTATIONS_FILE)
    return cycles, table.source_commit


def metrics(space: pd.DataFrame, fronts: pd.DataFrame, gone: pd.DataFrame, off: pd.DataFrame) -> dict:
    """The numbers docs/case-design-space.md and the notebook quote."""
    new = space[~space["in_paper_space"]]
    out = {
        "points": len(space), "paper_points": int(space["in_paper_space"].sum()), "new_points": len(new),
        "device_known_points": int(space["device_known"].sum()),
        "fits": {"points": int(space["fits"].sum()), "new_points": int(new["fits"].sum()),
                 "new_with_device_cost": int((new["fits"] & new["device_known"]).sum())},
        "smallest_largest_message": {
            "paper": int(space.loc[space["in_paper_space"], "largest"].min()), "all": int(space["largest"].min()),
            "all_with_device_cost": int(space.loc[space["device_known"], "largest"].min())},
        "fronts": {}, "unranked_classes": len(off),
    }
    for name, group in fronts.groupby("restriction", sort=False):
        entering = group[~group["was_on_paper_front"]]
        out["fronts"][name] = {
            "classes": len(group), "new_classes": len(entering), "new_points": int(entering["new_points"].sum()),
            "displaced_paper_classes": int((gone["restriction"] == name).sum()) if len(gone) else 0,
            "entering": [{"total_kB": round(r.total / 1000, 3), "device_ms": r.device_ms,
                          "key_exchange": r.key_exchange, "noc": r.noc, "icac": r.icac, "rcac": r.rcac,
                          "mode": r.mode, "family": r.family} for r in entering.itertuples()]}
    return out


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Build and evaluate the extended space, compute its fronts and fits, draw and write (byte-stable)."""
    paths.check_writable(paths.derived, paths.case_figs)
    cycles, commit = cycle_table(paths, settings)
    space = ext.build(settings.design_space, settings.extended_design_space, cycles,
                      settings.framing.max_app_payload, progress=progress)
    fronts = ext.fronts(space)
    gone = ext.displaced(space)
    off = ext.unranked(space)
    fits = ext.fit_classes(space[~space["in_paper_space"]])
    headline = validated(ExtendedDesignSpaceMetrics, metrics(space, fronts, gone, off) | {"profile": settings.profile})
    figure = fig_extended_design_space(space, fronts)
    recorded = settings.model_dump(mode="json") | {
        "extended_design_space": settings.extended_design_space.model_dump(mode="json")}
    metadata = machine.run_metadata(params=recorded, stable=True) | {"cycles_source": commit}
    pareto = fronts[["restriction", "rank", *SHOWN, "new_points", "was_on_paper_front"]]
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "extended_design_space.parquet", space, metadata)
        out.table(pareto, paths.case_figs / "extended_design_space_pareto")
        out.table(gone, paths.case_figs / "extended_design_space_displaced")
        out.table(fits, paths.case_figs / "extended_design_space_fits")
        out.table(off.head(50), paths.case_figs / "extended_design_space_unranked")
        out.figure(figure, paths.case_figs / "fig_extended_design_space")
        out.metrics(paths.derived / "extended_design_space_metrics.json", headline,
                    label="new points on the front", key="fronts.all.new_points", unit="points")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_extended_design_space": figure},
                       tables={"extended_design_space_pareto": pareto, "extended_design_space_displaced": gone,
                               "extended_design_space_fits": fits, "extended_design_space_unranked": off},
                       metrics=headline, files=out.written,
                       data={"space": space, "restrictions": ext.RESTRICTIONS, "families": ext.FAMILIES,
                             "paper_families": ds.FAMILIES})
