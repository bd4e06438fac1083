"""Thin Python API over the C core: run many handshakes of a plan, results as a NumPy array."""

from __future__ import annotations

import numpy as np

from pqlab.thread import _core
from pqlab.thread.model import FLOAT_FIELDS, INT_FIELDS, Plan

RESULT_FIELDS = ("ok", "time_us", "failed_message", "retransmissions", "spurious", "frames",
                 "device_tx_us", "device_rx_us")


def _plan_args(plan: Plan) -> tuple:
    return (
        [plan.ints[name] for name in INT_FIELDS],
        [float(plan.floats[name]) for name in FLOAT_FIELDS],
        [len(u) for u in plan.units],
        [psdu for u in plan.units for psdu in u],
        plan.mode, plan.first_unit, plan.n_units, plan.bitmap_unit, plan.request_unit, plan.rejected,
        plan.ack_unit,
        plan.seed,
    )


def trace(plan: Plan, run: int) -> tuple[np.ndarray, np.ndarray]:
    """One run's result and its event trace, shape (n, 4): (0, start, flow, channel free) for each frame
    exchange and (1, time, event kind, argument) for each handled event, as reference.simulate_traced."""
    if run < 0:
        raise ValueError("run must be >= 0")
    raw, events = _core.run_batch(*_plan_args(plan), run, 1, True)
    result = np.frombuffer(raw, dtype=np.int64).reshape(1, len(RESULT_FIELDS)).copy()
    if (result[:, 0] < 0).any():
        raise MemoryError("the C core ran out of memory")
    return result[0], np.frombuffer(events, dtype=np.int64).reshape(-1, 4).copy()


def run(plan: Plan, first_run: int, count: int) -> np.ndarray:
    """Simulate runs ``first_run … first_run+count−1`` in C (GIL released); shape (count, 8), int64.

    Columns are RESULT_FIELDS; row i depends only on the plan and run index first_run+i.
    """
    if first_run < 0 or count < 0:
        raise ValueError("first_run and count must be >= 0")
    raw = _core.run_batch(*_plan_args(plan), first_run, count)
    out = np.frombuffer(raw, dtype=np.int64).reshape(count, len(RESULT_FIELDS)).copy()
    if count and (out[:, 0] < 0).any():
        raise MemoryError("the C core ran out of memory")
    return out
