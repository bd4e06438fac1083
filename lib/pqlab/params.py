"""Load ``params/params.yaml``, apply the selected profile, and validate every field strictly."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from pqlab import bounded
from pqlab.errors import ParamsError

BackendChoice = Literal["auto", "liboqs", "openssl", "pqcrypto"]


class _Strict(BaseModel):
    """Unknown keys, silent type coercion (e.g. "10" -> 10) and non-finite numbers (.inf, .nan) are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


# --- the names studies accept, checked when params are loaded ------------------------------------------------
# Each list is the registry of the module that uses the names (tests/test_params.py checks they agree):
# pqlab.crypto backends, pqlab.case.algorithms, pqlab.case.design_tables, pqlab.thread.model.
CRYPTO_KEMS = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
CRYPTO_SIGNATURES = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "SLH-DSA-SHA2-128f", "SLH-DSA-SHA2-128s",
                     "SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-128s", "Falcon-512", "MAYO-2", "SNOVA-24-5-4", "UOV-Is-pkc")
CASE_SIGNATURES = ("ECDSA-P256", "ML-DSA-44", "ML-DSA-65", "Falcon-512", "SLH-DSA-SHA2-128s", "SLH-DSA-SHA2-128f",
                   "MAYO-2", "SNOVA-24-5-4", "UOV-Is-pkc",
                   # newer (pqlab.case.algorithms): the what-if tools and the extended design space
                   "ML-DSA-87", "FN-DSA-512", "FN-DSA-1024", "MAYO-1", "MAYO-3", "MAYO-5", "UOV-Ip", "UOV-Ip-pkc",
                   "SNOVA-25-8-3", "SNOVA-37-17-2", "SQIsign-I", "SQIsign-III", "SQIsign-V", "HAWK-512", "HAWK-1024",
                   "CROSS-RSDP-128-small", "CROSS-RSDPG-128-small", "CROSS-RSDPG-128-balanced", "CROSS-RSDPG-128-fast")
