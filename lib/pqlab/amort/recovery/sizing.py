"""Reservation sizing (§V-H): the smallest window R that keeps a service life within a TPM NV-write budget.

One reservation costs one NV write (the counter increment), so a life of N reports needs ceil(N / R) writes; the
budget B is met when N / R <= B, i.e. R >= N / B. Exact rational arithmetic: no rounding before the ceiling.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil

SECONDS_PER_DAY = 86_400


def reports_in_life(report_rate_hz: float, service_years: float, days_per_year: float = 365) -> Fraction:
    """Reports a device sends over its service life."""
    if report_rate_hz <= 0 or service_years <= 0 or days_per_year <= 0:
        raise ValueError("report rate, service life and year length must be positive")
    return Fraction(report_rate_hz) * Fraction(service_years) * Fraction(days_per_year) * SECONDS_PER_DAY


def min_window(nv_write_budget: int, report_rate_hz: float, service_years: float, days_per_year: float = 365,
               *, restarts: int = 0) -> int:
    """Smallest R with ceil(reports / R) + restarts <= budget (each restart spends one extra reservation)."""
    if nv_write_budget <= restarts:
        raise ValueError(f"an NV-write budget of {nv_write_budget} leaves nothing after {restarts} restarts")
    return max(1, ceil(reports_in_life(report_rate_hz, service_years, days_per_year)
                       / (nv_write_budget - restarts)))


def nv_writes(window: int, report_rate_hz: float, service_years: float, days_per_year: float = 365,
              *, restarts: int = 0) -> int:
    """NV writes a window of R spends over the service life (reservations, plus one per restart)."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    return ceil(reports_in_life(report_rate_hz, service_years, days_per_year) / window) + restarts
