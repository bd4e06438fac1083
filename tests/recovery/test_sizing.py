"""Reservation sizing: the exact arithmetic of R >= reports / budget."""

from __future__ import annotations

import pytest

from pqlab.amort.recovery.sizing import min_window, nv_writes, reports_in_life


def test_ten_years_at_one_report_per_second_within_half_a_million_writes_needs_631():
    # 10 × 365 × 86 400 = 315 360 000 reports; / 500 000 = 630.72 -> 631
    assert reports_in_life(1, 10) == 315_360_000
    assert min_window(500_000, 1, 10) == 631
    assert nv_writes(631, 1, 10) <= 500_000 < nv_writes(630, 1, 10)


def test_the_minimum_is_tight_for_other_budgets():
    for budget, rate, years in [(100_000, 1, 5), (10**6, 10, 20), (12_345, 0.5, 1)]:
        r = min_window(budget, rate, years)
        assert nv_writes(r, rate, years) <= budget
        assert r == 1 or nv_writes(r - 1, rate, years) > budget


def test_restarts_spend_reservations_and_julian_years_are_longer():
    assert min_window(500_000, 1, 10, restarts=1000) > 631
    assert min_window(500_000, 1, 10, days_per_year=365.25) == 632


@pytest.mark.parametrize("args", [(0, 1, 10), (500_000, 0, 10), (500_000, 1, -1)])
def test_nonsense_is_refused(args):
    with pytest.raises(ValueError):
        min_window(*args)
