"""The Pareto routine agrees with a brute-force dominance check on random data (ties included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.case.pareto import pareto_mask


def _brute(x, y):
    n = len(x)
    return np.array([
        not any(x[j] <= x[i] and y[j] <= y[i] and (x[j] < x[i] or y[j] < y[i]) for j in range(n))
        for i in range(n)
    ], dtype=bool)


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=60))
def test_matches_brute_force_with_many_ties(points):
    x, y = (np.array(v) for v in zip(*points, strict=True))
    assert np.array_equal(pareto_mask(x, y), _brute(x, y))


def test_matches_brute_force_on_continuous_random_data():
    rng = np.random.default_rng(2026)
    for _ in range(20):
        x, y = rng.lognormal(8, 1, 300), rng.lognormal(4, 1.5, 300)
        assert np.array_equal(pareto_mask(x, y), _brute(x, y))


def test_simple_front():
    x = np.array([1, 2, 3, 2, 1])
    y = np.array([5, 2, 1, 3, 5])
    assert pareto_mask(x, y).tolist() == [True, True, True, False, True]


def test_rejects_nan_and_mismatched_shapes():
    with pytest.raises(ValueError):
        pareto_mask(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        pareto_mask(np.array([1.0]), np.array([1.0, 2.0]))
