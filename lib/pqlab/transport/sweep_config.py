"""The typed configs of the sweeps run on the Thread model: §VII's sensitivity grids, the assumption study and the
cross-check against ns-3."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pqlab.config import Name, Strict
from pqlab.transport.config import FIGURE_ROLES, MAX_HOPS, TRANSPORTS, Hops


class InterferenceSweep(Strict):
    """Fig. 4a/b: the interference scenario's Gilbert–Elliott channel with occupancy and mean burst varied."""

    base_scenario: str = "heavy_wifi"   # p_good and p_bad from this transport.scenarios entry
    occupancy_pct: tuple[float, ...] = Field(default=(5.0, 10.0, 20.0, 30.0, 40.0), min_length=1)
    mean_burst_ms: tuple[float, ...] = Field(default=(5.0, 10.0, 30.0, 60.0, 100.0), min_length=1)
    hops: Hops = 3

    @model_validator(mode="after")
    def _in_range(self) -> InterferenceSweep:
        if not all(0.0 < o < 100.0 for o in self.occupancy_pct):
            raise ValueError("occupancy_pct: every value must be in (0, 100)")
        if not all(0.0 < b <= 1e6 for b in self.mean_burst_ms):
            raise ValueError("mean_burst_ms: every value must be in (0, 1e6]")
        return self


class TimerSweep(Strict):
    """Fig. 4c: the controller's advertised active interval x the device's sender boost, across hops."""

    scenario: str = "heavy_wifi"
    controller_interval_ms: tuple[int, ...] = Field(default=(300, 2000), min_length=1)
    device_boost_ms: tuple[int, ...] = Field(default=(0, 1500, 3000), min_length=1)
    hops: tuple[int, ...] = Field(default=(1, 2, 3, 4), min_length=1)

    @model_validator(mode="after")
    def _in_range(self) -> TimerSweep:
        if not all(1 <= v <= 3_600_000 for v in self.controller_interval_ms):
            raise ValueError("controller_interval_ms: every value must be in 1..3600000")
        if not all(0 <= v <= 3_600_000 for v in self.device_boost_ms):
            raise ValueError("device_boost_ms: every value must be in 0..3600000")
        if not all(1 <= h <= MAX_HOPS for h in self.hops):
            raise ValueError(f"hops: every value must be in 1..{MAX_HOPS}")
        return self


class SegmentScenario(Strict):
    """One line of Fig. 5: a configuration role (transport.figure_configs), hops and a loss scenario."""

    role: str
    hops: Hops
    loss: str


class SegmentSweep(Strict):
    """Fig. 5: pull segmentation's segment payload, relative to ``reference_payload``."""

    segment_payload: tuple[int, ...] = Field(default=(300, 450, 600, 800, 1024, 1150), min_length=1)
    reference_payload: int = Field(default=1150, ge=16, le=1232)
    scenarios: tuple[SegmentScenario, ...] = Field(default=tuple(
        SegmentScenario(role=role, hops=hops, loss=loss)
        for role in ("drop_in", "smallest") for hops, loss in ((3, "heavy_wifi"), (1, "none"))), min_length=1)

    @model_validator(mode="after")
    def _reference_is_swept(self) -> SegmentSweep:
        if not all(16 <= v <= 1232 for v in self.segment_payload):
            raise ValueError("segment_payload: every value must be in 16..1232")
        if self.reference_payload not in self.segment_payload:
            raise ValueError(f"reference_payload {self.reference_payload} must be one of segment_payload")
        return self


class ReportRanges(Strict):
    """How §VII's sentences group the cells: 'bursts up to 30 ms', '60 ms or more', '20 % or more of the time'."""

    short_burst_ms: float = Field(default=30.0, gt=0.0)
    long_burst_ms: float = Field(default=60.0, gt=0.0)
    busy_occupancy_pct: float = Field(default=20.0, gt=0.0, lt=100.0)
    small_segments: tuple[int, ...] = Field(default=(300, 600), min_length=1)   # Fig. 5's quoted sizes


class SensitivityParams(Strict):
    """PQ-CASE §VII: Fig. 4 a-c and Fig. 5 for the drop-in (and smallest) configuration, on the thread model."""

    role: str = "drop_in"                  # the configuration of Fig. 4 (transport.figure_configs)
    interference: InterferenceSweep = Field(default_factory=InterferenceSweep)
    timers: TimerSweep = Field(default_factory=TimerSweep)
    segments: SegmentSweep = Field(default_factory=SegmentSweep)
    success_threshold: float = Field(default=0.995, gt=0.0, le=1.0)   # cells below it are marked (*)
    report: ReportRanges = Field(default_factory=ReportRanges)
    runs: int = Field(ge=1, le=1_000_000)  # per cell (profile)


