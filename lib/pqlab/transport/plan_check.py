"""The C core's plan checks in Python, check for check: the twin refuses every plan the core refuses, with its code.

The order is the core's: what the binding (_core.c) checks while converting the plan to C values, then
``sim_validate`` (sim_core.c). A doubly bad plan therefore gets the same code from both. Each error names the field.
"""

from __future__ import annotations

import math

from pqlab.errors import SimulationError
from pqlab.transport.model import BLOCK, FLOAT_FIELDS, INT_FIELDS, MAX_SEGMENTS, SINGLE, Plan

INT64 = 1 << 63
C_INT_MAX = 2**31 - 1            # the binding holds plan indices and sizes in C ints (INT_MIN excluded)
MAX_UNITS, MAX_FRAMES = 1_000_000, 100_000_000   # SIM_BINDING_MAX_UNITS / _FRAMES
MAX_HOPS = 255                   # SIM_MAX_HOPS
TIME_LIMIT = 1 << 61             # SIM_TIME_LIMIT
SOJOURN_MEAN_LIMIT = 2.0**55     # SIM_SOJOURN_MEAN_LIMIT
CHOICE_MAX = {"age_priority": 1, "frame_rule": 1, "ack_never": 1, "retry_spacing": 2, "block_handoff": 1}
# Upper bounds keeping every int64 time sum of a run below 2^63 (sim_core.h: SIM_SIZE_MAX ... SIM_DURATION_MAX)
UPPER_BOUNDS = {
    65535: ("phy_bytes", "ack_psdu", "poll_psdu"),
    2**20: ("byte_us", "unit_us"),
    16: ("min_be", "retx_max_exp"),
    65536: ("max_retries", "indirect_attempts", "exp_cap", "mrp_tx"),
    2**32: ("turnaround_us", "cca_us", "ack_wait_us", "poll_us", "gap_us", "reasm_us", "tick_us", "dev_interval_us",
            "ctrl_interval_us", "boost_us", "standalone_us", "ctrl_compute_us", "dev_compute2_us", "dev_compute3_us",
            "poll_timeout_us"),
}


def _refuse(code: str, what: str) -> None:
    raise SimulationError(code, what)


def _c_int(value: int, code: str, field: str) -> None:
    if not -C_INT_MAX <= value <= C_INT_MAX:
        _refuse(code, f"{field}: {value} does not fit the simulator's int (|value| < 2^31)")


def _binding(plan: Plan) -> None:
    """What _core.c's fill_plan refuses while converting."""
    for name in INT_FIELDS:
        if not -INT64 <= plan.ints[name] < INT64:
            _refuse("SIM_ERR_MODEL_RANGE", f"{name}: {plan.ints[name]} is beyond int64")
    n_frames = sum(len(u) for u in plan.units)
    if not plan.units or n_frames == 0:
        _refuse("SIM_ERR_PLAN_EMPTY", "the plan has no units or no frames")
    if len(plan.units) > MAX_UNITS or n_frames > MAX_FRAMES:
        _refuse("SIM_ERR_CAPACITY", f"{len(plan.units)} units / {n_frames} frames: at most {MAX_UNITS} / {MAX_FRAMES}")
    for u in plan.units:
        _c_int(len(u), "SIM_ERR_PLAN_UNITS", "units")
    for u in plan.units:
        for psdu in u:
            _c_int(psdu, "SIM_ERR_PLAN_PSDU", "psdu")
    for name in ("mode", "first_unit", "n_units", "bitmap_unit", "request_unit", "rejected"):
        values = getattr(plan, name)
        if len(values) != 4:
            _refuse("SIM_ERR_PLAN_REFERENCE", f"{name}: 4 values expected, got {len(values)}")
        for value in values:
            _c_int(value, "SIM_ERR_PLAN_REFERENCE", name)
    _c_int(plan.ack_unit, "SIM_ERR_PLAN_REFERENCE", "ack_unit")


