"""The transport_crosscheck stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource


class Scenario(MetricsNode):
    """One scenario on one ns-3 topology: both medians (completed runs), failure rates, the ratio and its interval."""

    pqlab_median_s: float | None
    ns3_median_s: float | None
    pqlab_failure_rate: float
    ns3_failure_rate: float
    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    ks_p: float | None
    ns3_cca_drops: float | None


class Claims(MetricsNode):
    """What the report judges: loss-free transfers within the agreement band, lossy handshakes within the
    intervals, and where the two part."""

    agreement_pct: float
    transfers: int                       # loss-free transfer rows on the chain
    transfers_within: int                # ... whose ratio is within ±agreement_pct, no run failed on either side
    transfers_ns3_failing: int           # ... where some ns-3 transfer never completed (a datagram dropped)
    transfer_ratio_min: float            # over the rows with a ratio (both completed runs)
    transfer_ratio_max: float
    single_datagram_transfers: int       # transfers whose message is one datagram (no pipelining over hops)
    single_datagram_within: int
    single_datagram_ratio_min: float
    single_datagram_ratio_max: float
    ns3_extra_per_frame_us_median: float  # ns-3's time per frame beyond pqlab's per-frame formula (loss-free
                                          # transfers of MULTI_FRAME frames or more: one frame shows the backoff)
    ns3_lifs_us: float                    # ns-3's long interframe space after each acknowledged frame
    lossy_scenarios: int                 # handshake scenarios with loss (chain) where both have completed runs
    lossy_ratio_ci_covers_one: int       # ... whose ratio interval contains 1
    handshake_scenarios: int             # every handshake scenario on the chain
    handshakes_within: int               # ... whose ratio is within ±agreement_pct, no run failed on either side
    pull_within: int                     # pull-segmentation and single-datagram handshakes (one datagram in flight)
    pull_scenarios: int
    multi_datagram_within: int           # IPv6 fragmentation and block transfer (several datagrams in flight)
    multi_datagram_scenarios: int
    ns3_cca_drops_multi_datagram: float  # ns-3 frames dropped on channel-access failure per handshake (mean)
    ns3_cca_drops_single_datagram: float
    ns3_noack_drops_multi_datagram: float  # ... dropped after every MAC retry went unacknowledged
    ns3_failure_rate_multi_datagram: float
    pqlab_failure_rate_multi_datagram: float
    ns3_phy_fault_runs: int              # ns-3 runs set apart: a PHY stayed deaf (ns-3 3.37 defect; GuardedPhy)
    ns3_runs: int                        # every ns-3 run of the stage, those included


class CrosscheckMetrics(IntervalMetrics):
    runs_per_scenario: int
    transfer_runs: int
    ns3_version: str
    ns3_used: dict[str, str]
    claims: Claims
    scenarios: dict[str, Scenario]
    transfers: dict[str, Scenario]
    raw_samples: RawSource
