"""The sections the measuring harnesses (pqlab.experiments) read: costs, the control cycle, the amortisation sweep."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pqlab.amort.config import CheckpointSigner
from pqlab.config import BackendChoice, Name, Strict, strictly_increasing


class CostsParams(Strict):
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


class CycleConfiguration(Strict):
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


class ControlCycleParams(Strict):
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
    # the configurations (and the per-scan cost rotation) run interleaved in this many rounds of cycles / rounds
    # each, so that a change in the host's state during the run (its caches, its other tenants) reaches every
    # configuration alike instead of the one that happened to run then
    rounds: int = Field(default=10, ge=1, le=100_000)
    # the analysis: the percentile bootstrap of what evidence adds to a scan
    bootstrap_resamples: int = Field(default=2000, ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _rounds_fit(self) -> ControlCycleParams:
        if self.rounds > self.cycles:
            raise ValueError(f"rounds ({self.rounds}) must not exceed cycles ({self.cycles})")
        return self


class AmortBaseline(Strict):
    """One baseline of Table II / Fig. 3: a checkpoint signer with or without a durable evidence log."""

    label: str = Field(min_length=1)
    signer: CheckpointSigner
    durable_log: bool


class AmortModelInputs(Strict):
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


class AmortisationParams(Strict):
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
    # adaptive sizing: each point's amortised mean to +-target_half_width_pct (at `confidence`) within
    # sweep_budget_s of wall time (probes included); points on the backends beside the main one (k first and last)
    # to +-beside_...
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
            strictly_increasing(values, name)
        if any(r <= 0 or r != r or r == float("inf") for r in self.rates):
            raise ValueError(f"rates: every report rate must be a finite number > 0 (got {list(self.rates)})")
        if len(set(self.omission_strategies)) != len(self.omission_strategies):
            raise ValueError("omission_strategies: each strategy at most once")
        if self.log_storage not in self.storage:
            raise ValueError(f"log_storage: {self.log_storage!r} is not one of storage {sorted(self.storage)}")
        if any(not str(folder).strip() for folder in self.storage.values()):
            raise ValueError("storage: every target needs a folder")
        return self

