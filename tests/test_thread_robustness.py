"""Property tests: framing invariants for any payload; the C core rejects malformed plans, never crashes."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.errors import SimulationError
from pqlab.framing import FramingParams, frame_psdus
from pqlab.transport import core, reference
from pqlab.transport.config import TransportParams, TransportSwitches
from pqlab.transport.model import Scenario, ScenarioError, build_plan

PARAMS = TransportParams()
SOURCE = TransportParams(framing=FramingParams(iphc_bytes=25), switches=TransportSwitches.source_accurate())
BASE = build_plan(Scenario((1300, 3000, 2000, 20), 2, "light_wifi", True, "block"), PARAMS)


@given(payload=st.integers(0, 70_000), multi=st.booleans(), source=st.booleans())
def test_framing_carries_every_byte_in_legal_frames(payload, multi, source):
    p = (SOURCE if source else PARAMS).framing
    psdus = frame_psdus(payload, p, multi_hop=multi, rounding=source, deep_mesh=source)
    assert all(p.mac_overhead_bytes < x <= p.max_psdu_bytes for x in psdus)
    mesh = (6 if source else 5) if multi else 0
    headers = 0 if len(psdus) == 1 else p.frag1_header_bytes + p.fragn_header_bytes * (len(psdus) - 1)
    assert sum(psdus) == len(psdus) * (p.mac_overhead_bytes + mesh) + headers + p.iphc_bytes + payload


@given(field=st.sampled_from(["units", "mode", "first_unit", "n_units", "bitmap_unit", "request_unit", "ack_unit"]),
       index=st.integers(0, 10), value=st.integers(-(2**40), 2**40))
def test_c_core_rejects_malformed_plans(field, index, value):
    plan = copy.deepcopy(BASE)
    target = getattr(plan, field)
    if field == "ack_unit":
        plan.ack_unit = value
    elif field == "units":
        unit = target[index % len(target)]
        unit[index % len(unit)] = value
    else:
        target[index % 4] = value
    try:
        out = core.run(plan, 0, 2)
    except SimulationError as exc:  # also a value that does not fit the C int the binding converts to
        assert exc.code in core.ERROR_NAMES[1:]
        return
    assert out.shape == (2, 8)


@given(sizes=st.tuples(*[st.integers(-5, 80_000)] * 4), hops=st.integers(-1, 20),
       transport=st.sampled_from(["ipv6", "pull", "block", "udp"]))
def test_build_plan_accepts_or_raises_scenario_error(sizes, hops, transport):
    try:
        plan = build_plan(Scenario(sizes, hops, "none", False, transport), PARAMS)
    except ScenarioError:
        return
    assert core.run(plan, 0, 1).shape == (1, 8)


def test_wrong_model_vector_length_is_rejected():
    from pqlab.transport import _core

    with pytest.raises(ValueError, match="wrong length"):
        _core.run_batch([1, 2], [0.5], [1], [30], [0] * 4, [0] * 4, [1] * 4, [0] * 4, [0] * 4, [0] * 4, 0, 1, 0, 1)


@pytest.mark.parametrize(("where", "value", "code"), [
    ("floats", float("nan"), "SIM_ERR_MODEL_NOT_FINITE"),
    ("floats", -0.5, "SIM_ERR_MODEL_NOT_FINITE"),
    ("floats", float("inf"), "SIM_ERR_MODEL_NOT_FINITE"),
    ("ints", -1, "SIM_ERR_MODEL_RANGE"),
])
def test_c_core_validates_every_model_value(where, value, code):
    plan = copy.deepcopy(BASE)
    vector = plan.floats if where == "floats" else plan.ints
    name = "p_good" if where == "floats" else "turnaround_us"
    vector[name] = value
    with pytest.raises(SimulationError) as caught:
        core.run(plan, 0, 1)
    assert caught.value.code == code


def test_probabilities_above_one_are_refused():
    plan = copy.deepcopy(BASE)
    plan.floats["p_bad"] = 1.5
    with pytest.raises(SimulationError, match="probability"):
        core.run(plan, 0, 1)


def test_run_indices_beyond_2_63_are_refused_not_wrapped():
    with pytest.raises(SimulationError) as caught:
        core.run(BASE, 2**63 - 1, 2)
    assert caught.value.code == "SIM_ERR_RUN_RANGE"
    assert core.run(BASE, 2**63 - 2, 1).shape == (1, 8)
    for beyond in (2**63, 2**64, 2**64 + 1, 2**70):  # never wrapped to a small index, in the core or its twin
        for simulate in (lambda run: core.run(BASE, run, 1), lambda run: reference.simulate(BASE, run)):
            with pytest.raises(SimulationError) as caught:
                simulate(beyond)
            assert caught.value.code == "SIM_ERR_RUN_RANGE"


def test_error_names_come_from_the_c_header():
    header = (Path(core.__file__).parent / "sim_core.h").read_text()
    assert core.ERROR_NAMES[0] == "SIM_OK"
    assert all(name in header for name in core.ERROR_NAMES)


@pytest.mark.parametrize(("name", "value"), [
    ("frame_rule", 2), ("ack_never", 3), ("retry_spacing", 3), ("block_handoff", 2),
    ("age_priority", 1),    # together with the frame rule: two channel rules at once
    ("block_handoff", 0),   # the frame rule without block transfer's hand-off timer
])
def test_c_core_refuses_choices_outside_their_values(name, value):
    plan = build_plan(Scenario((1300, 3000, 2000, 20), 2, "light_wifi", True, "block"),
                      TransportParams(channel_priority="frame_fifo"))
    plan.ints[name] = value
    with pytest.raises(SimulationError) as caught:
        core.run(plan, 0, 1)
    assert caught.value.code == "SIM_ERR_MODEL_CHOICE"


def test_c_core_refuses_paths_longer_than_it_keeps_queues_for():
    plan = copy.deepcopy(BASE)
    plan.ints["hops"] = 256
    with pytest.raises(SimulationError) as caught:
        core.run(plan, 0, 1)
    assert caught.value.code == "SIM_ERR_PATH_LENGTH"
    assert "SIM_ERR_PATH_LENGTH" in core.ERROR_NAMES and "SIM_ERR_MODEL_CHOICE" in core.ERROR_NAMES


def test_error_names_table_is_in_step_with_the_header_enum():
    """sim_core.c's names table lists every sim_status of sim_core.h, in the enum's order."""
    import re

    header = (Path(core.__file__).parent / "sim_core.h").read_text()
    body = header.split("typedef enum {", 1)[1].split("} sim_status;", 1)[0]
    enum = [name for name in re.findall(r"^\s*(SIM_[A-Z_]+)", body, re.M) if name != "SIM_ERR_COUNT"]
    assert list(core.ERROR_NAMES) == enum
