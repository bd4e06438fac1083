"""Time a zero-argument callable with perf_counter_ns: warm-up, per-sample batches, empty-call overhead."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from pqlab.errors import ParamsError


def _noop() -> None:
    return None


def _check_counts(reps: int, warmup: int, batch: int) -> None:
    for name, value, minimum in (("reps", reps, 1), ("warmup", warmup, 0), ("batch", batch, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ParamsError(f"must be an integer >= {minimum} (got {value!r})", field=name)


def time_calls(fn: Callable[[], object], reps: int, warmup: int = 0, batch: int = 1) -> np.ndarray:
    """Return ``reps`` samples of nanoseconds per call; each sample times ``batch`` back-to-back calls.

    The clock read costs are inside every sample; subtract ``empty_call_overhead_ns``
    measured with the same ``batch`` to get the operation alone.
    """
    _check_counts(reps, warmup, batch)
    clock = time.perf_counter_ns
    for _ in range(warmup):
        fn()
    samples = np.empty(reps, dtype=np.int64)
    if batch == 1:
        for i in range(reps):
            start = clock()
            fn()
            samples[i] = clock() - start
        return samples.astype(np.float64)
    inner = range(batch)
    for i in range(reps):
        start = clock()
        for _ in inner:
            fn()
        samples[i] = clock() - start
    return samples / batch


def empty_call_overhead_ns(reps: int = 2000, batch: int = 1) -> float:
    """Median nanoseconds the harness spends around a call that does nothing."""
    return float(np.median(time_calls(_noop, reps, warmup=min(reps, 200), batch=batch)))
