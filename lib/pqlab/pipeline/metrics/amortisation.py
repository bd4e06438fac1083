"""The typed shape of ``amortisation_metrics.json`` (validated by the study before writing, by the report before
reading)."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, RawSource, Sanity


class ControllerPath(MetricsNode):
    requested: str
    used: str
    reason: str


class InputsProvenance(MetricsNode):
    source: str
    costs_profile: str | None
    costs_git_commit: str | None
    costs_timestamp_utc: str | None
    costs_cpu_model: str | None


class Samples(MetricsNode):
    sweep_trials: int
    omission_trials: int
    equivocation_trials: int
    min_reports: int
    min_checkpoints: int


class ModelBaseline(MetricsNode):
    """Eq. 1 for one baseline, fed with the costs stage's medians."""

    label: str
    c_mac_us: float
    c_leaf_us: float
    c_sign_us: float
    c_fsync_us: float
    floor_us: float
    k_star: float
    share_signature_pct: float
    share_write_pct: float
    dominant: str
    cost_first_us: float
    cost_last_us: float
    reduction: float
    sources: dict[str, str]


class Fit(MetricsNode):
    per_report_us: float
    per_checkpoint_us: float
    median_relative_error_pct: float


class SweepPoint(MetricsNode):
    """One (baseline, k) point of the sweep: its mean with its interval, how much it rests on, both models."""

    mean_us: float
    ci_us: list[float]
    half_width_pct: float
    checkpoints: int
    reports: int
    trials: int
    model_us: float
    model_path_us: float


class MeasuredBaseline(MetricsNode):
    """The sweep for one baseline on the controller path, Eq. 1 as published and with the path's own terms (each
    with its median error's interval), and where it departs from Eq. 1."""

    backend: str
    cost_first_us: float
    cost_first_ci_us: list[float]
    cost_last_us: float
    cost_last_ci_us: list[float]
    reduction: float
    median_relative_error_pct: float
    median_relative_error_ci_pct: list[float]
    max_relative_error_pct: float
    relative_error_pct_by_k: dict[str, float]
    median_relative_error_pct_path_terms: float
    median_relative_error_ci_pct_path_terms: list[float]
    max_relative_error_pct_path_terms: float
    relative_error_pct_by_k_path_terms: dict[str, float]
    error_interval: str
    points: dict[str, SweepPoint]
    per_report_us_at_last_k: float
    per_checkpoint_sign_write_us: float
    sign_us: float
    write_us: float
    checkpoint_path_overhead_us_at_k1: float
    checkpoint_cost_vs_model: float | None
    fit_a_plus_b_over_k: Fit
    checkpoint_octets: int


class PublishedInputs(MetricsNode):
    """Eq. 1's inputs as the paper states them (the cost study's means) and where each was measured."""

    c_mac_us: float
    c_leaf_us: float
    c_sign_us: float
    c_fsync_us: float
    floor_us: float
    sources: dict[str, str]


class PathInputs(MetricsNode):
    """Eq. 1 with the path's own terms: per-report and per-checkpoint path costs, the real checkpoint's fsync."""

    per_report_us: float
    per_checkpoint_us: float
    c_sign_us: float
    c_sign_cost_study_us: float
    c_fsync_us_by_devices: dict[str, float]
    c_fsync_back_to_back_us_by_devices: dict[str, float]
    checkpoint_octets_by_devices: dict[str, int]
    sources: dict[str, str]


class Eq1Inputs(MetricsNode):
    statistic: str
    as_published: dict[str, PublishedInputs]
    path_terms: dict[str, PathInputs]


class PathProbe(MetricsNode):
    k_small: int
    k_large: int
    checkpoints: int


class SweepSummary(MetricsNode):
    """What the adaptive sweep aimed for, how many points met it, and what it spent."""

    target_half_width_pct: float
    beside_half_width_pct: float
    budget_s: float
    wall_s: float
    trials: int
    points: int
    points_meeting_target: int
    max_half_width_pct: float
    checkpoints: int
    reports: int
    order: str
    path_probe: PathProbe
    fsync_probe_appends: int
    sign_probe_signatures: int


class BackendClaims(MetricsNode):
    """One baseline on one signing backend: Eq. 1's split and reduction, and the sweep's (when it ran there)."""

    main: bool
    c_sign_median_us: float | None = None
    c_sign_mean_us: float | None = None
    c_fsync_median_us: float | None = None
    dominant: str | None = None
    share_signature_pct: float | None = None
    share_write_pct: float | None = None
    k_star: float | None = None
    reduction_eq1: float | None = None
    cost_first_us: float | None = None
    cost_last_us: float | None = None
    reduction_measured: float | None = None
    half_width_first_pct: float | None = None
    half_width_last_pct: float | None = None


class LibraryDependent(MetricsNode):
    main_backend: dict[str, str]
    baselines: dict[str, dict[str, BackendClaims]]


class WallTimes(MetricsNode):
    """What each part of the measurement took (the analysis is not timed: its outputs must be byte-stable)."""

    sweep_s: float
    trials_s: float
    sensitivity_s: float
    total_s: float


class OmissionAtK(MetricsNode):
    k: int
    trials: int
    exposed: int
    model_holds: bool                     # every trial exposed by the next checkpoint after k - position + 1 records
    median_delay_model_lo_records: float | None   # the model's interval of the median of `trials` delays
    median_delay_model_hi_records: float | None
    max_delay_model_lo_records: float | None      # ... and of their maximum
    max_delay_model_hi_records: float | None
    median_delay_records: float | None
    median_delay_lo_records: float | None
    median_delay_hi_records: float | None
    max_delay_records: int | None
    max_delay_lo_records: float | None
    max_delay_hi_records: float | None
    exposed_by_next_checkpoint: int
    checks: dict[str, int]


class OmissionStrategy(MetricsNode):
    by_k: dict[str, OmissionAtK]
    trials: int
    exposed: int
    all_exposed: bool
    all_by_next_checkpoint: bool
    exposed_by_next_checkpoint_pct: float
    max_delay_over_k: float | None
    checks: dict[str, int]


class Equivocation(MetricsNode):
    k: int
    trials: int
    exposed: int
    exposed_pct: float
    exposed_by_gossip: int
    views_valid_alone: int
    variants: dict[str, int]


class SensitivityCombo(MetricsNode):
    signer: str
    backend: str
    storage: str
    c_sign_us: float
    c_fsync_us: float
    k_star: float
    dominant: str
    share_signature_pct: float
    median_relative_error_pct: float


class Dominant(MetricsNode):
    scheme: str
    term: str
    sentence: str


class AmortisationMetrics(IntervalMetrics):
    """``amortisation_metrics.json``: Eq. 1 per baseline, the measured sweep, omission and equivocation trials,
    the backend × storage probe, which term dominates, and the run's provenance."""

    cpu_model: str | None
    controller_path: ControllerPath
    sanity: Sanity
    inputs: InputsProvenance
    intervals: list[int]
    k_first: int
    k_last: int
    samples: Samples
    floor_us: float
    model: dict[str, ModelBaseline]
    measured: dict[str, MeasuredBaseline]
    omission: dict[str, OmissionStrategy]
    equivocation: Equivocation
    sensitivity: dict[str, SensitivityCombo]
    dominant: Dominant
    eq1_inputs: Eq1Inputs
    sweep: SweepSummary
    library_dependent: LibraryDependent
    storage_skipped: dict[str, str]
    wall_s: WallTimes
    raw_samples: RawSource
