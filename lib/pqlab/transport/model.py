"""A simulated handshake: the scenario, its flat numeric model, and its precomputed transmission plan.

The plan (which datagrams each message becomes and the PSDU size of every frame) is deterministic,
so it is computed once here and handed to both the C core and the Python twin.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from pqlab.errors import PqlabError
from pqlab.framing import frame_psdus, split
from pqlab.transport.config import TRANSPORTS, TransportParams
from pqlab.transport.prng import scenario_hash

MESSAGES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")
# How a message travels: one datagram, IPv6 fragments, pull segments, or a block transfer.
SINGLE, IPV6, PULL, BLOCK = 0, 1, 2, 3
_MODE = {"ipv6": IPV6, "pull": PULL, "block": BLOCK}
MAX_SEGMENTS = 64  # segment bitmaps are 64-bit words


class ScenarioError(PqlabError, ValueError):
    """A scenario the simulator cannot run (bad sizes, hops, transport or loss scenario)."""

    code = "THREAD_SCENARIO_INVALID"


@dataclass(frozen=True)
class Scenario:
    """One grid point. ``sizes`` are the four CASE message sizes (bytes, from the size model)."""

    sizes: tuple[int, int, int, int]
    hops: int
    loss: str
    sleepy: bool
    transport: str
    device_compute_ms: tuple[float, float] = (0.0, 0.0)  # before Sigma2, before the status report

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


# Order of the integer and float model vectors handed to the C core (see _core.c, enum MI_*/MF_*).
INT_FIELDS = (
    "byte_us", "phy_bytes", "ack_psdu", "poll_psdu", "turnaround_us", "cca_us", "unit_us", "ack_wait_us",
    "min_be", "max_retries", "retx_delay", "retx_max_exp", "indirect_attempts", "poll_us", "gap_us",
    "reasm_us", "tick_us", "reasm_from_last", "dup_ack", "dev_interval_us", "ctrl_interval_us", "boost_us",
    "exp_cap", "mrp_tx", "standalone_us", "ctrl_compute_us", "dev_compute2_us", "dev_compute3_us",
    "max_time_us", "hops", "sleepy", "ack_on_arrival", "poll_timeout_us", "age_priority", "frame_rule",
    "ack_never", "retry_spacing", "block_handoff",
)
# Fields added after the first results were published enter the seed hash only when set (non-zero), so a
# scenario under the unchanged default model keeps its random stream and its results.
LATER_INT_FIELDS = ("frame_rule", "ack_never", "retry_spacing", "block_handoff")
RETRY_SPACINGS = ("data_poll_timeout", "poll_interval", "back_to_back")
FLOAT_FIELDS = ("margin", "base", "jitter", "p_good", "p_bad", "fraction_bad", "burst_us", "good_us")


@dataclass
class Plan:
    """Everything one handshake needs: numbers, frames per datagram, and per-message transports."""

    ints: dict[str, int]
    floats: dict[str, float]
    units: list[list[int]]           # unit id -> PSDU sizes of its frames
    mode: list[int] = field(default_factory=list)        # per message: SINGLE/IPV6/PULL/BLOCK
    first_unit: list[int] = field(default_factory=list)  # per message: its datagrams/segments
    n_units: list[int] = field(default_factory=list)
    bitmap_unit: list[int] = field(default_factory=list)
    request_unit: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)     # IPv6 reassembly refuses the message (cap)
    ack_unit: int = 0
    seed: int = 0
    payloads: list[int] = field(default_factory=list)   # unit id -> UDP payload bytes (not read by the simulators)


def _ms(value: float) -> int:
    return round(value * 1000)


def build_plan(scenario: Scenario, params: TransportParams) -> Plan:
    """Turn a scenario into the simulator's flat inputs; raises ScenarioError for unusable input."""
    if len(scenario.sizes) != 4 or any(not isinstance(s, int) or s < 1 for s in scenario.sizes):
        raise ScenarioError(f"sizes: four positive byte counts expected, got {scenario.sizes!r}")
    if not 1 <= scenario.hops <= 16:
        raise ScenarioError(f"hops: 1..16 expected, got {scenario.hops!r}")
    if scenario.transport not in TRANSPORTS:
        raise ScenarioError(f"transport: one of {TRANSPORTS}, got {scenario.transport!r}")
    if scenario.loss not in params.scenarios:
        raise ScenarioError(f"loss: unknown scenario {scenario.loss!r}; known: {sorted(params.scenarios)}")
    if any(c < 0 for c in scenario.device_compute_ms):
        raise ScenarioError("device_compute_ms: must be >= 0")
    sw = params.switches
    loss = params.scenarios[scenario.loss]
    burst_us = loss.mean_burst_ms * 1000.0
    ints = {
        "byte_us": params.byte_time_us, "phy_bytes": params.phy_header_bytes, "ack_psdu": params.ack_psdu_bytes,
        "poll_psdu": params.poll_psdu_bytes, "turnaround_us": params.turnaround_us, "cca_us": params.cca_us,
        "unit_us": params.backoff_unit_us, "ack_wait_us": params.ack_wait_us, "min_be": params.csma_min_be,
        "max_retries": params.mac_max_frame_retries, "retx_delay": int(params.retx_delay),
        "retx_max_exp": params.retx_delay_max_exponent, "indirect_attempts": params.indirect_attempts,
        "poll_us": _ms(params.poll_interval_ms),
        "gap_us": _ms(params.collision_avoidance_ms) if sw.collision_avoidance_gap else 0,
        "reasm_us": _ms(params.reassembly_timeout_ms), "tick_us": _ms(params.reassembly_tick_ms),
        "reasm_from_last": int(sw.reassembly_from_last_fragment), "dup_ack": int(sw.immediate_duplicate_ack),
        "ack_on_arrival": int(sw.piggyback_ack_on_arrival),
        "poll_timeout_us": _ms(params.data_poll_timeout_ms),
        "age_priority": int(params.channel_priority == "message_age"),
        "frame_rule": int(params.channel_priority == "frame_fifo"),
        "ack_never": int(params.ack_frame_loss == "never"),
        "retry_spacing": RETRY_SPACINGS.index(params.indirect_retry_spacing),
        "block_handoff": int(params.block_timer_start == "handoff" or params.channel_priority == "frame_fifo"),
        "dev_interval_us": _ms(params.mrp_device_interval_ms),
        "ctrl_interval_us": _ms(params.mrp_controller_interval_ms),
        "boost_us": _ms(params.mrp_device_boost_ms), "exp_cap": params.mrp_exponent_cap,
        "mrp_tx": params.mrp_transmissions, "standalone_us": _ms(params.standalone_ack_ms),
        "ctrl_compute_us": _ms(params.controller_compute_ms),
        "dev_compute2_us": _ms(scenario.device_compute_ms[0]), "dev_compute3_us": _ms(scenario.device_compute_ms[1]),
        "max_time_us": _ms(params.max_sim_time_s * 1000.0), "hops": scenario.hops, "sleepy": int(scenario.sleepy),
    }
    floats = {
        "margin": params.mrp_margin, "base": params.mrp_base, "jitter": params.mrp_jitter,
        "p_good": loss.p_good, "p_bad": loss.p_bad, "fraction_bad": loss.fraction_bad, "burst_us": burst_us,
        "good_us": burst_us * (1.0 - loss.fraction_bad) / loss.fraction_bad if loss.fraction_bad > 0 else 0.0,
    }
    multi = scenario.hops > 1
    plan = Plan(ints=ints, floats=floats, units=[])

    fr = params.framing

    def unit(payload: int) -> int:
        plan.payloads.append(payload)
        plan.units.append(frame_psdus(payload, fr, multi_hop=multi, rounding=sw.fragment_rounding,
                                      deep_mesh=sw.deep_mesh_header))
        return len(plan.units) - 1

    plan.ack_unit = unit(params.standalone_ack_bytes)
    for size in scenario.sizes:
        total = size + fr.matter_header_bytes
        mode = SINGLE if size <= fr.max_app_payload else _MODE[scenario.transport]
        first = len(plan.units)
        rejected = 0
        if mode == SINGLE:
            payloads = [total]
        elif mode == IPV6:
            if sw.ip6_udp_header_in_fragments:
                payloads = [c + fr.ip6_fragment_header_bytes for c in split(total + 8, fr.ip6_fragment_payload)]
            else:
                payloads = split(total, fr.ip6_fragment_payload)
            rejected = int(sw.ip6_reassembly_cap and total + 48 > fr.ip6_max_assembled)
        else:
            payloads = [c + params.segment_header_bytes + fr.matter_header_bytes
                        for c in split(size, params.segment_payload)]
        if len(payloads) > MAX_SEGMENTS:
            raise ScenarioError(f"sizes: {size} B needs {len(payloads)} units; at most {MAX_SEGMENTS} supported")
        for p in payloads:
            unit(p)
        plan.mode.append(mode)
        plan.first_unit.append(first)
        plan.n_units.append(len(payloads))
        plan.rejected.append(rejected)
        plan.bitmap_unit.append(unit(params.bitmap_header_bytes + math.ceil(len(payloads) / 8)))
        plan.request_unit.append(unit(params.pull_request_bytes + fr.matter_header_bytes))
    # The run's randomness derives from the study seed and everything that defines the scenario.
    hashed = {k: v for k, v in ints.items() if k not in LATER_INT_FIELDS or v}
    plan.seed = scenario_hash(json.dumps(params.seed) + scenario.key() + json.dumps(hashed, sort_keys=True)
                              + json.dumps(floats, sort_keys=True) + json.dumps(plan.units))
    return plan


def handshake_frames(sizes: tuple[int, int, int, int], params: TransportParams, *, hops: int = 1,
                     transport: str = "ipv6") -> int:
    """802.15.4 data frames one loss-free handshake puts on one link (no ACKs, no retransmissions).

    The paper's framing checks (§V: the classical handshake in 20 frames at one hop, D3 in 244) are this
    number for the CASE size model's message sizes; pull requests and bitmaps are not counted.
    """
    plan = build_plan(Scenario(sizes, hops, next(iter(params.scenarios)), False, transport), params)
    return sum(len(plan.units[u]) for hs in range(4)
               for u in range(plan.first_unit[hs], plan.first_unit[hs] + plan.n_units[hs]))