CASE_KEMS = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "HQC-1", "HQC-3", "HQC-5")
CASE_AUTH_MODES = ("sig", "kem", "kem-pdk")
CASE_CACHE_MODES = ("none", "responder", "both")
THREAD_TRANSPORTS = ("ipv6", "pull", "block")
THREAD_MAX_HOPS = 16
FIGURE_ROLES = ("classical", "drop_in", "smallest", "key_exchange")
Hops = Annotated[int, Field(ge=1, le=THREAD_MAX_HOPS)]
NAME_MAX_CHARS = 64  # configuration, scenario and baseline names: they head table rows and figure legends


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a configuration, scenario or baseline, or None: 1 to ``NAME_MAX_CHARS`` printable
    characters (no newline, tab, NUL or other control character, which would break a Markdown table's row)."""
    if not isinstance(name, str):
        return f"a name is a string, not {type(name).__name__}"
    if not name:
        return "a name is at least one character"
    if len(name) > NAME_MAX_CHARS:
        return f"a name is at most {NAME_MAX_CHARS} characters; this one has {len(name):,}"
    for position, char in enumerate(name):
        if not char.isprintable():
            return f"a name is printable characters only; {char!r} at position {position} is not"
    return None


def _valid_name(name: str) -> str:
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


Name = Annotated[str, AfterValidator(_valid_name)]


class CostsParams(_Strict):
    """AMORT-V1 §V-C cost characterisation (Table I, Fig. 2)."""

    backend: BackendChoice = "auto"
    kem: str = "ML-KEM-768"
    signers: tuple[str, ...] = Field(default=("ML-DSA-65", "SLH-DSA-SHA2-128f"), min_length=1)
    comparison_signer: str = "ML-DSA-65"
    sign_message_octets: int = Field(default=4096, ge=1, le=1 << 20)
    fsync_block_octets: int = Field(default=4096, ge=1, le=1 << 24)
    trials: int = Field(ge=1, le=1000)
    reps: int = Field(ge=1, le=10_000_000)
    reps_slow: int = Field(ge=1, le=10_000_000)
    warmup: int = Field(ge=0, le=1_000_000)
    bootstrap_resamples: int = Field(ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    # the native fast path's own per-report primitives, timed in C: per trial, this many batch means of
    # native_iterations calls each (0 batches: not measured)
    native_batches: int = Field(default=50, ge=0, le=100_000)
    native_iterations: int = Field(default=2000, ge=1, le=10_000_000)
    # Table I's symmetric rows timed in a C loop over libcrypto: per trial ``reps`` samples, each the mean of
    # c_loop_batch back-to-back calls minus the loop's own cost (pqlab.experiments.symmetric_timing)
    c_loop_batch: int = Field(default=16, ge=1, le=1 << 24)


TABLE1_NAMES = ("B", "D1", "D2", "D3", "D4", "S1", "S2", "S3", "S4", "S5", "C1", "C2", "C3", "C4", "C5")


class InputsParams(_Strict):
    """Inputs several stages read; a stage depends on the keys it uses, not on another stage's section."""

    cycles_file: str = "pqm4_cycles.yaml"  # in params/: fastest pqm4 Cortex-M4 cycle counts (source recorded)


# Matter's kMaxAppMessageLen: 1280 - 48 - 38 - 16 (MessageHeader.h, SystemConfig.h); the one definition, which the
# CASE size model (pqlab.case.configurations) and the what-if figures import.
MAX_APP_MESSAGE_OCTETS = 1178


class FramingParams(_Strict):
    """Matter / 6LoWPAN / 802.15.4 constants shared by the CASE size model and the Thread simulator.

    Defaults are the PQ-CASE paper's model (13 frames per 1232-B datagram at one hop); OpenThread's own
    mesh-local addressing compresses to 25 B and rounds non-final fragments (see ``pqlab.framing``).
    """

    max_app_payload: int = Field(default=MAX_APP_MESSAGE_OCTETS, ge=64, le=65535)
    matter_header_bytes: int = Field(default=26, ge=0, le=256)    # message header with node id 16 + payload hdr 10
    max_psdu_bytes: int = Field(default=127, ge=32, le=2047)
    mac_overhead_bytes: int = Field(default=21, ge=0, le=64)      # MAC header + aux security + MIC-32 + FCS
    iphc_bytes: int = Field(default=9, ge=2, le=64)               # IPHC + UDP NHC, both IIDs derivable
    frag1_header_bytes: int = Field(default=4, ge=0, le=16)
    fragn_header_bytes: int = Field(default=5, ge=0, le=16)
    mesh_header_bytes: int = Field(default=5, ge=0, le=16)
    deep_mesh_header_bytes: int = Field(default=6, ge=0, le=16)
    fragment_granularity: int = Field(default=8, ge=1, le=64)
    ip6_fragment_payload: int = Field(default=1232, ge=8, le=65535)  # 1280 - 40 - 8: UDP payload per datagram
    ip6_fragment_header_bytes: int = Field(default=8, ge=0, le=64)
    ip6_max_assembled: int = Field(default=2000, ge=1280, le=1 << 20)
    openthread_iphc_bytes: int = Field(default=25, ge=2, le=64)   # ML-EID to ML-EID, shown beside the default


class CaseSizesParams(_Strict):
    """PQ-CASE §IV-A/§V: the byte-exact size model (Table I payload columns, Fig. 1, resumption)."""

    configurations: tuple[str, ...] = Field(default=TABLE1_NAMES, min_length=1)
    resumption_key_exchanges: tuple[str, ...] = Field(
        default=("P-256", "ML-KEM-512", "ML-KEM-768", "P-256+ML-KEM-512", "P-256+ML-KEM-768"), min_length=1)
    real_material: tuple[str, ...] = ()  # configurations rebuilt with real keys/signatures to confirm the sizes


class DesignSpaceParams(_Strict):
    """PQ-CASE §IV-B, §VIII: the design space (Fig. 6), device computation, the fit and Pareto results."""

    key_exchanges: tuple[str, ...] = Field(default=("ML-KEM-512", "ML-KEM-768", "P-256+ML-KEM-768"), min_length=1)
    noc: tuple[str, ...] = Field(
        default=("ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4"), min_length=1)
    icac: tuple[str | None, ...] = Field(
        default=(None, "ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4"), min_length=1)
    rcac: tuple[str, ...] = Field(
        default=("ECDSA-P256", "ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4",
                 "UOV-Is-pkc"), min_length=1)
    modes: tuple[str, ...] = Field(
        default=("sig/none", "sig/responder", "sig/both", "kem/none", "kem-pdk/none", "kem-pdk/both"), min_length=1)
    static_kem: str = "ML-KEM-768"
    configurations: tuple[str, ...] = Field(default=TABLE1_NAMES, min_length=1)


class ExtendedDesignSpaceParams(_Strict):
    """Beyond the paper: ``design_space``'s members with these newer algorithms added to each dimension (HQC, NIST's
    2025 KEM; round-2 additional signatures). The paper's 3,780 points stay a subset, unchanged."""

    add_key_exchanges: tuple[str, ...] = ("HQC-1",)
    add_noc: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small")
    add_icac: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small")
    add_rcac: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small",
                                 "UOV-Ip-pkc")


class LossScenario(_Strict):
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


class ThreadSwitches(_Strict):
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
    def source_accurate(cls) -> ThreadSwitches:
        return cls(**{name: True for name in cls.model_fields})


class ThreadParams(_Strict):
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
    switches: ThreadSwitches = Field(default_factory=ThreadSwitches)
    # Set from the top-level ``framing`` block and ``seed`` when params are loaded (never in the thread section).
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
    def _roles_exist(self) -> ThreadParams:
        for role, name in self.figure_scenarios.items():
            if name not in self.scenarios:
                raise ValueError(f"figure_scenarios.{role}: {name!r} is not one of scenarios {sorted(self.scenarios)}")
        if set(self.figure_scenarios) != {"quiet", "interference"}:
            raise ValueError("figure_scenarios must name exactly the roles 'quiet' and 'interference'")
        return self


class InterferenceSweep(_Strict):
    """Fig. 4a/b: the interference scenario's Gilbert–Elliott channel with occupancy and mean burst varied."""

    base_scenario: str = "heavy_wifi"   # p_good and p_bad from this thread.scenarios entry
    occupancy_pct: tuple[float, ...] = Field(default=(5.0, 10.0, 20.0, 30.0, 40.0), min_length=1)
    mean_burst_ms: tuple[float, ...] = Field(default=(5.0, 10.0, 30.0, 60.0, 100.0), min_length=1)
    hops: int = Field(default=3, ge=1, le=16)

    @model_validator(mode="after")
    def _in_range(self) -> InterferenceSweep:
        if not all(0.0 < o < 100.0 for o in self.occupancy_pct):
            raise ValueError("occupancy_pct: every value must be in (0, 100)")
        if not all(0.0 < b <= 1e6 for b in self.mean_burst_ms):
            raise ValueError("mean_burst_ms: every value must be in (0, 1e6]")
        return self


class TimerSweep(_Strict):
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
        if not all(1 <= h <= 16 for h in self.hops):
            raise ValueError("hops: every value must be in 1..16")
        return self


class SegmentScenario(_Strict):
    """One line of Fig. 5: a configuration role (thread.figure_configs), hops and a loss scenario."""

    role: str
    hops: int = Field(ge=1, le=16)
    loss: str


class SegmentSweep(_Strict):
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


class ReportRanges(_Strict):
    """How §VII's sentences group the cells: 'bursts up to 30 ms', '60 ms or more', '20 % or more of the time'."""

    short_burst_ms: float = Field(default=30.0, gt=0.0)
    long_burst_ms: float = Field(default=60.0, gt=0.0)
    busy_occupancy_pct: float = Field(default=20.0, gt=0.0, lt=100.0)
    small_segments: tuple[int, ...] = Field(default=(300, 600), min_length=1)   # Fig. 5's quoted sizes


class SensitivityParams(_Strict):
    """PQ-CASE §VII: Fig. 4 a-c and Fig. 5 for the drop-in (and smallest) configuration, on the thread model."""

    role: str = "drop_in"                  # the configuration of Fig. 4 (thread.figure_configs)
    interference: InterferenceSweep = Field(default_factory=InterferenceSweep)
    timers: TimerSweep = Field(default_factory=TimerSweep)
    segments: SegmentSweep = Field(default_factory=SegmentSweep)
    success_threshold: float = Field(default=0.995, gt=0.0, le=1.0)   # cells below it are marked (*)
    report: ReportRanges = Field(default_factory=ReportRanges)
    runs: int = Field(ge=1, le=1_000_000)  # per cell (profile)


class AssumptionsParams(_Strict):
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


class AttackMatrixParams(_Strict):
    """AMORT-V1 Appendix A, Table VI: the attack matrix over the reference model."""

    n_devices: int = Field(default=4, ge=2, le=64)
    checkpoint_signer: Literal["ML-DSA-65"] = "ML-DSA-65"
    alternative_signer: Literal["SLH-DSA-SHA2-128f"] = "SLH-DSA-SHA2-128f"
    stream_records: int = Field(default=640, ge=1, le=1_000_000)  # P5: honest stream length
    stream_k: int = Field(default=64, ge=1, le=1_000_000)  # P5: checkpoint interval
    repeats: int = Field(default=1, ge=1, le=100)  # independent runs, each with its own seed and fresh keys
    # What the hardened variant costs (pqlab.amort.hardening_cost), both variants alternating in each trial:
    cost_trials: int = Field(default=5, ge=1, le=1000)
    cost_identities: int = Field(default=1000, ge=1, le=100_000)  # reports per checkpoint (one per identity)
    cost_rounds: int = Field(default=3, ge=1, le=1000)  # checkpoints per trial
    cost_k: int = Field(default=64, ge=2, le=4096)  # reports per auditor interval (half of them the audited device's)
    cost_epochs: int = Field(default=5, ge=1, le=1000)  # epoch exchanges per trial
    # §IV-B: the deployment over which a truncated tag's online forgery probability is stated (10 000 controllers
    # reporting at 1 Hz for twenty years, one forgery attempt per verified tag)
    forgery_controllers: int = Field(default=10_000, ge=1, le=10**9)
    forgery_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)
    forgery_years: float = Field(default=20.0, gt=0.0, le=1000.0)


