"""Stage assumptions: the sets it crosses, its table and metrics, end to end on a reduced grid."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from pqlab import params
from pqlab.analysis import assumptions as assumption_analysis
from pqlab.paths import ProjectPaths
from pqlab.studies import assumptions as study
from pqlab.transport import assumptions
from pqlab.transport.config import TransportParams
from pqlab.transport.sweep_config import AssumptionsParams


def test_sets_cross_rules_and_ack_loss_then_add_single_changes():
    sets = assumptions.assumption_sets(AssumptionsParams(runs=1), TransportParams())
    keys = list(sets)
    assert keys[:6] == [f"{r}-ack_{a}" for r in ("node_arrival", "message_age", "frame_fifo")
                        for a in ("as_data", "never")]
    assert sets["frame_fifo-ack_never"].channel_priority == "frame_fifo"
    assert sets["node_arrival-retry_back_to_back"].indirect_retry_spacing == "back_to_back"
    assert sets["node_arrival-block_timer_handoff"].block_timer_start == "handoff"
    # a further change equal to an existing set is not run twice
    again = AssumptionsParams(runs=1, indirect_retry_spacing=("data_poll_timeout",), block_timer_start=())
    assert len(assumptions.assumption_sets(again, TransportParams())) == 6


@pytest.mark.slow  # runs the whole study
def test_study_writes_the_table_bound_figure_and_metrics(project):
    path = project / "params" / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["assumptions"].update(drop_in_hops=[2, 4], sleepy_hops=[2], bound_hops=[2, 4],
                              indirect_retry_spacing=[], block_timer_start=[])
    path.write_text(yaml.safe_dump(raw))
    settings = params.load(path, "smoke")
    result = study.run(settings, ProjectPaths(project), workers=1, progress=False)
    table = result.tables["assumptions_table"]
    assert len(table) == 6 and set(table["channel_priority"]) == {"node_arrival", "message_age", "frame_fifo"}
    assert set(table["ack_frame_loss"]) == {"as_data", "never"}
    case = project / "paper_figs" / "case"
    for name in ("assumptions_table.csv", "assumptions_table.md", "assumptions_slack_bound.csv",
                 "fig_assumptions.pdf", "fig_assumptions.png"):
        assert (case / name).stat().st_size > 0, name
    metrics = json.loads((project / "data" / "derived" / "assumptions_metrics.json").read_text())
    assert set(metrics["sets"]) == set(table["set"])
    assert set(metrics["bound"]) == {"estimated", "on_arrival"}
    assert set(metrics["bound"]["estimated"]) == {"2hop", "4hop"}
    runs = pd.read_parquet(project / "data" / "raw" / "assumptions_runs.parquet")
    oversized = len(assumptions.oversized(
        {n: s for n, s in zip(*_inputs(project, settings), strict=True)}, settings.transport))
    per_set = 2 * len(settings.transport.scenarios) * 2 + oversized * 1
    assert len(runs) == 6 * per_set * settings.assumptions.runs


def _inputs(project, settings):
    from pqlab.transport.case_inputs import table1_inputs

    configs, _ = table1_inputs(settings.transport.configurations, project / "params" / settings.inputs.cycles_file)
    return list(configs), list(configs.values())


def test_headline_reads_ratios_spurious_and_sleepy_failures():
    thread = TransportParams()
    rows = []
    for hops in (2, 3, 4):
        for loss in thread.scenarios:
            for transport, median in (("ipv6", 3.0 * hops), ("block", 1.5 * hops)):
                rows.append({"config": "D3", "hops": hops, "loss": loss, "sleepy": False, "transport": transport,
                             "runs": 10, "failures": 0, "failure_rate": 0.0, "median_s": median,
                             "mean_spurious": float(hops), "failed_in": "", "failed_0": 0, "failed_1": 0,
                             "failed_2": 0, "failed_3": 0})
    rows.append({"config": "S4", "hops": 4, "loss": "heavy_wifi", "sleepy": True, "transport": "ipv6", "runs": 10,
                 "failures": 4, "failure_rate": 0.4, "median_s": 30.0, "mean_spurious": 1.0, "failed_in": "2",
                 "failed_0": 0, "failed_1": 0, "failed_2": 4, "failed_3": 0})
    out = assumption_analysis.headline(pd.DataFrame(rows), thread)
    assert out["ratio_min"] == out["ratio_max"] == 2.0 and out["ratio_scenarios"] == 8
    assert out["spurious_2hop"] == 2.0 and out["spurious_4hop"] == 4.0
    assert out["sed_max_failure_rate"] == 0.4 and out["sed_failed_in"] == "Sigma3"
    assert out["sed_failures_in_Sigma3"] == 1.0 and out["d3_4hop_heavy_ipv6_completion"] == 1.0
