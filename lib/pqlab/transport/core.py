"""Thin Python API over the C core: run many handshakes of a plan, results as a NumPy array."""

from __future__ import annotations

import numpy as np

from pqlab.errors import SimulationError
from pqlab.transport import _core
from pqlab.transport.model import FLOAT_FIELDS, INT_FIELDS, Plan

ERROR_NAMES: tuple[str, ...] = _core.error_names()  # sim_status values of sim_core.h, by value

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
    raw, events = _call(plan, run, 1, True)
    result = np.frombuffer(raw, dtype=np.int64).reshape(1, len(RESULT_FIELDS)).copy()
    return result[0], np.frombuffer(events, dtype=np.int64).reshape(-1, 4).copy()


def _call(plan: Plan, first_run: int, count: int, trace: bool = False):
    """One call into the C core; its sim_status failures become SimulationError with the same code."""
    try:
        return _core.run_batch(*_plan_args(plan), first_run, count, trace)
    except _core.CoreError as exc:
        _, name, message = exc.args
        raise SimulationError(name, message) from None


def run(plan: Plan, first_run: int, count: int) -> np.ndarray:
    """Simulate runs ``first_run … first_run+count−1`` in C (GIL released); shape (count, 8), int64.

    Columns are RESULT_FIELDS; row i depends only on the plan and run index first_run+i.
    """
    if first_run < 0 or count < 0:
        raise ValueError("first_run and count must be >= 0")
    raw = _call(plan, first_run, count)
    return np.frombuffer(raw, dtype=np.int64).reshape(count, len(RESULT_FIELDS)).copy()