class RecoverySizingParams(_Strict):
    """§V-H sizing: the NV-write budget, report rate and service life that fix the minimum reservation window."""

    nv_write_budget: int = Field(default=500_000, ge=1, le=10**12)  # "an assumed NV-write budget of 5 × 10^5"
    report_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)
    service_years: float = Field(default=10.0, gt=0.0, le=100.0)
    days_per_year: float = Field(default=365.0, ge=365.0, le=366.0)


class RecoveryParams(_Strict):
    """AMORT-V1 §IV-E, §V-H: restart and rollback-safe recovery with a real TPM 2.0 (Table IV, RQ3)."""

    tpm: str = Field(default="swtpm", pattern=r"^(swtpm|device:/\S+)$")  # swtpm | device:/dev/tpmrm0
    nv_index: int = Field(default=0x01800100, ge=0x01000000, le=0x01FFFFFF)  # owner-range NV counter index
    window: int = Field(default=64, ge=2, le=1 << 20)  # R: sequence numbers per reservation
    k: int = Field(default=64, ge=1, le=1 << 20)  # checkpoint interval of the restart experiment
    rollback_depth: int = Field(default=2, ge=1, le=64)  # the stale state is this many reservations behind
    interrupted_epochs: int = Field(default=2, ge=1, le=20)  # SIGKILLed epochs per restart trial, then a clean one
    restart_max_reports: int = Field(default=256, ge=1, le=1 << 20)  # kill point drawn (seeded) from 1..this
    clean_checkpoints: int = Field(default=2, ge=1, le=1000)  # the clean epoch sends this many × k reports
    max_restarts: int = Field(default=3, ge=1, le=1000)  # controller: ERR_RESTART_RATE beyond this many opens
    restart_window_ms: int = Field(default=60_000, ge=1, le=10**9)
    checkpoint_signer: Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"] = "ML-DSA-65"
    sizing: RecoverySizingParams = Field(default_factory=RecoverySizingParams)
    trials: int = Field(default=1, ge=1, le=100_000)  # per Table IV cell (arm × restart/rollback)
    restart_trials: int = Field(default=1, ge=1, le=100_000)
    crash_trials: int = Field(default=1, ge=1, le=100_000)  # per crash-injection point
    reservation_samples: int = Field(default=10, ge=1, le=1_000_000)
class CycleConfiguration(_Strict):
    """One control-cycle configuration: evidence tags per report, how often, and a co-located signer."""

    label: str = Field(min_length=1)
    tags: Literal[0, 1, 2] = 0          # 1 = evidence tag; 2 = + disclosure tag and chain step
    every_cycle: bool = False           # False = at ``evidence_rate_hz``
    background_signer: str | None = None  # signs continuously in a process pinned to the same core


