"""Stage ``assumptions`` (beyond the paper): the transport headlines under every channel rule, ACK-loss and
indirect-retry choice the paper leaves open, and the slack bound from Eq. 2's counts (docs/thread-simulator.md)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab.analysis import transport as analysis
from pqlab.analysis.assumptions import headline, loss_free_per_hop, slack_table
from pqlab.analysis.transport_summary import counts_and_medians
from pqlab.figures.assumptions import fig_assumptions
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.assumptions import AssumptionsMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring
from pqlab.transport import assumptions
from pqlab.transport.case_inputs import table1_inputs

STAGE = "assumptions"
RAW = registry.raw_spec(STAGE)
# metrics per set (numbers only: dvc metrics diff compares numbers)
SET_METRICS = ("ratio_min", "ratio_max", "spurious_2hop", "spurious_4hop", "d3_4hop_heavy_ipv6_completion",
               "d3_4hop_heavy_ipv6_median_s", "d3_4hop_heavy_block_completion", "sed_max_failure_rate",
               "sed_scenarios_with_failures", "sed_failures_in_Sigma3")
BOUND_METRICS = ("eq2_expected_total", "slack_s", "t_clean_ipv6_s", "t_clean_block_s", "t_max_s", "ratio_ceiling")


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Per assumption set: counts and medians, the headline row; the slack bound; the figure and metrics."""
    paths.check_writable(paths.derived, paths.case_figs)
    a, thread = settings.assumptions, settings.transport
    frames, raw_metadata = raw_io.read(RAW, settings, paths)
    d3 = thread.figure_configs["drop_in"]
    configs, compute = table1_inputs(list(dict.fromkeys([*thread.configurations, d3])),
                                     paths.input(settings.inputs.cycles_file))
    sets = assumptions.assumption_sets(a, thread)
    _, members = assumptions.assumption_points(a, sets, thread, configs, compute, a.runs)  # each point's set
    runs = frames["assumptions_runs.parquet"].merge(members, on="point_id", how="left")
    rows, summaries = [], {}
    for key, model in sets.items():
        summaries[key] = counts_and_medians(runs[runs["set"] == key])
        rows.append({"set": key, **assumptions.describe(model), **headline(summaries[key], model)})
    table = pd.DataFrame(rows)
    bound = slack_table(thread, configs[d3], compute[d3], a.bound_hops, a.count_tail)
    metrics: dict = {"profile": settings.profile, "runs_per_scenario": a.runs,
                     "sets": {row["set"]: {k: row[k] for k in SET_METRICS if k in row} for row in rows},
                     "bound": {sem: {f"{int(r.hops)}hop": {k: getattr(r, k) for k in BOUND_METRICS}
                                     for r in bound[bound["ack_semantics"] == sem].itertuples()}
                               for sem in ("estimated", "on_arrival")},
                     "loss_free": loss_free_per_hop(thread, configs[d3], compute[d3], a.bound_hops),
                     "raw_samples": raw_provenance.source(raw_metadata)}
    figure = fig_assumptions(table, bound, config=d3, ratio_hops=list(thread.ratio_hops), runs=a.runs)
    shown = table.drop(columns=[c for c in table if c.startswith("d3_") and c.endswith("hop_none_ipv6_median_s")])
    with OutputSet(paths, STAGE) as out:
        out.table(table, paths.case_figs / "assumptions_table", markdown=shown.round(3))
        out.table(bound, paths.case_figs / "assumptions_slack_bound", markdown=bound.round(3))
        out.figure(figure, paths.case_figs / "fig_assumptions")
        out.metrics(paths.derived / "assumptions_metrics.json",
                    validated(AssumptionsMetrics, analysis.jsonable(metrics)),
                    label="4-hop ratio ceiling, Eq. 2", key="bound.estimated.4hop.ratio_ceiling", unit="x")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_assumptions": figure},
                       tables={"assumptions_table": table, "assumptions_slack_bound": bound}, metrics=metrics,
                       files=out.written, data={"summaries": summaries})


run = measuring.runner(STAGE, analyse)
