"""Timing harness: sample counts, batching, warm-up, overhead, and rejection of bad counts."""

from __future__ import annotations

import time

import numpy as np
import pytest

from pqlab.errors import ParamsError
from pqlab.experiments.harness import empty_call_overhead_ns, time_calls


def test_returns_one_sample_per_rep_and_counts_calls():
    calls = []
    samples = time_calls(lambda: calls.append(1), reps=25, warmup=5, batch=4)
    assert samples.shape == (25,)
    assert len(calls) == 5 + 25 * 4
    assert np.all(samples > 0)


def test_measures_a_known_delay():
    samples = time_calls(lambda: time.sleep(0.002), reps=5)
    assert np.median(samples) >= 2_000_000  # sleep never returns early


def test_batch_reports_per_call_time():
    single = np.median(time_calls(lambda: time.sleep(0.001), reps=5, batch=1))
    batched = np.median(time_calls(lambda: time.sleep(0.001), reps=5, batch=3))
    assert batched < 2 * single  # per call, not per batch of three


def test_empty_call_overhead_is_small_and_positive():
    overhead = empty_call_overhead_ns(reps=500)
    assert 0 < overhead < 100_000


@pytest.mark.parametrize(("kwargs", "field"), [({"reps": 0}, "reps"), ({"reps": -3}, "reps"),
                                                ({"reps": 5, "warmup": -1}, "warmup"),
                                                ({"reps": 5, "batch": 0}, "batch"),
                                                ({"reps": 2.5}, "reps")])
def test_bad_counts_are_params_errors(kwargs, field):
    with pytest.raises(ParamsError, match=field):
        time_calls(lambda: None, **kwargs)
