"""Checked arithmetic in the Thread core and its binding: each size, capacity or time that used to overflow (or
wrap, or be converted from a double out of range) is now a typed SimulationError, the same from the C core and its
Python twin. `make sanitize` runs this file under ASan + UBSan, where the old code's overflows are reports."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.errors import SimulationError
from pqlab.transport import _core, core, reference
from pqlab.transport.config import LossScenario, TransportParams
from pqlab.transport.core import _plan_args
from pqlab.transport.model import Scenario, build_plan

HERE = Path(__file__).resolve().parent
THREAD = HERE.parent / "lib" / "pqlab" / "transport"
PARAMS = TransportParams()
BASE = build_plan(Scenario((1300, 3000, 2000, 20), 2, "light_wifi", True, "block"), PARAMS)


def _outcomes(plan) -> tuple[object, object]:
    """Run 0 of a plan in the C core and in the twin: its result tuple, or the SimulationError code."""
    outcomes = []
    for simulate in (lambda: tuple(int(v) for v in core.run(plan, 0, 1)[0]),
                     lambda: reference.simulate(plan, 0).as_tuple()):
        try:
            outcomes.append(simulate())
        except SimulationError as exc:
            outcomes.append(exc.code)
    return outcomes[0], outcomes[1]


def _codes(plan) -> tuple[str, str]:
    """The code the C core and the twin give for a plan ('ok' when it runs)."""
    c, twin = _outcomes(plan)
    return ("ok" if isinstance(c, tuple) else c), ("ok" if isinstance(twin, tuple) else twin)


# ------------------------------------------------------------------ grow(): capacities in size_t, checked
@pytest.fixture(scope="module")
def sim_grow(tmp_path_factory) -> Path:
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("needs a C compiler (cc)")
    out = tmp_path_factory.mktemp("c") / "sim_grow"
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{THREAD}", str(HERE / "thread_c" /
                    "sim_grow.c"), str(THREAD / "sim_core.c"), "-lm", "-o", str(out)], check=True)
    return out


def test_array_growth_refuses_capacities_that_used_to_overflow_an_int(sim_grow):
    lines = subprocess.run([str(sim_grow)], capture_output=True, text=True, check=True).stdout.splitlines()
    half = 2**30  # SIM_MAX_ELEMENTS / 2 + 1 with SIM_MAX_ELEMENTS = INT_MAX
    assert lines == [
        "first SIM_OK 16", "doubled SIM_OK 32", "fits SIM_OK 32",
        "elements SIM_ERR_CAPACITY 32",      # 2^31 elements: beyond an int index (old: `int need` could not say it)
        "bytes SIM_ERR_CAPACITY 32",         # need * size beyond SIZE_MAX (old: wrapped to a small realloc)
        "unchanged 1",
        f"limit SIM_ERR_NO_MEMORY {half}",   # doubling 2^30 stops at INT_MAX (old: `*cap * 2` overflowed)
        "unallocated 1",
    ]


# ------------------------------------------------------------------ sim_validate: unit lengths summed in 64 bits
def test_unit_lengths_summing_past_int_max_are_a_plan_error():
    args = list(_plan_args(BASE))
    args[2], args[3] = [2**31 - 1, 2**31 - 1, 3], [30]  # the int sum used to overflow (wrapping to 1 == frames)
    with pytest.raises(_core.CoreError) as caught:
        _core.run_batch(*args, 0, 1)
    assert caught.value.args[1] == "SIM_ERR_PLAN_UNITS"


def test_a_message_reaching_past_int_max_units_is_a_plan_error():
    plan = copy.deepcopy(BASE)
    plan.first_unit[0] = 2**31 - 1  # first_unit + n_units used to overflow and pass the bounds check
    assert _codes(plan) == ("SIM_ERR_PLAN_REFERENCE", "SIM_ERR_PLAN_REFERENCE")


# ------------------------------------------------------------------ backoff(): the double checked before int64
def test_an_mrp_backoff_beyond_int64_from_accepted_params_is_a_time_range_error():
    # every value inside TransportParams' bounds; the largest backoff is 3.6e9 us x 10 x 10^32 x 11 ~ 4e45 us
    params = TransportParams(mrp_base=10.0, mrp_exponent_cap=32, mrp_transmissions=64, mrp_device_interval_ms=3_600_000,
                          mrp_margin=10.0, mrp_jitter=10.0)
    plan = build_plan(Scenario((1300, 3000, 2000, 20), 2, "heavy_wifi", True, "block"), params)
    assert _codes(plan) == ("SIM_ERR_TIME_RANGE", "SIM_ERR_TIME_RANGE")


def test_a_large_backoff_below_the_limit_still_runs_and_agrees():
    params = TransportParams(mrp_base=10.0, mrp_exponent_cap=6, mrp_transmissions=64, mrp_device_interval_ms=3_600_000,
                          mrp_margin=10.0, mrp_jitter=10.0, max_sim_time_s=60.0)
    plan = build_plan(Scenario((1300, 3000, 2000, 20), 2, "iid_15", False, "ipv6"), params)
    for run in range(3):
        assert tuple(int(v) for v in core.run(plan, run, 1)[0]) == reference.simulate(plan, run).as_tuple()


# ------------------------------------------------------------------ Gilbert-Elliott sojourn: the same check
def test_a_loss_burst_sojourn_beyond_int64_from_accepted_params_is_a_time_range_error():
    rare = LossScenario(p_good=0.01, fraction_bad=1e-12, mean_burst_ms=1e6)  # good-state mean 1e21 us
    params = TransportParams(scenarios={**PARAMS.scenarios, "rare": rare})
    plan = build_plan(Scenario((1300, 3000, 2000, 20), 2, "rare", False, "ipv6"), params)
    assert _codes(plan) == ("SIM_ERR_TIME_RANGE", "SIM_ERR_TIME_RANGE")


def test_a_time_limit_at_the_never_sentinel_is_a_time_range_error():
    plan = copy.deepcopy(BASE)
    plan.ints["max_time_us"] = 2**62  # equal to the core's NEVER: "nothing pending" would no longer end the run
    assert _codes(plan) == ("SIM_ERR_TIME_RANGE", "SIM_ERR_TIME_RANGE")


# ------------------------------------------------------------------ the binding: batch bytes, values, no error pending
@pytest.mark.parametrize("count", [2**57, 2**58, 2**62])
def test_a_batch_whose_bytes_overflow_is_a_capacity_error(count):
    # count * 64 bytes: 2^57 went negative, 2^58 wrapped to 0 bytes (the results then overran the buffer)
    with pytest.raises(SimulationError) as caught:
        core.run(BASE, 0, count)
    assert caught.value.code == "SIM_ERR_CAPACITY"


@pytest.mark.parametrize(("field", "value", "code"), [
    ("max_time_us", 2**64, "SIM_ERR_MODEL_RANGE"),   # used to leave an OverflowError pending across C API calls
    ("hops", -(2**70), "SIM_ERR_MODEL_RANGE"),
])
def test_model_values_beyond_int64_are_a_range_error_not_a_pending_exception(field, value, code):
    plan = copy.deepcopy(BASE)
    plan.ints[field] = value
    assert _codes(plan) == (code, code)


@pytest.mark.parametrize(("field", "value", "code"), [
    ("psdu", 2**40, "SIM_ERR_PLAN_PSDU"),            # was a builtin ValueError
    ("mode", 2**40, "SIM_ERR_PLAN_REFERENCE"),
    ("ack_unit", 2**40, "SIM_ERR_PLAN_REFERENCE"),   # was an OverflowError from the argument parser
    ("rejected", -(2**40), "SIM_ERR_PLAN_REFERENCE"),
])
def test_plan_values_beyond_a_c_int_are_typed_plan_errors(field, value, code):
    plan = copy.deepcopy(BASE)
    if field == "psdu":
        plan.units[3][0] = value
    elif field == "ack_unit":
        plan.ack_unit = value
    else:
        getattr(plan, field)[1] = value
    assert _codes(plan) == (code, code)


# ------------------------------------------------------------------ any bad value: the same answer from both
_EXTREMES = st.sampled_from([-(2**64), -(2**63), -(2**31), -1, 0, 1, 16, 17, 64, 65, 255, 256, 65535, 65536, 65537,
                             2**20 + 1, 2**31 - 1, 2**31, 2**32, 2**32 + 1, 2**61, 2**62, 2**63 - 1, 2**63, 2**64])


@given(field=st.sampled_from(["units", "mode", "first_unit", "n_units", "bitmap_unit", "request_unit", "ack_unit",
                              *["ints"] * 5]),   # the model values: the most fields, the most ways to be wrong
       index=st.integers(0, 40), value=_EXTREMES)
def test_core_and_twin_refuse_the_same_plans_with_the_same_code(field, index, value):
    plan = copy.deepcopy(BASE)
    plan.ints["max_time_us"] = 5_000_000  # a plan that still runs stays quick in the twin
    if field == "ack_unit":
        plan.ack_unit = value
    elif field == "units":
        unit = plan.units[index % len(plan.units)]
        unit[index % len(unit)] = value
    elif field == "ints":
        plan.ints[sorted(plan.ints)[index % len(plan.ints)]] = value
    else:
        getattr(plan, field)[index % 4] = value
    c, twin = _outcomes(plan)
    assert c == twin  # the same code, or (a plan both accept) the same result
    assert isinstance(c, tuple) or c in core.ERROR_NAMES[1:]
