"""Stage sensitivity end to end on a reduced sweep, and the sweep tables' rules."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from pqlab import params
from pqlab.paths import ProjectPaths
from pqlab.studies import sensitivity
from pqlab.transport import sweeps


def _small(project):
    path = project / "params" / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["sensitivity"].update(interference={"occupancy_pct": [10, 30], "mean_burst_ms": [10, 60]},
                              timers={"controller_interval_ms": [2000], "device_boost_ms": [1500], "hops": [2, 3]},
                              segments={"segment_payload": [600, 1150]})
    path.write_text(yaml.safe_dump(raw))
    return params.load(path, "smoke")


@pytest.mark.slow  # runs the whole study
def test_study_writes_figures_tables_plots_and_metrics(project):
    settings = _small(project)
    result = sensitivity.run(settings, ProjectPaths(project), workers=1, progress=False)
    case = project / "paper_figs" / "case"
    for name in ("fig4_sensitivity.pdf", "fig4_sensitivity.png", "fig5_segment_size.pdf", "fig5_segment_size.png",
                 "fig4a_ipv6_block.csv", "fig4b_pull_block.md", "fig4c_timers.csv", "fig5_segment_size.csv"):
        assert (case / name).stat().st_size > 0, name
    plots = project / "data" / "derived" / "plots"
    heat = pd.read_csv(plots / "fig4ab_heatmaps.csv")
    assert len(heat) == 2 * 2 * 2 and {"panel", "label", "ratio"} <= set(heat.columns)
    metrics = json.loads((project / "data" / "derived" / "sensitivity_metrics.json").read_text())
    assert metrics["ipv6_block"]["cells"] == 4 and metrics["runs_per_cell"] == settings.sensitivity.runs
    assert set(metrics["segments"]) == {"300", "600"} and metrics["segments"]["300"]["slower_min_pct"] is None
    seg = result.tables["fig5_segment_size"]
    assert np.allclose(seg.loc[seg["segment_payload"] == 1150, "relative"], 1.0)
    runs = pd.read_parquet(project / "data" / "raw" / "sensitivity_runs.parquet")
    assert len(runs) == settings.sensitivity.runs * (4 * 3 + 2 * 2 + 2 * 4)   # interference, timers, segments
    assert not (project / "data" / "raw" / ".sensitivity.parts").exists()   # resume cache removed


def test_interference_cells_use_the_base_scenarios_state_probabilities():
    thread = params.TransportParams()
    settings = params.SensitivityParams(runs=1)
    model = sweeps.interference_model(settings, thread)
    cell = model.scenarios[sweeps.loss_name(20, 60)]
    base = thread.scenarios[settings.interference.base_scenario]
    assert (cell.p_good, cell.p_bad, cell.fraction_bad, cell.mean_burst_ms) == (base.p_good, base.p_bad, 0.2, 60.0)
    assert len(model.scenarios) == len(thread.scenarios) + 25


def test_cells_below_the_success_threshold_are_marked_with_the_worse_failure_rate():
    stats = pd.DataFrame({"panel": "interference", "occupancy_pct": [10.0] * 3, "burst_ms": [60.0] * 3,
                          "transport": ["ipv6", "pull", "block"], "median_s": [20.0, 12.0, 10.0],
                          "failure_rate": [0.004, 0.02, 0.0]})
    ipv6 = sweeps.interference_table(stats, "ipv6", 0.995)
    pull = sweeps.interference_table(stats, "pull", 0.995)
    assert ipv6["ratio"].iloc[0] == 2.0 and not ipv6["marked"].iloc[0]
    assert pull["ratio"].iloc[0] == 1.2 and pull["marked"].iloc[0] and pull["failure_rate"].iloc[0] == 0.02


def test_cli_sensitivity_rejects_zero_workers(project, capsys):
    from pqlab import cli

    assert cli.main(["sensitivity", "--params", str(project / "params" / "params.yaml"), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


@pytest.mark.parametrize(("confidence", "low", "high"), [(0.95, 6.0, 14.0), (0.8, 7.0, 13.0)])
def test_a_cells_ratio_interval_is_the_bootstrap_percentile_at_the_configured_level(confidence, low, high):
    """One run over 0, 1, …, 20: the run enters as its value and the ratio's interval is 2 over the known percentile
    points of the median of 0..20 (tests/test_stats.py derives them: 6 and 14 at 95 %, 7 and 13 at 80 %)."""
    from pqlab.analysis.sensitivity_intervals import ratio_of_medians_ci

    lo, hi = ratio_of_medians_ci(np.array([2.0]), np.arange(21.0), 20_000, confidence, np.random.default_rng(0))
    assert (lo, hi) == (2.0 / high, 2.0 / low)
    flipped = ratio_of_medians_ci(np.arange(21.0), np.array([2.0]), 20_000, confidence, np.random.default_rng(0))
    assert flipped == (low / 2.0, high / 2.0)
    rng = np.random.default_rng(0)
    assert ratio_of_medians_ci(np.array([]), np.arange(3.0), 100, confidence, rng) == (None, None)
    assert ratio_of_medians_ci(np.array([3.0]), np.array([2.0]), 100, confidence, rng) == (1.5, 1.5)
