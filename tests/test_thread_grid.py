"""Grid runner: scenario enumeration, resumability, identical results on 1 or 2 processes and on Dask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pqlab.analysis.transport import one_label_per_fitting_config
from pqlab.analysis.transport_summary import summarise
from pqlab.stats import median_ci
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import SCHEDULER_ENV, GridPoint, grid_points, run_grid, simulate_points

CONFIGS = {"small": (300, 700, 500, 20), "large": (1300, 5000, 2600, 20)}


def _params() -> TransportParams:
    return TransportParams(hops=(1, 3), runs=4)


def test_grid_enumeration_matches_the_paper_count():
    p = TransportParams()
    configs = {f"K{i}": (1300 + i, 5000, 2600, 20) for i in range(15)}
    assert len(grid_points(configs, p)) * p.runs == 432_000  # 15 × 4 hops × 4 scenarios × 2 devices × 3 × 300
    fits = grid_points({"fits": (300, 700, 500, 20)}, p)
    assert {pt.transport for pt in fits} == {"datagram"} and len(fits) == 4 * 4 * 2


def test_paper_count_runs_fitting_configurations_under_every_label_with_identical_results():
    p = TransportParams(fitting_under_every_transport=True)
    configs = {f"K{i}": (1300 + i, 5000, 2600, 20) for i in range(13)} | {"B": (174, 775, 619, 8),
                                                                            "C1": (975, 1026, 619, 8)}
    assert len(grid_points(configs, p)) * p.runs == 432_000  # as the paper counts: 15 × 4 × 4 × 2 × 3 × 300
    fits = grid_points({"B": configs["B"]}, p.model_copy(update={"hops": (2,), "runs": 3}))
    assert {pt.transport for pt in fits} == {"ipv6", "pull", "block"}
    table = simulate_points(fits, p, 3)
    by_label = {label: group.drop(columns=["point_id", "transport"]).reset_index(drop=True)
                for label, group in table.groupby("transport")}
    pd.testing.assert_frame_equal(by_label["ipv6"], by_label["pull"])
    pd.testing.assert_frame_equal(by_label["ipv6"], by_label["block"])
    summary = one_label_per_fitting_config(summarise(table, 200, 0.95, 1), {"B"})
    assert set(summary["transport"]) == {"datagram"} and len(summary) == len(fits) // 3


def test_points_may_carry_their_own_model():
    p = TransportParams(hops=(2,), runs=2)
    base = grid_points({"large": CONFIGS["large"]}, p)[0]
    other = GridPoint(base.config, base.transport, base.scenario, p.model_copy(update={"ack_frame_loss": "never"}))
    assert other.point_id(p, 2) != base.point_id(p, 2)
    assert base.point_id(p, 2) == GridPoint(base.config, base.transport, base.scenario).point_id(p, 2)


def test_results_do_not_depend_on_workers_or_chunking(tmp_path):
    p = _params()
    points = grid_points(CONFIGS, p)
    one = run_grid(points, p, tmp_path / "a.parts", workers=1, chunk_size=3, progress=False)
    two = run_grid(points, p, tmp_path / "b.parts", workers=2, chunk_size=5, progress=False)
    assert len(one) == (2 * 4 * 2) * (1 + 3) * 4  # hops × losses × devices × transports × runs
    pd.testing.assert_frame_equal(one, two)


def test_rerun_skips_completed_scenarios(tmp_path):
    p = _params()
    points = grid_points(CONFIGS, p)
    first = run_grid(points[:10], p, tmp_path / "g.parts", workers=1, progress=False)
    parts = sorted((tmp_path / "g.parts").glob("part-*.parquet"))
    stamps = {part: part.stat().st_mtime_ns for part in parts}
    full = run_grid(points, p, tmp_path / "g.parts", workers=1, progress=False)
    assert all(part.stat().st_mtime_ns == stamps[part] for part in parts)  # old parts untouched
    assert full["point_id"].nunique() == len(points)
    pd.testing.assert_frame_equal(
        full[full["point_id"].isin(first["point_id"])].reset_index(drop=True), first.reset_index(drop=True))


def test_dask_local_cluster_gives_identical_results(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    p = _params()
    points = grid_points({"large": CONFIGS["large"]}, p)[:12]
    local = run_grid(points, p, tmp_path / "local.parts", workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        remote = run_grid(points, p, tmp_path / "dask.parts", scheduler=cluster.scheduler_address,
                          chunk_size=2, progress=False)
        monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)  # the address from the environment
        from_env = run_grid(points, p, tmp_path / "env.parts", chunk_size=5, progress=False)
        workers_seen = len(cluster.workers)
    pd.testing.assert_frame_equal(local, remote)
    pd.testing.assert_frame_equal(local, from_env)
    assert workers_seen == 2


def test_summary_reports_medians_with_cis_and_failures(tmp_path):
    p = _params()
    table = run_grid(grid_points(CONFIGS, p), p, tmp_path / "g.parts", workers=1, progress=False)
    summary = summarise(table, resamples=200, confidence=0.95, seed=1)
    assert len(summary) == table["point_id"].nunique()
    ok = summary.dropna(subset=["median_s"])
    assert (ok["median_lo_s"] <= ok["median_s"]).all() and (ok["median_s"] <= ok["median_hi_s"]).all()
    assert (summary["failures"] == summary["failure_rate"] * summary["runs"]).all()


def test_median_ci_brackets_the_median():
    data = np.random.default_rng(3).exponential(2.0, 300)
    m, lo, hi = median_ci(data, 1000, 0.95, seed=4)
    assert lo < m < hi and m == pytest.approx(np.median(data))
    assert np.isnan(median_ci(np.array([]), 100, 0.95, 0)[0])