def _default_cycle_configurations() -> dict[str, CycleConfiguration]:
    return {
        "baseline": CycleConfiguration(label="baseline"),
        "tag1_1hz": CycleConfiguration(label="1 tag @ 1 Hz", tags=1),
        "tag2_1hz": CycleConfiguration(label="2 tags + chain @ 1 Hz", tags=2),
        "tag1_every": CycleConfiguration(label="1 tag every cycle", tags=1, every_cycle=True),
        "tag2_every": CycleConfiguration(label="2 tags + chain every cycle", tags=2, every_cycle=True),
        "bg_ml_dsa": CycleConfiguration(label="bg ML-DSA-65, same core", background_signer="ML-DSA-65"),
        "bg_slh_dsa": CycleConfiguration(label="bg SLH-DSA-SHA2-128f, same core",
                                         background_signer="SLH-DSA-SHA2-128f"),
    }


class ControlCycleParams(_Strict):
    """AMORT-V1 §V-G (Fig. 6): scan response time on one pinned core, from scheduled release to completion."""

    period_us: int = Field(default=10_000, ge=100, le=10_000_000)
    deadline_us: int | None = Field(default=None, ge=1, le=10_000_000)  # None: the period (implicit deadline)
    cpu: int | None = Field(default=None, ge=0, le=4095)  # None: the highest-numbered CPU this process may use
    realtime: bool = True                 # ask for SCHED_FIFO (what was obtained is recorded)
    fifo_priority: int = Field(default=80, ge=1, le=99)
    workload_blocks: int = Field(default=8, ge=1, le=1_000_000)  # synthetic scan: PID loops + interlock rungs
    evidence_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)
    tag_len: Literal[8, 12, 16] = 16
    signer_backend: BackendChoice = "auto"
    sign_message_octets: int = Field(default=4096, ge=1, le=1 << 20)
    configurations: dict[Name, CycleConfiguration] = Field(default_factory=_default_cycle_configurations,
                                                          min_length=1)
    cycles: int = Field(default=200, ge=10, le=10_000_000)
    warmup_cycles: int = Field(default=20, ge=0, le=1_000_000)


class ImageTreeParams(_Strict):
    """AMORT-V1 §V-I: the generated image's shape (default: the paper's OpenPLC v3 tree, 6,239 files, 355 MB)."""

    files: int = Field(default=6239, ge=1, le=10_000_000)
    total_bytes: int = Field(default=355_000_000, ge=0, le=1 << 40)
    size_sigma: float = Field(default=2.0, ge=0.0, le=10.0)  # lognormal shape; μ follows from count and total
    directories: int = Field(default=400, ge=1, le=1_000_000)


class FullImageParams(_Strict):
    """AMORT-V1 §V-I (Table V): warm- and cold-cache full-image measurement against one ML-DSA-65 signature."""

    image_dir: str | None = None          # None: data/raw/image_tree (stage image_tree); else a directory to measure
    scratch_tree: ImageTreeParams | None = None  # set: measure a tree of this shape generated in a scratch folder
    repetitions: int = Field(default=5, ge=1, le=1000)
    chunk_octets: int = Field(default=1 << 20, ge=4096, le=1 << 30)
    compare_copy: bool = True             # also measure a copy of the tree; its digest must be equal
    reference_operation: str = "sign_ML-DSA-65"   # costs_metrics.json table1.<op>.median_us


class AmortParams(_Strict):
    """AMORT-V1 implementation switches: which controller path runs the per-report work (pqlab.amort.fastpath),
    the wire format and the protocol variant (pqlab.amort.profile, docs/protocol.md).

    ``native`` (C + libcrypto) falls back to ``reference`` only through ``resolve_controller_path``, which
    returns the path actually used and the reason; studies record both. ``wire_format``: ``implied`` (the encoding
    the paper's byte counts imply: 99-octet reports, 56 octets per identity) or ``explicit`` (tag length octets and
    an epoch per span). ``variant``: ``paper`` or ``hardened`` (issue 27's N03-N05 closed). The scaling stage
    measures Table III in the chosen format and variant; attack_matrix runs both variants in the chosen format;
    the other AMORT-V1 stages measure the paper variant in the default format."""

    controller_path: Literal["reference", "native"] = "native"
    wire_format: Literal["implied", "explicit"] = "implied"
    variant: Literal["paper", "hardened"] = "paper"


def _powers_of_two(low: int, high: int) -> tuple[int, ...]:
    return tuple(1 << e for e in range(low, high + 1))


def _strictly_increasing(values: tuple[int, ...], field: str) -> None:
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"{field} must be strictly increasing, got {list(values)}")


