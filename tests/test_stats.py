"""Statistics: bootstrap intervals, Mann–Whitney U and Cliff's δ checked against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from pqlab.stats import cliffs_delta, compare, median_ci, quantile_cis


def _brute_cliffs(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    greater = sum(int(x > y) for x in a for y in b)
    less = sum(int(x < y) for x in a for y in b)
    return (greater - less) / (a.size * b.size)


@given(a=st.lists(st.integers(0, 20), min_size=1, max_size=30), b=st.lists(st.integers(0, 20), min_size=1, max_size=30))
def test_cliffs_delta_matches_pairwise_count(a, b):
    assert cliffs_delta(np.array(a), np.array(b)) == pytest.approx(_brute_cliffs(a, b), abs=1e-12)


def test_cliffs_delta_extremes():
    assert cliffs_delta(np.arange(10) + 100, np.arange(10)) == 1.0
    assert cliffs_delta(np.arange(10), np.arange(10) + 100) == -1.0
    assert cliffs_delta(np.ones(5), np.ones(7)) == 0.0


def test_compare_detects_a_shift_and_not_its_absence():
    rng = np.random.default_rng(7)
    base = rng.lognormal(0, 0.2, 400)
    shifted = compare(base * 1.5, base)
    assert shifted.p_value < 1e-6 and shifted.cliffs_delta > 0.5
    assert shifted.median_ratio == pytest.approx(1.5)
    same = compare(rng.permutation(base), base)
    assert same.p_value > 0.5 and abs(same.cliffs_delta) < 0.05


def test_quantile_cis_bracket_their_estimates_and_are_reproducible():
    rng = np.random.default_rng(3)
    data = rng.lognormal(0, 0.5, 2000)
    first = quantile_cis(data, 2000, 0.95, seed=11)
    again = quantile_cis(data, 2000, 0.95, seed=11)
    assert first == again
    for name in ("median", "p95", "p99"):
        assert first[f"{name}_lo"] <= first[name] <= first[f"{name}_hi"]
    assert first["median"] == pytest.approx(np.median(data))
    assert first["median_lo"] < first["median_hi"]


def test_quantile_ci_covers_the_true_median_about_as_often_as_claimed():
    rng = np.random.default_rng(5)
    true_median = 1.0  # lognormal(0, s) has median e^0
    hits = sum(
        (r := quantile_cis(rng.lognormal(0, 0.4, 200), 500, 0.9, seed=i))["median_lo"] <= true_median <= r["median_hi"]
        for i in range(60)
    )
    assert 45 <= hits <= 60  # nominal 90 % of 60 = 54


def test_constant_samples_have_degenerate_intervals():
    result = quantile_cis(np.full(50, 3.0), 200, 0.95, seed=0)
    assert result["median"] == result["median_lo"] == result["median_hi"] == 3.0


def test_empty_samples_give_nan_in_every_statistic():
    result = quantile_cis(np.array([]), 200, 0.95, seed=0)
    assert result["n"] == 0
    assert all(np.isnan(v) for k, v in result.items() if k != "n")
    assert all(np.isnan(v) for v in median_ci(np.array([]), 200, 0.95, seed=0))


@pytest.mark.parametrize(("confidence", "low", "high"), [(0.95, 6.0, 14.0), (0.8, 7.0, 13.0)])
def test_median_ci_is_the_bootstrap_distributions_own_percentiles(confidence, low, high):
    """The sample 0, 1, …, 20: a resample's median is at most k when at least 11 of its 21 draws are, so the
    bootstrap distribution of the median is known exactly: P(median <= k) = P(Binomial(21, (k + 1)/21) >= 11).
    Its 2.5 % and 97.5 % points are 6 and 14 (P = 0.018 at 5, 0.056 at 6; 0.944 at 13, 0.982 at 14), its 10 %
    and 90 % points 7 and 13 (0.056 at 6, 0.131 at 7; 0.869 at 12, 0.944 at 13): far enough from the levels that
    20,000 resamples land on them under any seed."""
    k = np.arange(21)
    cdf = stats.binom.sf(10, 21, (k + 1) / 21)
    tail = (1 - confidence) / 2
    assert (k[cdf >= tail][0], k[cdf >= 1 - tail][0]) == (low, high)  # the hand-checked values above
    for seed in (0, 1, 2):
        assert median_ci(k.astype(float), 20_000, confidence, seed) == (10.0, low, high)