class AssumptionsParams(Strict):
    """The unstated-assumption study: the transport headlines under each channel rule, ACK-loss and
    indirect-retry choice the paper leaves open (docs/thread-simulator.md)."""

    channel_rules: tuple[Literal["node_arrival", "message_age", "frame_fifo"], ...] = Field(
        default=("node_arrival", "message_age", "frame_fifo"), min_length=1)
    ack_frame_loss: tuple[Literal["as_data", "never"], ...] = Field(default=("as_data", "never"), min_length=1)
    # further single changes to the thread model, each its own row (rules x ACK loss above are crossed)
    indirect_retry_spacing: tuple[Literal["data_poll_timeout", "poll_interval", "back_to_back"], ...] = (
        "poll_interval", "back_to_back")
    block_timer_start: tuple[Literal["last_segment_sent", "handoff"], ...] = ("handoff",)
    drop_in_hops: tuple[int, ...] = Field(default=(2, 3, 4), min_length=1)   # D3, always-on: ratio, spurious
    sleepy_hops: tuple[int, ...] = Field(default=(1, 2, 3, 4), min_length=1)  # every oversized configuration
    bound_hops: tuple[int, ...] = Field(default=(2, 3, 4), min_length=1)      # the slack bound
    count_tail: float = Field(default=0.05, ge=0.0, lt=1.0)  # Eq. 2 count that all but this share of runs keep
    runs: int = Field(ge=1, le=1_000_000)  # per scenario (profile)


MESSAGE_NAMES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")  # the handshake, in order


class CrosscheckParams(Strict):
    """PQ-CASE's transport model beside ns-3 (lr-wpan + sixlowpan): the same scenarios, the same `transport:` params.

    Every number of the model (MAC, 6LoWPAN, MRP, loss scenarios, sizes) comes from the `transport:` section and the
    CASE size model; this section only picks scenarios and sample sizes.
    """

    roles: tuple[Literal[FIGURE_ROLES], ...] = Field(  # type: ignore[valid-type]
        default=("classical", "smallest", "drop_in"), min_length=1)  # transport.figure_configs: B, C5, D3
    hops: tuple[Hops, ...] = Field(default=(1, 2, 3, 4), min_length=1)
    # loss-free, a fixed per-frame loss probability, and the Gilbert-Elliott channel (names of transport.scenarios)
    losses: tuple[Name, ...] = Field(default=("none", "iid_15", "light_wifi"), min_length=1)
    transports: tuple[Literal[TRANSPORTS], ...] = Field(  # type: ignore[valid-type]
        default=("ipv6", "block", "pull"), min_length=1)   # for configurations with an oversized message
    # ns-3's radio topology: "chain" (only neighbours in range, the issue's setting) and, as a diagnosis of the
    # difference, "shared" (every node hears every other: pqlab's one channel without spatial reuse)
    topologies: tuple[Literal["chain", "shared"], ...] = Field(default=("chain", "shared"), min_length=1)
    shared_losses: tuple[Name, ...] = ("none",)   # the "shared" topology runs only these loss scenarios
    runs: int = Field(default=300, ge=2, le=100_000)                # handshakes per scenario and simulator
    # loss-free single-message transfers (no MRP): these messages of each role's configuration, 1..max hops
    transfer_messages: tuple[Literal[MESSAGE_NAMES], ...] = Field(  # type: ignore[valid-type]
        default=("Sigma2", "StatusReport"), min_length=1)
    transfer_transports: tuple[Literal["ipv6", "block"], ...] = ("ipv6", "block")  # for oversized messages
    transfer_runs: int = Field(default=100, ge=2, le=100_000)
    agreement_pct: float = Field(default=10.0, gt=0.0, le=100.0)   # the claim judged on loss-free transfers
    start_ms: float = Field(default=100.0, ge=0.0, le=10_000.0)     # ns-3: the handshake starts after the stack is up
    spacing_m: float = Field(default=10.0, gt=0.0, le=1000.0)      # ns-3: node spacing along the chain
    chunk_runs: int = Field(default=50, ge=1, le=100_000)         # ns-3 runs per program invocation (one process)

    @model_validator(mode="after")
    def _distinct(self) -> CrosscheckParams:
        for name in ("roles", "hops", "losses", "transports", "topologies", "transfer_messages"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: listed twice in {list(values)}")
        if not set(self.shared_losses) <= set(self.losses):
            raise ValueError(f"shared_losses: {sorted(set(self.shared_losses) - set(self.losses))} not in losses")
        return self
