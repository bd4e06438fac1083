"""The typed configs of the sweeps run on the Thread model: §VII's sensitivity grids and the assumption study."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pqlab.config import Strict
from pqlab.thread.config import MAX_HOPS, Hops


class InterferenceSweep(Strict):
    """Fig. 4a/b: the interference scenario's Gilbert–Elliott channel with occupancy and mean burst varied."""

    base_scenario: str = "heavy_wifi"   # p_good and p_bad from this thread.scenarios entry
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
    """One line of Fig. 5: a configuration role (thread.figure_configs), hops and a loss scenario."""

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

    role: str = "drop_in"                  # the configuration of Fig. 4 (thread.figure_configs)
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

