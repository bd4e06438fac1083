"""Eq. 2 spurious-retransmission counts and the slack bound, from the model's own loss-free transfer times.

Loss-free times come from the simulator's estimator (``reference.Handshake.loss_free_arrival``: mean CSMA
backoff, no loss, no queueing), so they follow the plan and parameters exactly. With them:

* ``eq2_counts`` applies the paper's Eq. 2 to each message separately: a message is resent once for every MRP
  timer (Eq. 1, cumulative, jitter uniform) that expires before its acknowledgement arrives, at
  A = Ttx(message) + the replying party's computation + Ttx(reply's first unit; the whole reply for IPv6
  fragmentation). Expected counts (numerical convolution over the jitter) and the count k that all but a small
  tail of runs (default 5 %) stay within.
* ``slack_bound`` asks how much the duplicates' airtime may delay the handshake's critical path while every
  message keeps at most that count. A message resent at most k times had its acknowledgement before
  its (k+1)-th cumulative timer at the latest, so the handshake time T has an upper limit T_max; the slack is
  T_max minus the loss-free handshake time T_clean, and T_max / T_block is the largest IPv6/block ratio any
  schedule can give without exceeding the Eq. 2 counts (T_block: the loss-free block-transfer handshake).

The acknowledgement semantics decide which constraints bind (``switches.piggyback_ack_on_arrival``):
estimated (the paper's model) — a piggybacked ACK arrives at the reply's hand-off plus its loss-free transfer,
so each message's own delay X_m is limited by its own timer: X_m <= D_m - (A_m - Ttx_m); the status report,
acknowledged by a standalone ACK after ``standalone_ack_ms``, may be delayed until the device's first timer;
on arrival — the ACK rides on the actual reply, so T = A(Sigma1) + t_ctrl + A(Sigma3) <= D(Sigma1) + t_ctrl +
D(Sigma3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pqlab.transport.config import TransportParams
from pqlab.transport.model import BLOCK, MESSAGES, Scenario, build_plan
from pqlab.transport.reference import DOWN, UP, Handshake

_GRID = 4096  # points per convolution grid (expected counts are exact to about 1e-3)


@dataclass(frozen=True)
class LossFree:
    """Loss-free transfer times (seconds) of one handshake's messages at one hop count."""

    hops: int
    transport: str
    message_s: tuple[float, float, float, float]      # whole message (all units)
    first_unit_s: tuple[float, float, float, float]   # its first unit
    bitmap_s: tuple[float, float, float, float]       # block transfer: the bitmap back (0 otherwise)
    ack_s: float                                       # a standalone ACK
    compute_s: tuple[float, float, float]              # before Sigma2 (device), Sigma3 (controller), status report


def loss_free(sizes: Sequence[int], device_compute_ms: tuple[float, float], params: TransportParams, hops: int,
              transport: str) -> LossFree:
    """The estimator's times for every message of ``sizes`` (always-on device) at ``hops``."""
    loss = params.figure_scenarios["quiet"]
    plan = build_plan(Scenario(tuple(int(s) for s in sizes), hops, loss, False, transport,
                               tuple(device_compute_ms)), params)
    sim = Handshake(plan, 0)
    whole, first, bitmap = [], [], []
    for hs in range(4):
        direction = DOWN if hs % 2 == 0 else UP
        units = list(range(plan.first_unit[hs], plan.first_unit[hs] + plan.n_units[hs]))
        whole.append(sim.loss_free_arrival(0, units, direction) / 1e6)
        first.append(sim.loss_free_arrival(0, units[:1], direction) / 1e6)
        bitmap.append(sim.loss_free_arrival(0, [plan.bitmap_unit[hs]], 1 - direction) / 1e6
                      if plan.mode[hs] == BLOCK else 0.0)
    ack = sim.loss_free_arrival(0, [plan.ack_unit], UP) / 1e6
    m = plan.ints
    compute = (m["dev_compute2_us"] / 1e6, m["ctrl_compute_us"] / 1e6, m["dev_compute3_us"] / 1e6)
    return LossFree(hops, transport, tuple(whole), tuple(first), tuple(bitmap), ack, compute)


def timers(params: TransportParams, sender_is_device: bool) -> list[tuple[float, float]]:
    """Eq. 1 per transmission j = 0 .. mrp_transmissions-1: (fixed part, jitter span) in seconds, so that
    T_j = fixed + span * U. The device's timers use the controller's interval plus the device's boost."""
    interval = (params.mrp_controller_interval_ms if sender_is_device else params.mrp_device_interval_ms) / 1e3
    boost = params.mrp_device_boost_ms / 1e3 if sender_is_device else 0.0
    out = []
    for j in range(params.mrp_transmissions):
        base = interval * params.mrp_margin * params.mrp_base ** min(max(0, j - 1), params.mrp_exponent_cap)
        out.append((base + boost, base * params.mrp_jitter))
    return out


