"""The Thread transport model's typed config (PQ-CASE §IV-C, Table II) and the names its grid accepts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from pqlab.case.config import TABLE1_NAMES
from pqlab.config import Name, Strict
from pqlab.framing import FramingParams

TRANSPORTS = ("ipv6", "pull", "block")
MAX_HOPS = 16  # the most hops a study may ask of the model (the C core's own limit is plan_check.MAX_HOPS)
FIGURE_ROLES = ("classical", "drop_in", "smallest", "key_exchange")
Hops = Annotated[int, Field(ge=1, le=MAX_HOPS)]


class LossScenario(Strict):
    """Time-based Gilbert–Elliott channel (PQ-CASE §IV-C): per-frame loss p_good / p_bad by state."""

    p_good: float = Field(ge=0.0, le=1.0)
    p_bad: float = Field(default=0.9, ge=0.0, le=1.0)
    fraction_bad: float = Field(default=0.0, ge=0.0, lt=1.0)
    mean_burst_ms: float = Field(default=10.0, gt=0.0, le=1e6)


def _default_scenarios() -> dict[str, LossScenario]:
    # PQ-CASE §IV-C: no interference; light Wi-Fi; heavy Wi-Fi; i.i.d. 15 %.
    return {
        "none": LossScenario(p_good=0.0),
        "light_wifi": LossScenario(p_good=0.01, fraction_bad=0.1, mean_burst_ms=10.0),
        "heavy_wifi": LossScenario(p_good=0.02, fraction_bad=0.3, mean_burst_ms=30.0),
        "iid_15": LossScenario(p_good=0.15),
    }


class TransportSwitches(Strict):
    """Where OpenThread / connectedhomeip differ from the paper's stated model (docs/thread-simulator.md).

    All off = the paper's model (the default); all on = the ``source_accurate`` variant.
    """

    fragment_rounding: bool = False       # non-final 6LoWPAN fragments carry a multiple of 8 bytes
    deep_mesh_header: bool = False        # 6-byte mesh header (hops-left 19) instead of 5 bytes
    collision_avoidance_gap: bool = False  # 8 ms silence after each frame a neighbour must forward
    reassembly_from_last_fragment: bool = False  # 2 s timer refreshed per fragment, checked on 1 s ticks
    ip6_udp_header_in_fragments: bool = False    # ⌈(s+8)/1232⌉ IPv6 fragments, 8-byte fragment header
    ip6_reassembly_cap: bool = False      # IPv6 reassembly refuses datagrams above 2000 bytes
    immediate_duplicate_ack: bool = False  # a duplicate message is acknowledged at once (standalone ACK)
    # §IV-C: "the arrival time of a piggybacked acknowledgement is estimated as the loss-free delivery time
    # of the first unit of the reply"; on: the acknowledgement arrives with the simulated first unit instead.
    piggyback_ack_on_arrival: bool = False

    @classmethod
    def source_accurate(cls) -> TransportSwitches:
        return cls(**{name: True for name in cls.model_fields})


class TransportParams(Strict):
    """PQ-CASE §IV-C / Table II transport model; defaults are the paper's stated values."""

    # 802.15.4 PHY/MAC (IEEE 802.15.4 O-QPSK; OpenThread config/mac.h)
    byte_time_us: int = Field(default=32, ge=1, le=1000)
    phy_header_bytes: int = Field(default=6, ge=0, le=64)
    ack_psdu_bytes: int = Field(default=5, ge=3, le=64)
    poll_psdu_bytes: int = Field(default=22, ge=3, le=127)
    turnaround_us: int = Field(default=192, ge=0, le=100_000)
    cca_us: int = Field(default=128, ge=0, le=100_000)
    backoff_unit_us: int = Field(default=320, ge=1, le=100_000)
    ack_wait_us: int = Field(default=864, ge=1, le=1_000_000)
    csma_min_be: int = Field(default=3, ge=0, le=8)
    mac_max_frame_retries: int = Field(default=15, ge=0, le=255)    # Table II: 15 direct retransmissions
    retx_delay: bool = True                                          # OpenThread's no-ACK retransmission backoff
    retx_delay_max_exponent: int = Field(default=5, ge=0, le=16)
    indirect_attempts: int = Field(default=4, ge=1, le=255)         # Table II: 4 per frame for SEDs
    poll_interval_ms: int = Field(default=200, ge=1, le=3_600_000)  # Table II: SED poll interval (assumed)
    data_poll_timeout_ms: int = Field(default=100, ge=1, le=3_600_000)  # OT: wait for data after an FP=1 ACK
    collision_avoidance_ms: int = Field(default=8, ge=0, le=10_000)
    # How the one shared channel is arbitrated (the paper does not say). Datagram rules: a message copy's
    # datagrams cross the path store-and-forward one after another, and the waiting datagram that reached its
    # current node first ("node_arrival") or whose message copy was handed to the transport first
    # ("message_age") gets the channel. Frame rule ("frame_fifo"): every node keeps a FIFO of frames (the
    # origin enqueues all frames of a copy at hand-off, routers each frame they receive), the next frame
    # exchange goes to a node drawn uniformly among those with a ready frame, reassembly at the destination only.
    channel_priority: Literal["node_arrival", "message_age", "frame_fifo"] = "node_arrival"
    # Whether 802.15.4 imm-ACK frames are lost like data frames ("as_data": the channel state at their start
    # decides) or never ("never"); the paper does not say.
    ack_frame_loss: Literal["as_data", "never"] = "as_data"
    # When a sleepy device's parent retries an indirect frame that was not acknowledged: at the device's next
    # poll after its data-poll timeout ("data_poll_timeout", OpenThread: the device re-polls 100 ms after an
    # announced frame did not arrive), at the next regular poll ("poll_interval"), or right after the ACK wait
    # ("back_to_back", retries inside the same interference burst). The paper says four attempts, not when.
    indirect_retry_spacing: Literal["data_poll_timeout", "poll_interval", "back_to_back"] = "data_poll_timeout"
    # When block transfer's MRP timer starts: when the copy's last segment has left the sender (the paper's
    # simulator, as documented) or when the copy is handed to the transport (MRP's rule for every other message).
    # The frame rule always uses "handoff": a copy's segments are handed over at once and leave the sender
    # interleaved with forwarded frames, so "left the sender" no longer marks the end of the burst.
    block_timer_start: Literal["last_segment_sent", "handoff"] = "last_segment_sent"
    # 6LoWPAN / IPv6 (frame and datagram sizes: ``framing``, shared with the CASE size model)
    reassembly_timeout_ms: int = Field(default=2000, ge=1, le=3_600_000)  # Table II: 2 s
    reassembly_tick_ms: int = Field(default=1000, ge=1, le=3_600_000)
    # Matter / MRP (connectedhomeip)
    mrp_device_interval_ms: int = Field(default=2000, ge=1, le=3_600_000)
    mrp_controller_interval_ms: int = Field(default=300, ge=1, le=3_600_000)
    mrp_device_boost_ms: int = Field(default=1500, ge=0, le=3_600_000)
    mrp_margin: float = Field(default=1.1, ge=1.0, le=10.0)
    mrp_base: float = Field(default=1.6, ge=1.0, le=10.0)
    mrp_jitter: float = Field(default=0.25, ge=0.0, le=10.0)
    mrp_exponent_cap: int = Field(default=4, ge=0, le=32)
    mrp_transmissions: int = Field(default=5, ge=1, le=64)
    standalone_ack_ms: int = Field(default=200, ge=0, le=3_600_000)
    controller_compute_ms: float = Field(default=5.0, ge=0.0, le=1e6)
    # control messages and segmentation (assumed sizes, bytes of UDP payload)
    standalone_ack_bytes: int = Field(default=26, ge=1, le=1232)
    pull_request_bytes: int = Field(default=30, ge=1, le=1232)
    bitmap_header_bytes: int = Field(default=26, ge=1, le=1232)
    segment_payload: int = Field(default=1024, ge=16, le=1232)
    segment_header_bytes: int = Field(default=12, ge=0, le=256)
    max_sim_time_s: float = Field(default=600.0, gt=0.0, le=1e6)
    scenarios: dict[Name, LossScenario] = Field(default_factory=_default_scenarios, min_length=1)
    switches: TransportSwitches = Field(default_factory=TransportSwitches)
    # Set from the top-level ``framing`` block and ``seed`` when params are loaded (never in the transport section).
    framing: FramingParams = Field(default_factory=FramingParams)
    seed: int = Field(default=0, ge=0, lt=2**63)
    # grid and statistics
    configurations: tuple[str, ...] = Field(default=TABLE1_NAMES, min_length=1)  # sizes from the CASE size model
    figure_configs: dict[str, str] = Field(default_factory=lambda: {
        "classical": "B", "drop_in": "D3", "smallest": "C5", "key_exchange": "C1"})  # configuration names (§V-VI)
    figure_scenarios: dict[str, str] = Field(default_factory=lambda: {
        "quiet": "none", "interference": "heavy_wifi"})  # loss scenarios of Fig. 2 and the headline numbers
    ratio_hops: tuple[Hops, ...] = Field(default=(3, 4), min_length=1)  # the paper's "at three to four hops"
    runs: int = Field(default=300, ge=1, le=1_000_000)
    hops: tuple[Hops, ...] = Field(default=(1, 2, 3, 4), min_length=1)
    # A configuration whose messages all fit has one transport: by default the grid runs it once, labelled
    # "datagram"; with this on it runs under each of the three transport labels (identical plans, identical
    # results), so the grid has the paper's count (15 x 4 x 4 x 2 x 3 x 300 = 432,000 handshakes).
    fitting_under_every_transport: bool = False
    bootstrap_resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _roles_exist(self) -> TransportParams:
        for role, name in self.figure_scenarios.items():
            if name not in self.scenarios:
                raise ValueError(f"figure_scenarios.{role}: {name!r} is not one of scenarios {sorted(self.scenarios)}")
        if set(self.figure_scenarios) != {"quiet", "interference"}:
            raise ValueError("figure_scenarios must name exactly the roles 'quiet' and 'interference'")
        return self

