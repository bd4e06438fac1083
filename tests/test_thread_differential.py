"""C core vs Python twin: identical per-handshake results and event traces on a few hundred (scenario, run) pairs,
under the default model and every unstated-assumption choice (frame rule, ACK loss, retry spacing, block timer)."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

from pqlab.errors import SimulationError
from pqlab.transport import _core, core
from pqlab.transport.config import TransportParams, TransportSwitches
from pqlab.transport.model import LATER_INT_FIELDS, TRANSPORTS, Scenario, build_plan
from pqlab.transport.reference import simulate, simulate_traced

SIZES = [
    (400, 775, 560, 20),        # everything fits: one datagram each
    (1359, 1864, 1100, 20),     # two messages just above the limit
    (2386, 10181, 6323, 26),    # large handshake
    (1222, 2459, 2459, 30),     # mid-size, equal messages
]
LOSSES = ["none", "light_wifi", "heavy_wifi", "iid_15"]
VARIANTS = {"paper": TransportSwitches(), "source": TransportSwitches.source_accurate()}


def _cases():
    combos = list(itertools.product(SIZES, TRANSPORTS, (1, 2, 3, 4), LOSSES, (False, True), VARIANTS))
    return [(i, *c) for i, c in enumerate(combos)]


CASES = _cases()


def test_case_count_is_a_few_hundred():
    assert len(CASES) == 4 * 3 * 4 * 4 * 2 * 2


@pytest.mark.parametrize("chunk", range(8))
def test_c_core_equals_python_twin(chunk):
    mismatches = []
    for i, sizes, transport, hops, loss, sleepy, variant in CASES[chunk::8]:
        params = TransportParams(switches=VARIANTS[variant], csma_min_be=3 if i % 2 else 2,
                              channel_priority="message_age" if i % 5 == 0 else "node_arrival")
        plan = build_plan(Scenario(sizes, hops, loss, sleepy, transport, (30.0, 12.0)), params)
        run = i * 7919 % 1000
        c = tuple(int(v) for v in core.run(plan, run, 1)[0])
        py = simulate(plan, run).as_tuple()
        if c != py:
            mismatches.append((sizes, transport, hops, loss, sleepy, variant, run, c, py))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("chunk", range(4))
def test_c_core_event_traces_equal_python_twin(chunk):
    """Every frame exchange (start, flow, channel free) and every handled event, in the same order."""
    for i, sizes, transport, hops, loss, sleepy, variant in CASES[chunk::24]:
        params = TransportParams(switches=VARIANTS[variant])
        plan = build_plan(Scenario(sizes, hops, loss, sleepy, transport, (30.0, 12.0)), params)
        result, events = core.trace(plan, i)
        py_result, py_events = simulate_traced(plan, i)
        assert tuple(int(v) for v in result) == py_result.as_tuple()
        assert [tuple(int(v) for v in row) for row in events] == py_events, (sizes, transport, hops, loss, sleepy)
        assert len(py_events) > 4


# The unstated assumptions (docs/thread-simulator.md): the frame-level channel rule, imm-ACK loss, the spacing of
# indirect retries and block transfer's timer start, in combinations, on every scenario kind.
ASSUMPTIONS = [
    {"channel_priority": "frame_fifo"},
    {"channel_priority": "frame_fifo", "ack_frame_loss": "never"},
    {"channel_priority": "frame_fifo", "indirect_retry_spacing": "poll_interval"},
    {"channel_priority": "frame_fifo", "indirect_retry_spacing": "back_to_back", "ack_frame_loss": "never"},
    {"ack_frame_loss": "never"},
    {"channel_priority": "message_age", "indirect_retry_spacing": "poll_interval"},
    {"indirect_retry_spacing": "back_to_back"},
    {"block_timer_start": "handoff"},
]


def _assumption_cases():
    combos = list(itertools.product(SIZES, TRANSPORTS, (1, 2, 3, 4), LOSSES, (False, True), VARIANTS))
    return [(i, *c, ASSUMPTIONS[i % len(ASSUMPTIONS)]) for i, c in enumerate(combos)]


ASSUMPTION_CASES = _assumption_cases()


@pytest.mark.parametrize("chunk", range(8))
def test_c_core_equals_python_twin_under_every_assumption(chunk):
    mismatches = []
    for i, sizes, transport, hops, loss, sleepy, variant, assumption in ASSUMPTION_CASES[chunk::8]:
        params = TransportParams(switches=VARIANTS[variant], **assumption)
        plan = build_plan(Scenario(sizes, hops, loss, sleepy, transport, (30.0, 12.0)), params)
        run = i * 7907 % 1000
        c = tuple(int(v) for v in core.run(plan, run, 1)[0])
        py = simulate(plan, run).as_tuple()
        if c != py:
            mismatches.append((sizes, transport, hops, loss, sleepy, variant, assumption, run, c, py))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("chunk", range(4))
def test_frame_rule_event_traces_equal_python_twin(chunk):
    """Frame rule (random contention among nodes): every frame exchange and handled event, in the same order."""
    for i, sizes, transport, hops, loss, sleepy, variant, assumption in ASSUMPTION_CASES[chunk::20]:
        params = TransportParams(switches=VARIANTS[variant], **{"channel_priority": "frame_fifo", **assumption})
        plan = build_plan(Scenario(sizes, hops, loss, sleepy, transport, (30.0, 12.0)), params)
        result, events = core.trace(plan, i)
        py_result, py_events = simulate_traced(plan, i)
        assert tuple(int(v) for v in result) == py_result.as_tuple()
        assert [tuple(int(v) for v in row) for row in events] == py_events, (sizes, transport, hops, loss, sleepy)
        assert len(py_events) > 4


def test_new_model_fields_keep_the_default_models_random_stream():
    """A field added later enters the seed only when set: the default model's runs are unchanged."""
    scenario = Scenario((1300, 3000, 2000, 20), 3, "heavy_wifi", False, "ipv6")
    default = build_plan(scenario, TransportParams())
    assert all(default.ints[name] == 0 for name in LATER_INT_FIELDS)
    assert build_plan(scenario, TransportParams(ack_frame_loss="never")).seed != default.seed
    assert build_plan(scenario, TransportParams(channel_priority="frame_fifo")).ints["block_handoff"] == 1