def _prob_sum_below(timer: list[tuple[float, float]], count: int, a: float) -> float:
    """P(T_0 + ... + T_{count-1} < a) with independent uniform jitters (numerical convolution)."""
    fixed = sum(t[0] for t in timer[:count])
    spans = [t[1] for t in timer[:count] if t[1] > 0]
    x = a - fixed
    if not spans:
        return float(x > 0)
    total = sum(spans)
    if x <= 0:
        return 0.0
    if x >= total:
        return 1.0
    step = total / _GRID
    density = np.zeros(1)
    density[0] = 1.0
    for span in spans:
        width = max(1, round(span / step))
        density = np.convolve(density, np.full(width, 1.0 / width))
    cdf = np.cumsum(density)
    return float(cdf[min(len(cdf) - 1, int(x / step))])


def deadline(params: TransportParams, sender_is_device: bool, count: int) -> float:
    """The latest time (jitter at its maximum) of the (count+1)-th cumulative timer expiry."""
    timer = timers(params, sender_is_device)[:count + 1]
    return sum(fixed + span for fixed, span in timer)


def ack_arrivals(lf: LossFree, params: TransportParams) -> tuple[float, float, float, float]:
    """Loss-free acknowledgement time of each message after its hand-off (piggyback on the reply's first unit,
    the whole reply for IPv6 fragmentation; the status report's standalone ACK after ``standalone_ack_ms``)."""
    reply = lf.message_s if lf.transport == "ipv6" else lf.first_unit_s
    d2, ctrl, d3 = lf.compute_s
    out = []
    for hs, compute in ((0, d2), (1, ctrl), (2, d3)):
        own = lf.message_s[hs] + lf.bitmap_s[hs] if lf.transport == "block" else lf.message_s[hs]
        out.append(own + compute + reply[hs + 1])
    out.append(lf.message_s[3] + params.standalone_ack_ms / 1e3 + lf.ack_s)
    return tuple(out)


def eq2_counts(lf: LossFree, params: TransportParams, tail: float = 0.05) -> dict:
    """Per message: the expected number of timers that expire before its loss-free ACK (Eq. 2, no queueing) and
    the count k that all but ``tail`` of runs stay within (P(count > k) <= tail); their totals over Sigma1-3.
    Meaningful for IPv6 fragmentation (every message one MRP message)."""
    arrivals = ack_arrivals(lf, params)
    expected, within = [], []
    for hs, a in enumerate(arrivals):
        timer = timers(params, sender_is_device=hs % 2 == 1)
        cap = params.mrp_transmissions - 1
        above = [_prob_sum_below(timer, j + 1, a) for j in range(cap)]   # P(count > j)
        expected.append(sum(above))
        within.append(next((j for j in range(cap) if above[j] <= tail), cap))
    return {"messages": list(MESSAGES), "ack_s": list(arrivals), "expected": expected, "within": within,
            "expected_total": sum(expected[:3]), "within_total": sum(within[:3])}


def clean_time(lf: LossFree) -> float:
    """Loss-free handshake time: every message and computation in turn (block: each bitmap's airtime too)."""
    return sum(lf.message_s) + sum(lf.compute_s) + (sum(lf.bitmap_s[:3]) if lf.transport == "block" else 0.0)


def slack_bound(ipv6: LossFree, block: LossFree, params: TransportParams, tail: float = 0.05) -> dict:
    """How much delay the duplicates may add while every message keeps its Eq. 2 count (the count all but
    ``tail`` of runs stay within), T_max, and the largest IPv6/block ratio that allows,
    ``ratio_ceiling`` = T_max / T_block. The ACK semantics follow ``switches.piggyback_ack_on_arrival``.
    """
    counts = eq2_counts(ipv6, params, tail)
    k = counts["within"]
    d = [deadline(params, hs % 2 == 1, k[hs]) for hs in range(4)]
    arrivals = counts["ack_s"]
    ctrl = ipv6.compute_s[1]
    t_clean = clean_time(ipv6)
    if params.switches.piggyback_ack_on_arrival:
        legs = {"Sigma1": d[0] - arrivals[0], "Sigma3": d[2] - arrivals[2]}
        t_max = d[0] + ctrl + d[2]
    else:
        # Sigma1 crosses before any timer can expire when it is faster than the earliest first timer
        first_timer = min(timers(params, False)[0][0], timers(params, True)[0][0])
        legs = {MESSAGES[hs]: d[hs] - arrivals[hs] for hs in (1, 2, 3)}
        if ipv6.message_s[0] > first_timer:
            legs["Sigma1"] = d[0] - arrivals[0]
        t_max = t_clean + sum(max(0.0, v) for v in legs.values())
    t_block = clean_time(block)
    slack = t_max - t_clean
    return {"hops": ipv6.hops, "ack_semantics": "on_arrival" if params.switches.piggyback_ack_on_arrival
            else "estimated", "counts_expected": counts["expected"], "counts_within": k,
            "eq2_expected_total": counts["expected_total"], "eq2_within_total": counts["within_total"],
            "deadlines_s": d, "ack_s": list(arrivals), "slack_by_message_s": legs,
            "t_clean_ipv6_s": t_clean, "t_clean_block_s": t_block, "t_max_s": t_max, "slack_s": slack,
            "ratio_ceiling": t_max / t_block if t_block > 0 else math.nan}

