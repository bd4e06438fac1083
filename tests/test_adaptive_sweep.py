"""The adaptive amortisation sweep and Eq. 1 like with like: sizing, allocation under a budget, interleaving, probes,
both model curves and the two-level bootstrap of the median error."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pqlab.amort import eq1
from pqlab.amort.fastpath.api import native_status
from pqlab.analysis import amortisation_models as models
from pqlab.experiments import adaptive_sweep as adaptive
from pqlab.experiments import interval_sweep

PATHS = ["reference"] + (["native"] if native_status()[0] else [])


def test_half_width_is_the_t_interval_of_the_mean():
    values = np.array([10.0, 12.0, 9.0, 11.0, 13.0, 10.5])
    low, high = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    assert adaptive.relative_half_width(values, 0.95) == pytest.approx((high - low) / 2 / values.mean())
    assert adaptive.relative_half_width(np.array([5.0]), 0.95) == math.inf


def test_required_checkpoints_follow_the_spread():
    rng = np.random.default_rng(1)
    noisy, quiet = rng.normal(100, 30, 400), rng.normal(100, 3, 400)
    need = adaptive.required_checkpoints(noisy, 0.03, 0.95)
    assert need == math.ceil((1.959964 * noisy.std(ddof=1) / noisy.mean() / 0.03) ** 2)
    assert 300 < need < 500 and adaptive.required_checkpoints(quiet, 0.03, 0.95) < 10
    # a 10 % target needs about (3/10)^2 of the samples
    assert adaptive.required_checkpoints(noisy, 0.10, 0.95) == pytest.approx(need * 0.09, rel=0.05)


def test_allocation_spreads_the_need_over_the_trials_left():
    need, minimum, each = {"a": 300, "b": 10, "c": 0}, {"a": 4, "b": 4, "c": 4}, {"a": 0.01, "b": 0.01, "c": 0.01}
    assert adaptive.allocate(need, minimum, each, 2, budget_s=100.0, cap=10_000) == {"a": 150, "b": 5, "c": 4}
    assert adaptive.allocate(need, minimum, each, 1, budget_s=100.0, cap=100) == {"a": 100, "b": 10, "c": 4}


def test_a_short_budget_shrinks_every_share_above_the_minimum_by_one_factor():
    need, minimum = {"a": 1000, "b": 200}, {"a": 10, "b": 10}
    each = {"a": 0.001, "b": 0.01}
    alloc = adaptive.allocate(need, minimum, each, 1, budget_s=1.0, cap=10**6)
    spent = sum(alloc[p] * each[p] for p in alloc)
    assert spent <= 1.0 + 1e-9
    factor = {p: (alloc[p] - minimum[p]) / (need[p] - minimum[p]) for p in alloc}
    assert factor["a"] == pytest.approx(factor["b"], abs=0.01) and 0 < factor["a"] < 1
    # no budget at all: the minimum everywhere, never less
    assert adaptive.allocate(need, minimum, each, 1, budget_s=0.0, cap=10**6) == minimum


def _points(tmp_path, ks):
    nolog = interval_sweep.Baseline("nolog", "no log", "ML-DSA-65", "auto", False)
    log = interval_sweep.Baseline("log", "log", "ML-DSA-65", "auto", True, "tmp", tmp_path)
    return [adaptive.Point(b, k, 0.03) for b in (nolog, log) for k in ks]


@pytest.mark.parametrize("path", PATHS)
def test_the_sweep_interleaves_points_and_probes_and_sizes_them(path, tmp_path):
    ks = [1, 2, 16]
    points = _points(tmp_path, ks)
    probes = adaptive.probe_plan(points, ks, 3, tmp_path, small=6, large=2, fsync_reps=3, sign_reps=4)
    assert probes.touched == (1, 2, 3) and probes.log_signers == ("ML-DSA-65",)
    target = adaptive.SweepTarget(0.03, 0.95, trials=2, budget_s=2.0, min_reports=8, min_checkpoints=2, rounds=3)
    result = adaptive.adaptive_sweep(path, points, probes, target, seed=4, n_devices=3, progress_bar=False)
    raw, plan = result.raw, result.plan
    assert set(zip(raw["scheme"], raw["k"], strict=True)) == {p.key for p in points}
    assert (raw.groupby(["scheme", "k"])["trial"].nunique() == 2).all()
    first = plan[plan["trial"] == 0].set_index(["scheme", "k"])["checkpoints"]
    assert dict(first) == {p.key: adaptive.minimum_checkpoints(p.k, target) for p in points}  # the pilot
    assert (plan["checkpoints"] >= 2).all()
    # the probes: path at the smallest and largest k per signer and trial, fsync per size and trial
    assert set(result.path["k"]) == {1, 16} and set(result.path["trial"]) == {0, 1}
    # nothing signed (a fixed signature) and nothing written (no fsync) in the path probe; medians, because one
    # sample of a call taking 0.15 µs can be preempted for tens of µs on a busy machine (seen: 17.7 µs under -n 2)
    assert result.path["sign_ns"].median() < result.path["path_ns"].median()
    assert result.path["write_ns"].median() < 10_000
    assert len(result.fsync) == 2 * 3 * 3 and set(result.fsync["touched"]) == {1, 2, 3}
    sizes = result.sizes.set_index("touched")["checkpoint_octets"]
    # signing over a message as long as the largest checkpoint, real ML-DSA: the pilot's 4 in the first trial, then
    # at least 4 and as many as ML-DSA's heavy-tailed time needs for ±3 %
    per_trial = result.sign.groupby("trial").size()
    assert per_trial[0] == 4 and per_trial[1] >= 4
    # each signature of the logged signer is followed by an append of a real checkpoint, every size in turn
    assert set(result.sign["touched"]) == {1, 2, 3} and (result.sign["append_ns"] > 0).all()
    assert set(zip(result.sign["touched"], result.sign["checkpoint_octets"], strict=True)) == set(sizes.items())
    assert set(result.sign["message_octets"]) == {int(sizes[3])} and (result.sign["ns"] > 1_000).all()
    assert sizes[1] < sizes[2] < sizes[3]
    for k, group in raw.groupby("k"):  # the sweep writes the sizes the probe appends
        assert set(group["checkpoint_octets"]) == {int(sizes[min(k, 3)])}
    assert list(tmp_path.iterdir()) == []  # no probe or sweep log left behind
    summary, replicates = adaptive.summarise(raw, 300, 0.95, seed=1)
    assert len(summary) == len(points) and all(len(replicates[p.key]) == 300 for p in points)


def test_the_order_differs_between_trials_and_follows_the_seed(tmp_path, monkeypatch):
    ks = [1, 2, 4, 8]
    points = _points(tmp_path, ks)[:4]
    probes = adaptive.probe_plan(points, ks, 2, None, small=2, large=2, fsync_reps=2)
    target = adaptive.SweepTarget(0.03, 0.95, trials=3, budget_s=0.0, min_reports=1, min_checkpoints=1)
    seen: list[int] = []
    real = interval_sweep.run_point

    def spy(path, baseline, key, keys, k, *args, **kwargs):
        if kwargs.get("fixed_signature") is None:
            seen.append(k)
        return real(path, baseline, key, keys, k, *args, **kwargs)

    monkeypatch.setattr(interval_sweep, "run_point", spy)
    adaptive.adaptive_sweep("reference", points, probes, target, seed=11, n_devices=2, progress_bar=False)
    orders = [seen[i:i + 4] for i in range(0, 12, 4)]
    assert all(sorted(order) == ks for order in orders) and len({tuple(o) for o in orders}) > 1
    again: list[int] = []
    seen = again
    monkeypatch.setattr(interval_sweep, "run_point", spy)
    adaptive.adaptive_sweep("reference", points, probes, target, seed=11, n_devices=2, progress_bar=False)
    assert [seen[i:i + 4] for i in range(0, 12, 4)] == orders


def test_path_terms_cost_uses_the_fsync_of_the_checkpoint_size_each_k_produces():
    terms = models.PathTerms("x", per_report_us=0.5, per_checkpoint_us=3.0, c_sign_us=100.0,
                             fsync_us={1: 10.0, 2: 20.0, 4: 40.0})
    assert terms.cost(1) == pytest.approx(0.5 + 113.0)
    assert terms.cost(3) == pytest.approx(0.5 + 123.0 / 3)     # three devices touched: the 2-device probe below
    assert terms.cost(64) == pytest.approx(0.5 + 143.0 / 64)
    np.testing.assert_allclose(terms.cost(np.array([1.0, 64.0])), [113.5, 0.5 + 143.0 / 64])
    nolog = models.PathTerms("y", 0.5, 3.0, 100.0)
    assert nolog.cost(8) == pytest.approx(0.5 + 103.0 / 8)


def _points_frame(measured, model, ks=(1, 4, 16, 64)):
    return pd.DataFrame({"scheme": "s", "k": list(ks), "measured_us": measured, "measured_lo": measured,
                         "measured_hi": measured, "model_us": model})


def test_median_error_interval_resamples_points_and_each_points_mean():
    measured, model = [110.0, 30.0, 10.0, 5.0], [100.0, 30.0, 11.0, 5.5]
    frame = _points_frame(measured, model)
    fixed = {("s", k): np.full(500, m) for k, m in zip(frame["k"], measured, strict=True)}
    point, low, high = models.median_error_ci(frame, fixed, "model_us", 0.95, seed=3)
    errors = np.abs(np.array(measured) - model) / model
    assert point == pytest.approx(np.median(errors))
    assert errors.min() <= low <= point <= high <= errors.max()   # points resampled only: within their range
    rng = np.random.default_rng(2)
    noisy = {("s", k): rng.normal(m, 0.2 * m, 500) for k, m in zip(frame["k"], measured, strict=True)}
    _, low2, high2 = models.median_error_ci(frame, noisy, "model_us", 0.95, seed=3)
    assert high2 - low2 > high - low                                 # each point's own spread widens it


def test_compare_gives_both_models_and_error_ranges():
    published = {"s": eq1.CostInputs(0.5, 0.5, 100.0, 0.0)}
    path = {"s": models.PathTerms("s", 0.8, 2.0, 100.0)}
    frame = pd.DataFrame({"scheme": "s", "k": [1, 100], "measured_us": [103.0, 1.9],
                          "measured_lo": [101.0, 1.85], "measured_hi": [105.0, 1.95]})
    out = models.compare(frame, published, path)
    np.testing.assert_allclose(out["model_us"], [101.0, 2.0])
    np.testing.assert_allclose(out["model_path_us"], [102.8, 0.8 + 1.02])
    np.testing.assert_allclose(out["relative_error"], [2 / 101, 0.1 / 2])
    assert out.loc[0, "relative_error_path_lo"] == 0.0   # the model lies inside the point's interval
    assert out.loc[1, "relative_error_lo"] == pytest.approx(0.05 / 2)


@pytest.mark.parametrize(("name", "value"), [("target_half_width_pct", 0), ("beside_half_width_pct", 101),
                                            ("sweep_budget_s", -1), ("path_probe_small", 1), ("fsync_probe_reps", 0)])
def test_bad_sweep_params_name_the_field(repo_root, name, value):
    import yaml

    from pqlab import params
    from pqlab.errors import ParamsError

    data = yaml.safe_load((repo_root / "params" / "params.yaml").read_text())
    data["amortisation"]["profiles"]["quick"][name] = value
    with pytest.raises(ParamsError, match=rf"amortisation\.profiles\.quick\.{name}: "):
        params.resolve(data, "quick")


@pytest.mark.parametrize(("total", "rounds", "expected"), [(4, 8, [0, 1, 0, 1, 0, 1, 0, 1]), (10, 3, [3, 3, 4]),
                                                           (0, 2, [0, 0]), (7, 1, [7])])
def test_a_trials_work_is_spread_evenly_over_its_rounds(total, rounds, expected):
    assert adaptive.spread(total, rounds) == expected


def test_every_point_runs_in_every_round_it_has_work_for(tmp_path, monkeypatch):
    """Rounds interleave the points: a point with at least as many checkpoints as rounds runs in each round."""
    ks = [1, 4]
    points = _points(tmp_path, ks)[:2]
    probes = adaptive.probe_plan(points, ks, 2, None, small=2, large=2, fsync_reps=2)
    target = adaptive.SweepTarget(0.03, 0.95, trials=1, budget_s=0.0, min_reports=1, min_checkpoints=3, rounds=3)
    calls: list[tuple[int, int]] = []
    real = interval_sweep.run_point

    def spy(path, baseline, key, keys, k, checkpoints, *args, **kwargs):
        if kwargs.get("fixed_signature") is None:
            calls.append((k, checkpoints))
        return real(path, baseline, key, keys, k, checkpoints, *args, **kwargs)

    monkeypatch.setattr(interval_sweep, "run_point", spy)
    result = adaptive.adaptive_sweep("reference", points, probes, target, seed=1, n_devices=2, progress_bar=False)
    assert sorted(calls) == [(1, 1)] * 3 + [(4, 1)] * 3  # three rounds, one checkpoint each
    assert (result.raw.groupby("k").size() == 3).all()


def test_the_checkpoint_probe_appends_each_size_in_turn_from_its_offset(tmp_path):
    sizes = ((1, 100), (2, 200), (3, 300))
    frame = adaptive.checkpoint_probe("ML-DSA-65", "auto", 64, 4, np.random.default_rng(1), tmp_path, sizes, start=1)
    assert list(frame["touched"]) == [2, 3, 1, 2] and list(frame["checkpoint_octets"]) == [200, 300, 100, 200]
    assert (frame["ns"] > 0).all() and (frame["append_ns"] > 0).all() and list(tmp_path.iterdir()) == []