class ScalingParams(_Strict):
    """AMORT-V1 §V-E/§V-H: controller scaling (Table III), isolation and re-keying, partition replay."""

    # Table III: one report per identity per checkpoint (batch = identity count), ML-DSA-65 checkpoints
    identities: tuple[int, ...] = Field(default=(10, 100, 1000, 4000, 10_000, 100_000), min_length=1)
    checkpoint_signer: Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"] = "ML-DSA-65"
    backend: BackendChoice = "auto"
    tag_len: Literal[8, 12, 16] = 16
    disclosure_tag: bool = False          # Table III's reports carry the evidence tag only (paper: ~99 B/report)
    trials: int = Field(default=5, ge=1, le=100)            # one fresh process (fresh keys, fresh fleet) per trial
    rounds: int = Field(default=3, ge=1, le=10_000)          # timed checkpoints per trial, at least ...
    min_reports: int = Field(default=2000, ge=1, le=10_000_000)  # ... and at least this many timed reports
    warmup_rounds: int = Field(default=1, ge=0, le=100)
    verify_reps: int = Field(default=20, ge=1, le=10_000)   # ML-DSA verifications of the last checkpoint
    size_budget_octets: int = Field(default=1_000_000, ge=4096, le=1 << 40)
    # §V-H isolation and re-keying
    isolation_fleets: tuple[int, ...] = Field(default=(100, 1000, 10_000), min_length=1)
    rekey_limit: int | None = Field(default=None, ge=1, le=10_000_000)  # identities re-keyed per fleet; None: all
    # §V-H partition replay
    replay_backlogs: tuple[int, ...] = Field(default=_powers_of_two(6, 12), min_length=1)
    replay_fleet: int = Field(default=1000, ge=1, le=1_000_000)   # identities registered beside the partitioned one
    replay_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)    # the partitioned device's report rate
    replay_window_s: float = Field(default=3600.0, gt=0.0, le=1e7)  # "a one-hour backlog"
    replay_trials: int = Field(default=5, ge=1, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> ScalingParams:
        for name in ("identities", "isolation_fleets", "replay_backlogs"):
            _strictly_increasing(getattr(self, name), name)
            if min(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be positive")
        if min(self.isolation_fleets) < 2:
            raise ValueError("isolation_fleets: a fleet needs two identities to show isolation")
        return self


class DeviceOriginParams(_Strict):
    """AMORT-V1 §V-F, Fig. 5: cold-auditor cost per report by audit level, one vs two tags, prover extra work."""

    k_values: tuple[int, ...] = Field(default=_powers_of_two(6, 12), min_length=1)  # checkpoint interval k
    checkpoint_signer: Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"] = "ML-DSA-65"
    tag_len: Literal[8, 12, 16] = 16
    trials: int = Field(default=5, ge=1, le=100)     # fresh keys, controller, device and auditor per trial
    reps: int = Field(default=3, ge=1, le=1000)      # timed samples per trial and k
    # each sample: the median of ceil(pass_reports / k) passes over the k reports (small k would be one short loop)
    pass_reports: int = Field(default=4096, ge=1, le=1_000_000)
    # one-tag vs two-tag controller cost, alternated within each trial
    controller_identities: int = Field(default=10_000, ge=1, le=1_000_000)
    controller_trials: int = Field(default=5, ge=1, le=100)
    controller_rounds: int = Field(default=2, ge=1, le=1000)   # checkpoints per configuration per trial
    # the prover's extra work per report (second tag + chain step), on the device path
    prover_reports: int = Field(default=2000, ge=10, le=10_000_000)
    prover_trials: int = Field(default=5, ge=1, le=100)
    report_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)  # one device's reports per second (disclosure delay)

    @model_validator(mode="after")
    def _ordered(self) -> DeviceOriginParams:
        _strictly_increasing(self.k_values, "k_values")
        if min(self.k_values) < 2:
            raise ValueError("k_values must be at least 2")
        return self  # an "after" validator that returns nothing makes the section None


CheckpointSigner = Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"]  # the two checkpoint signatures of AMORT-V1


class AmortBaseline(_Strict):
    """One baseline of Table II / Fig. 3: a checkpoint signer with or without a durable evidence log."""

    label: str = Field(min_length=1)
    signer: CheckpointSigner
    durable_log: bool


class AmortModelInputs(_Strict):
    """Which rows of the cost study (``data/derived/costs_stats.parquet``, column ``op_id``) feed Eq. 1 as published.

    ``mac`` and ``leaf`` are Table I's rows (timed in C when the C loop is built), ``fsync`` its 4 KiB
    write+fsync; the signature row is ``sign_<signer>`` on the backend the sweep signs with. Eq. 1 with the path's
    own terms measures its per-report, per-checkpoint and fsync terms on the path itself (the stage's probes).
    ``native_mac`` and ``native_leaf`` name the C fast path's own primitives (keyed-context HMAC, leaf + one
    interior hash), which ``pqlab whatif amort`` takes as the per-report terms on the native path."""

    mac: str = "hmac_sha256"
    leaf: str = "merkle_leaf_interior"
    native_mac: str = "hmac_sha256_native"
    native_leaf: str = "merkle_leaf_interior_native"
    fsync: str = "write_fsync"


def _default_baselines() -> dict[str, AmortBaseline]:
    return {
        "mldsa_nolog": AmortBaseline(label="ML-DSA-65, no durable log", signer="ML-DSA-65", durable_log=False),
        "mldsa_log": AmortBaseline(label="ML-DSA-65, durable log", signer="ML-DSA-65", durable_log=True),
        "slhdsa_log": AmortBaseline(label="SLH-DSA-SHA2-128f, durable log", signer="SLH-DSA-SHA2-128f",
                                    durable_log=True),
    }


class AmortisationParams(_Strict):
    """AMORT-V1 §V-D: Eq. 1, the checkpoint-interval sweep (Table II, Fig. 3), omission and equivocation trials,
    the cost-detection trade-off (Fig. 4) and where the finding moves with signing backend and storage."""

    baselines: dict[Name, AmortBaseline] = Field(default_factory=_default_baselines, min_length=1)
    backend: BackendChoice = "auto"   # signing backend of the sweep (and of the cost-study row Eq. 1 reads)
    model_inputs: AmortModelInputs = Field(default_factory=AmortModelInputs)
    intervals: tuple[int, ...] = Field(default=tuple(2 ** i for i in range(13)), min_length=2)
    devices: int = Field(default=4, ge=2, le=1024)        # reporting devices, round-robin
    disclosure_tag: bool = True                            # reports carry both tags (117 octets)
    warmup_reports: int = Field(default=16, ge=0, le=1_000_000)
    trials: int = Field(default=3, ge=1, le=1000)          # sweep trials per point (paper: five)
    min_reports: int = Field(default=128, ge=1, le=10_000_000)     # per point over its trials: at least this many
    min_checkpoints: int = Field(default=4, ge=1, le=1_000_000)   # reports, and in each trial this many checkpoints
    # adaptive sizing: each point's amortised mean to +-target_half_width_pct (95 % CI) within sweep_budget_s of
    # wall time (probes included); points on the backends beside the main one (k first and last) to +-beside_...
    target_half_width_pct: float = Field(default=3.0, gt=0.0, le=100.0)
    beside_half_width_pct: float = Field(default=10.0, gt=0.0, le=100.0)
    sweep_budget_s: float = Field(default=100.0, gt=0.0, le=1e6)
    max_checkpoints: int = Field(default=50_000, ge=1, le=10_000_000)  # per point and trial
    # rounds per trial: every point and probe runs a share of its work in each, so all sample the same moments
    sweep_rounds: int = Field(default=8, ge=1, le=1000)
    # Eq. 1's terms on the path itself, every trial: checkpoints at the smallest and the largest k (nothing signed
    # or written), appends + fsyncs of every real checkpoint size, and checkpoint signatures
    path_probe_small: int = Field(default=200, ge=2, le=1_000_000)
    path_probe_large: int = Field(default=4, ge=2, le=100_000)
    fsync_probe_reps: int = Field(default=50, ge=2, le=1_000_000)
    sign_probe_reps: int = Field(default=50, ge=2, le=1_000_000)   # per signer: the first trial's pilot, then
    #                                                                at least this many, as many as the spread needs
    omission_trials: int = Field(default=25, ge=1, le=100_000)    # per interval and strategy (paper: 200)
    omission_strategies: tuple[Literal["declared", "trimmed"], ...] = Field(default=("declared", "trimmed"),
                                                                           min_length=1)
    equivocation_trials: int = Field(default=25, ge=1, le=100_000)  # paper: 200
    equivocation_k: int = Field(default=64, ge=2, le=1_000_000)
    rates: tuple[float, ...] = Field(default=(1.0, 100.0, 1000.0), min_length=1)  # Fig. 4 fleets, reports/s
    # Storage targets for the durable log: name -> folder (relative to the project root, or absolute).
    storage: dict[Name, str] = Field(default_factory=lambda: {"data disk": "data/raw", "tmpfs": "/dev/shm"},
                                    min_length=1)
    log_storage: str = "data disk"    # the target the main sweep writes its log to
    sensitivity_intervals: tuple[int, ...] = Field(default=(1, 16, 256, 4096), min_length=1)
    sensitivity_trials: int = Field(default=1, ge=1, le=1000)
    sensitivity_min_reports: int = Field(default=64, ge=1, le=10_000_000)
    sensitivity_min_checkpoints: int = Field(default=2, ge=1, le=1_000_000)
    probe_reps: int = Field(default=30, ge=1, le=1_000_000)
    probe_message_octets: int = Field(default=4096, ge=1, le=1 << 20)
    probe_block_octets: int = Field(default=4096, ge=1, le=1 << 24)
    bootstrap_resamples: int = Field(default=2000, ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _consistent(self) -> AmortisationParams:
        for name in ("intervals", "sensitivity_intervals"):
            values = getattr(self, name)
            if any(isinstance(v, bool) or v < 1 or v > 1 << 24 for v in values):
                raise ValueError(f"{name}: every interval must be an integer in [1, 2^24] (got {list(values)})")
            _strictly_increasing(values, name)
        if any(r <= 0 or r != r or r == float("inf") for r in self.rates):
            raise ValueError(f"rates: every report rate must be a finite number > 0 (got {list(self.rates)})")
        if len(set(self.omission_strategies)) != len(self.omission_strategies):
            raise ValueError("omission_strategies: each strategy at most once")
        if self.log_storage not in self.storage:
            raise ValueError(f"log_storage: {self.log_storage!r} is not one of storage {sorted(self.storage)}")
        if any(not str(folder).strip() for folder in self.storage.values()):
            raise ValueError("storage: every target needs a folder")
        return self


class StudyParams(_Strict):
    """The parameters one run sees: each stage section with the selected profile's values merged in."""

    profile: str
    seed: int = Field(ge=0, lt=2**63)
    profiles: tuple[str, ...] = ("smoke", "quick", "paper")
    # papermill's --execution-timeout for every notebook stage: the longest one cell may run (dvc.yaml)
    execution_timeout_s: int = Field(default=7200, ge=10, le=7 * 24 * 3600)  # in params.yaml for dvc.yaml
    inputs: InputsParams = Field(default_factory=InputsParams)
    framing: FramingParams = Field(default_factory=FramingParams)
    costs: CostsParams
    attack_matrix: AttackMatrixParams = Field(default_factory=AttackMatrixParams)
    case_sizes: CaseSizesParams = Field(default_factory=CaseSizesParams)
    design_space: DesignSpaceParams = Field(default_factory=DesignSpaceParams)
    # Kept out of model_dump(): every stage records model_dump() as its provenance, and a section added beside
    # the paper's must not change the paper stages' bytes; the extended stage records this section itself.
    extended_design_space: ExtendedDesignSpaceParams = Field(default_factory=ExtendedDesignSpaceParams, exclude=True)
    thread: ThreadParams = Field(default_factory=ThreadParams)
    recovery: RecoveryParams = Field(default_factory=RecoveryParams)
    control_cycle: ControlCycleParams = Field(default_factory=ControlCycleParams)
    image_tree: ImageTreeParams = ImageTreeParams()
    full_image: FullImageParams = FullImageParams()
    amort: AmortParams = Field(default_factory=AmortParams)
    scaling: ScalingParams = Field(default_factory=ScalingParams)
    device_origin: DeviceOriginParams = Field(default_factory=DeviceOriginParams)
    amortisation: AmortisationParams = Field(default_factory=AmortisationParams)
    sensitivity: SensitivityParams = Field(default_factory=lambda: SensitivityParams(runs=200))
    assumptions: AssumptionsParams = Field(default_factory=lambda: AssumptionsParams(runs=300))

    @model_validator(mode="after")
    def _sweeps_name_known_scenarios_and_roles(self) -> StudyParams:
        sens, thread = self.sensitivity, self.thread
        scenarios, roles = set(thread.scenarios), set(thread.figure_configs)
        named = [("interference.base_scenario", sens.interference.base_scenario), ("timers.scenario",
                 sens.timers.scenario)] + [(f"segments.scenarios.{i}.loss", sc.loss)
                                          for i, sc in enumerate(sens.segments.scenarios)]
        for where, name in named:
            if name not in scenarios:
                raise ValueError(f"sensitivity.{where}: {name!r} is not one of thread.scenarios {sorted(scenarios)}")
        for where, role in [("role", sens.role)] + [(f"segments.scenarios.{i}.role", sc.role)
                                                    for i, sc in enumerate(sens.segments.scenarios)]:
            if role not in roles:
                raise ValueError(f"sensitivity.{where}: {role!r} is not a role of thread.figure_configs "
                                 f"{sorted(roles)}")
        return self


# Sections whose values may differ by profile (sample sizes); each holds its own ``profiles:`` block.
# Values that several stages read live in ``inputs`` / ``framing`` and are copied where a model needs them.
_SHARED = {"profile", "seed", "profiles", "execution_timeout_s", "inputs", "framing"}
_INJECTED = {"thread": ("framing", "seed")}


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _yaml_lists_to_tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _yaml_lists_to_tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_yaml_lists_to_tuples(v) for v in value)
    return value


def _has_path(mapping: Any, path: tuple[Any, ...]) -> bool:
    for part in path:
        if not isinstance(mapping, dict) or part not in mapping:
            return False
        mapping = mapping[part]
    return True


_Model = TypeVar("_Model", bound=BaseModel)


def read_table(model: type[_Model], path: str | Path, what: str) -> _Model:
    """A YAML input table (cycle counts, implementations) validated as ``model``: its first problem is one ParamsError
    naming the file and the entry."""
    try:
        return model.model_validate(read_yaml(path, what))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ParamsError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}", field=str(path)) from None


