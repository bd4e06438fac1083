"""Pareto front of points that minimise two costs (e.g. handshake bytes and device milliseconds)."""

from __future__ import annotations

import numpy as np


def pareto_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """True for every point no other point weakly beats on both costs and strictly on one.

    Exact duplicates of a front point are on the front too (neither dominates the other).
    O(n log n): sort by (x, y) and sweep, keeping the smallest y seen so far.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and the same length (got {x.shape} and {y.shape})")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("costs must not be NaN")
    mask = np.zeros(x.size, dtype=bool)
    best_x = best_y = np.inf
    for index in np.lexsort((y, x)):
        if y[index] < best_y:
            mask[index] = True
            best_x, best_y = x[index], y[index]
        elif y[index] == best_y and x[index] == best_x:
            mask[index] = True
    return mask