def _structure(plan: Plan) -> None:
    n_units = len(plan.units)
    offset = 0
    for i, u in enumerate(plan.units):
        if len(u) < 1 or offset > C_INT_MAX:
            _refuse("SIM_ERR_PLAN_UNITS", f"units[{i}]: a unit without frames, or beyond 2^31-1 frames in")
        offset += len(u)
    for hs in range(4):
        first, count = plan.first_unit[hs], plan.n_units[hs]
        if not 1 <= count <= MAX_SEGMENTS:
            _refuse("SIM_ERR_PLAN_REFERENCE", f"n_units[{hs}]: {count} outside 1..{MAX_SEGMENTS}")
        if (first < 0 or first + count > n_units or not 0 <= plan.bitmap_unit[hs] < n_units
                or not 0 <= plan.request_unit[hs] < n_units or not SINGLE <= plan.mode[hs] <= BLOCK):
            _refuse("SIM_ERR_PLAN_REFERENCE", f"message {hs}: a unit that does not exist or an unknown mode")
    if not 0 <= plan.ack_unit < n_units:
        _refuse("SIM_ERR_PLAN_REFERENCE", f"ack_unit: {plan.ack_unit} is not a unit")
    for u in plan.units:
        for psdu in u:
            if not 1 <= psdu <= 65535:
                _refuse("SIM_ERR_PLAN_PSDU", f"psdu: {psdu} B outside 1..65535")


def _model(plan: Plan) -> None:
    m, f = plan.ints, {name: float(plan.floats[name]) for name in FLOAT_FIELDS}
    if (m["hops"] < 1 or m["poll_us"] < 1 or m["tick_us"] < 1 or not 0 <= m["min_be"] <= 30
            or not 0 <= m["retx_max_exp"] <= 30 or m["max_retries"] < 0 or m["indirect_attempts"] < 1
            or m["exp_cap"] < 0 or m["mrp_tx"] < 1 or m["max_time_us"] < 0):
        _refuse("SIM_ERR_MODEL_RANGE", "hops, poll_us, tick_us, min_be, retx_max_exp, max_retries, "
                "indirect_attempts, exp_cap, mrp_tx or max_time_us out of range")
    for name in INT_FIELDS:
        if m[name] < 0:
            _refuse("SIM_ERR_MODEL_RANGE", f"{name}: {m[name]} is negative")
    for top, names in UPPER_BOUNDS.items():
        for name in names:
            if m[name] > top:
                _refuse("SIM_ERR_MODEL_RANGE", f"{name}: {m[name]} above {top}")
    if m["hops"] > MAX_HOPS:
        _refuse("SIM_ERR_PATH_LENGTH", f"hops: {m['hops']} above {MAX_HOPS}")
    if (any(m[name] > top for name, top in CHOICE_MAX.items()) or m["age_priority"] + m["frame_rule"] > 1
            or (m["frame_rule"] and not m["block_handoff"])):
        _refuse("SIM_ERR_MODEL_CHOICE", "a channel rule, ACK-loss or indirect-retry choice outside its values")
    for name, value in f.items():
        if not (math.isfinite(value) and value >= 0.0):
            _refuse("SIM_ERR_MODEL_NOT_FINITE", f"{name}: {value} is not a finite non-negative number")
    if f["p_good"] > 1.0 or f["p_bad"] > 1.0 or f["fraction_bad"] >= 1.0:
        _refuse("SIM_ERR_MODEL_NOT_FINITE", "p_good, p_bad or fraction_bad above 1")
    if f["fraction_bad"] > 0.0 and (f["burst_us"] <= 0.0 or f["good_us"] <= 0.0):
        _refuse("SIM_ERR_MODEL_NOT_FINITE", "burst_us and good_us must be positive with fraction_bad > 0")
    _times(m, f)


def _times(m: dict[str, int], f: dict[str, float]) -> None:
    """Every time converted from a double stays below 2^61 us (sim_validate's last checks, same arithmetic)."""
    if m["max_time_us"] >= TIME_LIMIT or m["boost_us"] >= TIME_LIMIT:
        _refuse("SIM_ERR_TIME_RANGE", "max_time_us or boost_us at or beyond 2^61 us")
    for name in ("burst_us", "good_us"):
        if not f[name] < SOJOURN_MEAN_LIMIT:
            _refuse("SIM_ERR_TIME_RANGE", f"{name}: a mean sojourn of {f[name]:g} us (at most 2^55)")
    exponent = min(max(m["mrp_tx"] - 2, 0), m["exp_cap"])
    try:
        growth = max(1.0, math.pow(f["base"], float(exponent)))
    except OverflowError:  # C's pow gives inf here, which the check below refuses the same way
        growth = math.inf
    for name in ("dev_interval_us", "ctrl_interval_us"):
        if not float(m[name]) * f["margin"] * growth * (1.0 + f["jitter"]) < TIME_LIMIT:
            _refuse("SIM_ERR_TIME_RANGE", f"{name}: the largest MRP backoff (base^{exponent}, full jitter) is at "
                    "or beyond 2^61 us")


def validate(plan: Plan) -> None:
    """Raise SimulationError with the C core's code for any plan the core would refuse."""
    _binding(plan)
    _structure(plan)
    _model(plan)
