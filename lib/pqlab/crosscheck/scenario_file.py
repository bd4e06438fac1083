"""The scenario file the ns-3 program reads: every number from pqlab's own plan of the scenario (``build_plan``), so
the two simulators never hold a value typed twice.

One ``key value...`` per line. MAC and PHY times are converted to ns-3's units (symbols) here; the program prints
back what ns-3 actually used (``# key value`` lines), which :func:`pqlab.crosscheck.expressible.differences`
compares with the params.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pqlab.transport.config import TransportParams
from pqlab.transport.model import Plan, Scenario, build_plan
from pqlab.transport.reference import DOWN, UP, Handshake

HANDSHAKE, TRANSFER = 0, 1
SYMBOL_US = 16  # the 2.4 GHz O-QPSK PHY's symbol time (ns-3's LrWpanPhy default page); 2 symbols per byte
MAX_BE = 5      # IEEE 802.15.4 macMaxBE default (pqlab's channel is never busy, so it has no such parameter)
MAX_CSMA_BACKOFFS = 4  # IEEE 802.15.4 macMaxCSMABackoffs default (likewise)


@dataclass(frozen=True)
class Ns3Run:
    """One invocation of the ns-3 program: a scenario, the mode, the topology and a block of run indices."""

    scenario: Scenario
    mode: int                   # HANDSHAKE, or TRANSFER (Sigma1 alone, one way, no MRP)
    topology: str               # "chain" | "shared"
    first_run: int
    runs: int


def _line(key: str, values: Iterable[float | int]) -> str:
    return key + " " + " ".join(repr(float(v)) if isinstance(v, float) else str(int(v)) for v in values)


def loss_free_us(plan: Plan, units: list[int], direction: int) -> float:
    """pqlab's loss-free delivery time of ``units`` from hand-off (mean CSMA backoff, no queueing): the paper's
    estimate of when a piggybacked acknowledgement arrives. Linear in the hand-off time for an always-on device."""
    return float(Handshake(plan, 0).loss_free_arrival(0, units, direction))


def render(run: Ns3Run, params: TransportParams, *, seed: int, start_ms: float, spacing_m: float) -> str:
    """The scenario file's text for one invocation."""
    sc = run.scenario
    if sc.sleepy:
        raise ValueError("ns-3 3.37's lr-wpan MAC blocks indirect transmission: no sleepy device in ns-3")
    plan = build_plan(sc, params)
    m, f = plan.ints, plan.floats
    if m["unit_us"] % SYMBOL_US or m["turnaround_us"] % SYMBOL_US:
        raise ValueError("backoff unit and turnaround must be whole 16-us symbols for ns-3's 2.4 GHz PHY")
    fr = params.framing
    lines = [
        _line("mode", [run.mode]), _line("hops", [sc.hops]), _line("shared", [int(run.topology == "shared")]),
        _line("seed", [seed]), _line("first_run", [run.first_run]), _line("runs", [run.runs]),
        _line("start_us", [round(start_ms * 1000)]), _line("spacing_m", [spacing_m]),
        # PHY / MAC
        _line("byte_us", [m["byte_us"]]), _line("phy_bytes", [m["phy_bytes"]]), _line("ack_psdu", [m["ack_psdu"]]),
        _line("unit_symbols", [m["unit_us"] // SYMBOL_US]), _line("turnaround_us", [m["turnaround_us"]]),
        _line("min_be", [m["min_be"]]),
        _line("max_be", [MAX_BE]), _line("max_csma_backoffs", [MAX_CSMA_BACKOFFS]),
        _line("max_retries", [m["max_retries"]]),
        # 6LoWPAN / UDP: OpenThread carries the UDP checksum (pqlab's IPHC sizes count it)
        _line("reasm_us", [m["reasm_us"]]), _line("udp_checksum", [1]),
        # loss (the scenario's Gilbert-Elliott channel; i.i.d. loss is its good state alone)
        _line("p_good", [f["p_good"]]), _line("p_bad", [f["p_bad"]]), _line("fraction_bad", [f["fraction_bad"]]),
        _line("burst_us", [f["burst_us"]]), _line("good_us", [f["good_us"]]), _line("ack_never", [m["ack_never"]]),
        # MRP and the application
        _line("dev_interval_us", [m["dev_interval_us"]]), _line("ctrl_interval_us", [m["ctrl_interval_us"]]),
        _line("boost_us", [m["boost_us"]]), _line("margin", [f["margin"]]), _line("base", [f["base"]]),
        _line("jitter", [f["jitter"]]), _line("exp_cap", [m["exp_cap"]]), _line("mrp_tx", [m["mrp_tx"]]),
        _line("standalone_us", [m["standalone_us"]]), _line("ctrl_compute_us", [m["ctrl_compute_us"]]),
        _line("dev_compute2_us", [m["dev_compute2_us"]]), _line("dev_compute3_us", [m["dev_compute3_us"]]),
        _line("max_time_us", [m["max_time_us"]]), _line("dup_ack", [m["dup_ack"]]),
        _line("ack_on_arrival", [m["ack_on_arrival"]]), _line("block_handoff", [m["block_handoff"]]),
        _line("msg_mode", plan.mode),
    ]
    for hs in range(4):
        direction = DOWN if hs % 2 == 0 else UP
        units = list(range(plan.first_unit[hs], plan.first_unit[hs] + plan.n_units[hs]))
        # IPv6 fragmentation: the whole message (Matter header included) is one UDP datagram that ns-3's IPv6
        # fragments; pqlab's datagrams of it give the piggyback estimate only
        lines.append(_line(f"msg_bytes_{hs}", [sc.sizes[hs] + fr.matter_header_bytes]))
        lines.append(_line(f"msg_units_{hs}", [plan.payloads[u] for u in units]))
        lines.append(_line(f"msg_unit_lf_us_{hs}", [loss_free_us(plan, [u], direction) for u in units]))
    directions = [DOWN if hs % 2 == 0 else UP for hs in range(4)]
    lines += [
        _line("bitmap_payload", [plan.payloads[u] for u in plan.bitmap_unit]),
        _line("bitmap_lf_us", [loss_free_us(plan, [u], 1 - d)
                               for u, d in zip(plan.bitmap_unit, directions, strict=True)]),
        _line("request_payload", [plan.payloads[u] for u in plan.request_unit]),
        _line("request_lf_us", [loss_free_us(plan, [u], 1 - d)
                                for u, d in zip(plan.request_unit, directions, strict=True)]),
        _line("ack_payload", [plan.payloads[plan.ack_unit]]),
        _line("ack_lf_us", [loss_free_us(plan, [plan.ack_unit], DOWN)]),
    ]
    return "\n".join(lines) + "\n"