def test_batches_do_not_change_results():
    plan = build_plan(Scenario((1500, 4000, 3000, 20), 2, "heavy_wifi", True, "pull"), TransportParams())
    whole = core.run(plan, 0, 12)
    pieces = np.vstack([core.run(plan, 0, 5), core.run(plan, 5, 1), core.run(plan, 6, 6)])
    assert np.array_equal(whole, pieces)
    assert tuple(int(v) for v in whole[9]) == simulate(plan, 9).as_tuple()


def test_c_core_runs_in_threads_with_identical_results():
    plan = build_plan(Scenario((2386, 10181, 6323, 20), 3, "light_wifi", False, "ipv6"), TransportParams())
    expected = core.run(plan, 0, 40)
    got: dict[int, np.ndarray] = {}
    threads = [threading.Thread(target=lambda k=k: got.__setitem__(k, core.run(plan, 10 * k, 10))) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.array_equal(np.vstack([got[k] for k in range(4)]), expected)


def test_bad_arguments_raise():
    plan = build_plan(Scenario((100, 100, 100, 20), 1, "none", False, "ipv6"), TransportParams())
    with pytest.raises(ValueError):
        core.run(plan, -1, 3)
    with pytest.raises(ValueError, match="count == 1"):
        _core.run_batch(*core._plan_args(plan), 0, 2, True)
    plan.n_units[0] = 0
    with pytest.raises(SimulationError, match="refers to a unit") as caught:
        core.run(plan, 0, 1)
    assert caught.value.code == "SIM_ERR_PLAN_REFERENCE"
