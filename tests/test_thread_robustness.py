"""Property tests: framing invariants for any payload; the C core rejects malformed plans, never crashes."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqlab.framing import frame_psdus
from pqlab.params import FramingParams, ThreadParams, ThreadSwitches
from pqlab.thread import core
from pqlab.thread.model import Scenario, ScenarioError, build_plan

PARAMS = ThreadParams()
SOURCE = ThreadParams(framing=FramingParams(iphc_bytes=25), switches=ThreadSwitches.source_accurate())
BASE = build_plan(Scenario((1300, 3000, 2000, 20), 2, "light_wifi", True, "block"), PARAMS)


@settings(max_examples=200, deadline=None)
@given(payload=st.integers(0, 70_000), multi=st.booleans(), source=st.booleans())
def test_framing_carries_every_byte_in_legal_frames(payload, multi, source):
    p = (SOURCE if source else PARAMS).framing
    psdus = frame_psdus(payload, p, multi_hop=multi, rounding=source, deep_mesh=source)
    assert all(p.mac_overhead_bytes < x <= p.max_psdu_bytes for x in psdus)
    mesh = (6 if source else 5) if multi else 0
    headers = 0 if len(psdus) == 1 else p.frag1_header_bytes + p.fragn_header_bytes * (len(psdus) - 1)
    assert sum(psdus) == len(psdus) * (p.mac_overhead_bytes + mesh) + headers + p.iphc_bytes + payload


@settings(max_examples=150, deadline=None)
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
    except (ValueError, OverflowError):
        return
    assert out.shape == (2, 8)


@settings(max_examples=100, deadline=None)
@given(sizes=st.tuples(*[st.integers(-5, 80_000)] * 4), hops=st.integers(-1, 20),
       transport=st.sampled_from(["ipv6", "pull", "block", "udp"]))
def test_build_plan_accepts_or_raises_scenario_error(sizes, hops, transport):
    try:
        plan = build_plan(Scenario(sizes, hops, "none", False, transport), PARAMS)
    except ScenarioError:
        return
    assert core.run(plan, 0, 1).shape == (1, 8)


def test_wrong_model_vector_length_is_rejected():
    from pqlab.thread import _core

    with pytest.raises(ValueError, match="wrong length"):
        _core.run_batch([1, 2], [0.5], [1], [30], [0] * 4, [0] * 4, [1] * 4, [0] * 4, [0] * 4, [0] * 4, 0, 1, 0, 1)