def read_yaml(path: str | Path, what: str = "parameters file", *, max_bytes: int = bounded.MAX_DOCUMENT_BYTES) -> Any:
    """Read any YAML input of pqlab (params, cycle tables, configurations, the paper reference): UTF-8, no
    duplicate keys, bounded size, alias expansion, integer length and nesting (:mod:`pqlab.bounded`); anything
    unreadable or over a bound is one ParamsError naming the file."""
    return bounded.load_yaml(path, what, max_bytes=max_bytes)


def load_raw(path: str | Path) -> dict[str, Any]:
    """Read a params YAML file into a mapping, with a typed error for anything unreadable."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ParamsError("top level must be a mapping", field=str(path))
    return data


def _for_profile(data: dict[str, Any], chosen: str, names: tuple[str, ...], source: str) -> tuple[dict, dict]:
    """The document with every section's ``profiles[chosen]`` merged in, and the overrides that were applied."""
    merged: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SHARED or not isinstance(value, dict):
            merged[key] = value
            continue
        section = dict(value)
        overrides = section.pop("profiles", {})
        if not isinstance(overrides, dict):
            raise ParamsError("must map profile names to settings", field=f"{source}: {key}.profiles")
        unknown = set(overrides) - set(names)
        if unknown:
            raise ParamsError(f"unknown profile(s) {sorted(unknown)}; profiles: {list(names)}",
                              field=f"{source}: {key}.profiles")
        for name, body in overrides.items():
            if not isinstance(body, dict):
                raise ParamsError("must be a mapping", field=f"{source}: {key}.profiles.{name}")
        chosen_overrides = overrides.get(chosen, {})
        merged[key] = _deep_merge(section, chosen_overrides)
        applied[key] = chosen_overrides
    for section, fields in _INJECTED.items():
        body = merged.get(section)
        if isinstance(body, dict):
            for name in fields:
                if name in body:
                    raise ParamsError(f"set at the top level, not in {section}", field=f"{source}: {section}.{name}")
            merged[section] = {**body, **{name: data[name] for name in fields if name in data}}
    return merged, applied


