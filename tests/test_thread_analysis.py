"""The transport headline metrics REPORT.md reads: Table I times with failures, the C5 ratios, C1's added time."""

from __future__ import annotations

import itertools

import pandas as pd

from pqlab.analysis import transport as analysis
from pqlab.transport.config import TransportParams

LOSSES = ("none", "heavy_wifi")


def _summary() -> pd.DataFrame:
    """A synthetic per-scenario summary: B and C1 fit one datagram; D3 and C5 use the three transports."""
    rows = []
    for config, hops, loss, sleepy in itertools.product(("B", "C1", "D3", "C5"), (1, 2, 3, 4), LOSSES, (False, True)):
        transports = ("datagram",) if config in ("B", "C1") else ("ipv6", "block", "pull")
        for transport in transports:
            base = {"B": 0.1, "C1": 0.2, "D3": 2.0, "C5": 0.5}[config] * hops * (2 if loss != "none" else 1)
            median = base * {"datagram": 1.0, "ipv6": 0.9 if config == "C5" else 2.0, "block": 1.0, "pull": 1.1}[
                transport]
            failed = config == "D3" and transport == "ipv6" and hops == 4 and loss != "none"
            rows.append({"config": config, "hops": hops, "loss": loss, "transport": transport, "sleepy": sleepy,
                         "runs": 10, "failures": 10 if failed else 0, "failure_rate": 1.0 if failed else 0.0,
                         "median_s": float("nan") if failed else median, "mean_spurious": 1.0,
                         "median_radio_ms": 100.0 * base, "failed_in": "1,2" if failed else ""})
    return pd.DataFrame(rows)


def test_headline_gives_table1_times_ratios_and_failures():
    params = TransportParams(configurations=("B", "C1", "D3", "C5"))
    out = analysis.headline(_summary(), params)
    assert (out["scenarios"], out["runs_per_scenario"], out["handshakes"]) == (len(_summary()), 10,
                                                                                10 * len(_summary()))
    times = out["table1_times"]
    assert set(times) == {"B", "C1", "C5", "D3"}
    assert times["B"]["1hop_none_s"] == 0.1 and times["D3"]["3hop_heavy_s"] == 2.0 * 3 * 2
    assert times["D3"]["3hop_heavy_failure_rate"] == 0.0 and times["D3"]["3hop_heavy_failed_in"] is None
    # a scenario where no handshake completes: no time, its failure rate and the messages that failed, by name
    assert out["drop_in_4hop_heavy_ipv6_s"] is None
    assert out["drop_in_4hop_heavy_ipv6_failure_rate"] == 1.0
    assert out["drop_in_4hop_heavy_ipv6_failed_in"] == "Sigma2, Sigma3"
    assert out["drop_in_4hop_heavy_block_failed_in"] is None
    # C5: IPv6 / block at every hop count under interference
    assert out["smallest_ratio_ipv6_block_heavy_hops"] == 4 and out["smallest_ipv6_faster_hops"] == 4
    assert abs(out["smallest_ratio_ipv6_block_heavy_min"] - 0.9) < 1e-12
    assert abs(out["smallest_ratio_ipv6_block_1hop_heavy"] - 0.9) < 1e-12
    # C1's added handshake time over B at one hop without interference, in ms
    assert abs(out["key_exchange_cost_1hop_none_ms"] - 100.0) < 1e-9


def test_headline_without_a_role_configuration_leaves_values_empty():
    summary = _summary()
    out = analysis.headline(summary[summary["config"] != "C1"], TransportParams())
    assert out["key_exchange_cost_1hop_none_ms"] is None and "C1" not in out["table1_times"]
