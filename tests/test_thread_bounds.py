"""The slack bound and Eq. 2 counts (pqlab.transport.bounds) from the model's own loss-free estimator."""

from __future__ import annotations

import numpy as np
import pytest

from pqlab.transport import bounds
from pqlab.transport.config import TransportParams, TransportSwitches
from pqlab.transport.model import Scenario, build_plan
from pqlab.transport.reference import DOWN, Handshake

SIZES = (1294, 11361, 10181, 8)   # a drop-in-sized handshake (payload bytes)
COMPUTE = (72.0, 67.0)


def test_loss_free_times_are_the_estimators():
    p = TransportParams()
    lf = bounds.loss_free(SIZES, COMPUTE, p, 3, "ipv6")
    plan = build_plan(Scenario(SIZES, 3, "none", False, "ipv6", COMPUTE), p)
    units = list(range(plan.first_unit[0], plan.first_unit[0] + plan.n_units[0]))
    assert lf.message_s[0] == Handshake(plan, 0).loss_free_arrival(0, units, DOWN) / 1e6
    assert lf.compute_s == (0.072, p.controller_compute_ms / 1e3, 0.067)
    # more hops, proportionally longer transfers (store-and-forward on one channel)
    four = bounds.loss_free(SIZES, COMPUTE, p, 4, "ipv6")
    assert four.message_s[1] == pytest.approx(lf.message_s[1] * 4 / 3, rel=1e-9)


def test_deadlines_are_cumulative_eq1_timers_at_maximum_jitter():
    p = TransportParams()
    controller = 2.0 * p.mrp_margin * (1 + p.mrp_jitter)           # the device's 2000-ms interval, no boost
    device = 0.3 * p.mrp_margin * (1 + p.mrp_jitter) + 1.5         # the controller's 300 ms + the device's boost
    assert bounds.deadline(p, False, 1) == pytest.approx(2 * controller)
    assert bounds.deadline(p, True, 2) == pytest.approx(2 * device + 0.3 * p.mrp_margin * p.mrp_base
                                                        * (1 + p.mrp_jitter) + 1.5)


def test_expected_counts_agree_with_sampling_the_jitter():
    p = TransportParams()
    rng = np.random.default_rng(7)
    for hops in (2, 3, 4):
        lf = bounds.loss_free(SIZES, COMPUTE, p, hops, "ipv6")
        counts = bounds.eq2_counts(lf, p)
        for hs, a in enumerate(counts["ack_s"]):
            timer = bounds.timers(p, sender_is_device=hs % 2 == 1)
            draws = np.cumsum([[f + s * rng.random() for f, s in timer[:-1]] for _ in range(20_000)], axis=1)
            assert counts["expected"][hs] == pytest.approx((draws < a).sum(axis=1).mean(), abs=0.02)
            assert counts["within"][hs] >= int(np.floor(counts["expected"][hs]))


def test_slack_bound_on_arrival_is_sigma1_plus_sigma3_deadlines():
    p = TransportParams(switches=TransportSwitches(piggyback_ack_on_arrival=True))
    ip, blk = (bounds.loss_free(SIZES, COMPUTE, p, 4, t) for t in ("ipv6", "block"))
    b = bounds.slack_bound(ip, blk, p)
    k = b["counts_within"]
    assert b["t_max_s"] == pytest.approx(bounds.deadline(p, False, k[0]) + p.controller_compute_ms / 1e3
                                         + bounds.deadline(p, False, k[2]))
    assert b["slack_s"] == pytest.approx(b["t_max_s"] - b["t_clean_ipv6_s"])
    assert b["ratio_ceiling"] == pytest.approx(b["t_max_s"] / b["t_clean_block_s"])


def test_slack_bound_with_estimated_acks_sums_each_messages_own_slack():
    p = TransportParams()
    ip, blk = (bounds.loss_free(SIZES, COMPUTE, p, 4, t) for t in ("ipv6", "block"))
    b = bounds.slack_bound(ip, blk, p)
    assert b["ack_semantics"] == "estimated"
    assert set(b["slack_by_message_s"]) == {"Sigma2", "Sigma3", "StatusReport"}   # Sigma1 beats every timer
    assert b["slack_s"] == pytest.approx(sum(max(0.0, v) for v in b["slack_by_message_s"].values()))
    # longer timers leave more slack
    slow = p.model_copy(update={"mrp_device_boost_ms": 3000})
    assert bounds.slack_bound(ip, blk, slow)["slack_s"] > b["slack_s"]
