"""The recovery stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, RawSource, StageMetrics


class ArmCell(MetricsNode):
    """One Table IV cell (scenario × arm) over its trials."""

    trials: int
    killed_by_sigkill: int
    new_epoch: int
    new_epoch_fraction: float
    ready_ms_median: float | None
    spawn_to_ready_ms_median: float | None
    reissued: int
    reissued_per_trial_mean: float
    stale_detected: int
    stale_detected_fraction: float


class Restart(MetricsNode):
    interrupted_epochs: int
    epochs_with_loss: int
    err_evidence_incomplete: int
    first_interrupted_lost: int | None
    second_interrupted_lost: int | None
    first_trial_lost: list[int]
    lost_max: int | None
    bounded_by_k: bool
    clean_epochs: int
    clean_lost: int
    clean_errors: int
    restart_rate_refused_trials: int


class Rollback(MetricsNode):
    trials_per_arm: int
    naive_reissued: int
    tpm_reissued: int
    tpm_stale_detected: int


class CrashCase(MetricsNode):
    failed_secure: int
    resumed: int
    sequence_reuse: int


class Crash(MetricsNode):
    trials: int
    cases: dict[str, CrashCase]
    all_fail_secure_or_resume: bool
    fail_secure_or_resume_fraction: float


class Reservation(MetricsNode):
    samples: int
    total_ms_median: float
    increment_ms_median: float
    read_ms_median: float
    write_ms_median: float


class Sizing(MetricsNode):
    nv_write_budget: int
    report_rate_hz: float
    service_years: float
    days_per_year: float
    min_window: int
    nv_writes_at_min_window: int
    nv_writes_at_window: int


class RecoveryMetrics(StageMetrics):
    table4: dict[str, dict[str, ArmCell]]
    restart: Restart
    rollback: Rollback
    crash: Crash
    reservation: dict[str, Reservation]
    sizing: Sizing
    k: int
    window: int
    tpm: dict[str, str | bool | None]
    cpu_model: str | None
    raw_samples: RawSource