def _key_exchange_problem(name: Any) -> str | None:
    parts = name.split("+") if isinstance(name, str) else []
    if not 1 <= len(parts) <= 2 or len(set(parts)) != len(parts) or \
            any(part != "P-256" and part not in CASE_KEMS for part in parts):
        return (f"{name!r} is not a key exchange: P-256, one of {', '.join(CASE_KEMS)}, or a hybrid of two such as "
                "P-256+ML-KEM-768")
    return None


def _one_of(known: tuple[Any, ...], what: str):
    def check(value: Any) -> str | None:
        return None if value in known else f"{value!r} is not {what}; known: {', '.join(map(str, known))}"
    return check


def _mode_problem(text: Any) -> str | None:
    auth, _, cached = text.partition("/") if isinstance(text, str) else ("", "", "")
    if auth in CASE_AUTH_MODES and cached in CASE_CACHE_MODES:
        return None
    return f"{text!r} is not auth/cached with auth in {CASE_AUTH_MODES} and cached in {CASE_CACHE_MODES}"


# (section, field) -> a check of one name; a tuple field is checked member by member.
_NAME_CHECKS = {
    ("costs", "kem"): _one_of(CRYPTO_KEMS, "a KEM of any pqlab backend"),
    ("costs", "signers"): _one_of(CRYPTO_SIGNATURES, "a signature algorithm of any pqlab backend"),
    ("costs", "comparison_signer"): _one_of(CRYPTO_SIGNATURES, "a signature algorithm of any pqlab backend"),
    ("case_sizes", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
    ("case_sizes", "resumption_key_exchanges"): _key_exchange_problem,
    ("case_sizes", "real_material"): _one_of(TABLE1_NAMES, "a Table I configuration"),
    ("design_space", "key_exchanges"): _key_exchange_problem,
    ("design_space", "noc"): _one_of(CASE_SIGNATURES, "a CASE signature algorithm"),
    ("design_space", "icac"): _one_of((None, *CASE_SIGNATURES), "null or a CASE signature algorithm"),
    ("design_space", "rcac"): _one_of(CASE_SIGNATURES, "a CASE signature algorithm"),
    ("design_space", "modes"): _mode_problem,
    ("design_space", "static_kem"): _one_of(CASE_KEMS, "a CASE KEM"),
    ("design_space", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
    ("extended_design_space", "add_key_exchanges"): _key_exchange_problem,
    ("extended_design_space", "add_noc"): _one_of(CASE_SIGNATURES, "a CASE signature algorithm"),
    ("extended_design_space", "add_icac"): _one_of(CASE_SIGNATURES, "a CASE signature algorithm"),
    ("extended_design_space", "add_rcac"): _one_of(CASE_SIGNATURES, "a CASE signature algorithm"),
    ("thread", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
}


def _problems(settings: StudyParams) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every name, duplicate and cross-field error pydantic's per-field checks cannot see, with its path."""
    for section in StudyParams.model_fields:
        model = getattr(settings, section)
        if not isinstance(model, BaseModel):
            continue
        for name in type(model).model_fields:
            value = getattr(model, name)
            members = value if isinstance(value, tuple) else (value,)
            check = _NAME_CHECKS.get((section, name))
            for index, member in enumerate(members):
                problem = check(member) if check else None
                if problem is None and isinstance(value, tuple) and member in value[:index]:
                    problem = f"{member!r} is listed twice (first at [{value.index(member)}])"
                if problem:
                    yield (section, name, index) if isinstance(value, tuple) else (section, name), problem
    thread = settings.thread
    for role, name in thread.figure_configs.items():
        if role not in FIGURE_ROLES:
            yield ("thread", "figure_configs", role), f"unknown role; roles: {', '.join(FIGURE_ROLES)}"
        elif name not in TABLE1_NAMES:
            yield ("thread", "figure_configs", role), f"{name!r} is not a Table I configuration"


def _located(loc: tuple[Any, ...], applied: dict[str, Any], chosen: str) -> str:
    """``loc`` as a dotted path, pointing into ``<section>.profiles.<profile>`` when the profile set it."""
    if len(loc) >= 2 and _has_path(applied, loc[:2]):  # the bad value came from the profile's override
        loc = (loc[0], "profiles", chosen, *loc[1:])
    text = ""
    for part in loc:
        if part == "[key]":  # pydantic's marker: the error is in the mapping's key (a name), not its value
            text += " (the name)"
            continue
        if not isinstance(part, int | str) or (isinstance(part, str) and not part.isprintable()):
            part = repr(part)  # a key with a newline or control character stays on the one line
        if isinstance(part, str) and len(part) > NAME_MAX_CHARS:
            part = _short(part)
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _validate(data: dict[str, Any], chosen: str, names: tuple[str, ...], source: str) -> StudyParams:
    merged, applied = _for_profile(data, chosen, names, source)
    merged["profile"] = chosen
    try:
        settings = StudyParams.model_validate(_yaml_lists_to_tuples(merged))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        if not loc:  # a check across sections: its message names the fields
            raise ParamsError(str(first["msg"]).removeprefix("Value error, "), field=source) from None
        got = "" if first["type"] == "missing" else f" (got {_short(first.get('input'))})"
        raise ParamsError(f"{_located(loc, applied, chosen)}: {first['msg']}{got}", field=source) from None
    for loc, problem in _problems(settings):
        raise ParamsError(f"{_located(loc, applied, chosen)}: {problem}", field=source)
    return settings


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def resolve(data: dict[str, Any], profile: str | None = None, *, source: str = "params") -> StudyParams:
    """Validate every profile of ``data`` and return the selected one (``profile`` overrides the file's)."""
    names = data.get("profiles", ("smoke", "quick", "paper"))
    if not isinstance(names, list | tuple) or not names or not all(isinstance(n, str) for n in names):
        raise ParamsError("must list the profile names", field=f"{source}: profiles")
    names = tuple(names)
    chosen = profile if profile is not None else data.get("profile")
    if not isinstance(chosen, str):
        raise ParamsError(f"must be a profile name (got {chosen!r})", field=f"{source}: profile")
    if chosen not in names:
        raise ParamsError(f"unknown profile {chosen!r}; known: {', '.join(names)}", field=f"{source}: profile")
    for other in names:  # an error in a profile not selected today still stops the run
        if other != chosen:
            _validate(data, other, names, source)
    return _validate(data, chosen, names, source)


def load(path: str | Path, profile: str | None = None) -> StudyParams:
    """Load and validate a params file; ``profile`` overrides the file's own ``profile`` key."""
    return resolve(load_raw(path), profile, source=str(path))


def dump_all(settings: StudyParams) -> dict[str, Any]:
    """Every resolved field, the sections kept out of ``model_dump`` (provenance) included (``pqlab params``)."""
    dumped = settings.model_dump(mode="json")
    for name, info in StudyParams.model_fields.items():
        if info.exclude:
            dumped[name] = getattr(settings, name).model_dump(mode="json")
    return dumped
