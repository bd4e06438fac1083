"""The study schema: StudyParams, one section per stage, and the sections only studies read (sample sizes)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pqlab.amort.config import AmortParams, CheckpointSigner
from pqlab.amort.recovery.config import RecoveryParams
from pqlab.case.config import TABLE1_NAMES, DesignSpaceParams, ExtendedDesignSpaceParams
from pqlab.config import BackendChoice, Strict, powers_of_two, strictly_increasing
from pqlab.framing import FramingParams
from pqlab.params.measurement_sections import AmortisationParams, ControlCycleParams, CostsParams
from pqlab.transport.config import TransportParams
from pqlab.transport.sweep_config import AssumptionsParams, CrosscheckParams, SensitivityParams


class InputsParams(Strict):
    """Inputs several stages read; a stage depends on the keys it uses, not on another stage's section."""

    cycles_file: str = "pqm4_cycles.yaml"  # in params/: fastest pqm4 Cortex-M4 cycle counts (source recorded)


class CaseSizesParams(Strict):
    """PQ-CASE §IV-A/§V: the byte-exact size model (Table I payload columns, Fig. 1, resumption)."""

    configurations: tuple[str, ...] = Field(default=TABLE1_NAMES, min_length=1)
    resumption_key_exchanges: tuple[str, ...] = Field(
        default=("P-256", "ML-KEM-512", "ML-KEM-768", "P-256+ML-KEM-512", "P-256+ML-KEM-768"), min_length=1)
    real_material: tuple[str, ...] = ()  # configurations rebuilt with real keys/signatures to confirm the sizes


class ImageTreeParams(Strict):
    """AMORT-V1 §V-I: the generated image's shape (default: the paper's OpenPLC v3 tree, 6,239 files, 355 MB)."""

    files: int = Field(default=6239, ge=1, le=10_000_000)
    total_bytes: int = Field(default=355_000_000, ge=0, le=1 << 40)
    size_sigma: float = Field(default=2.0, ge=0.0, le=10.0)  # lognormal shape; μ follows from count and total
    directories: int = Field(default=400, ge=1, le=1_000_000)


class FullImageParams(Strict):
    """AMORT-V1 §V-I (Table V): warm- and cold-cache full-image measurement against one ML-DSA-65 signature."""

    image_dir: str | None = None          # None: data/raw/image_tree (stage image_tree); else a directory to measure
    scratch_tree: ImageTreeParams | None = None  # set: measure a tree of this shape generated in a scratch folder
    repetitions: int = Field(default=5, ge=1, le=1000)
    chunk_octets: int = Field(default=1 << 20, ge=4096, le=1 << 30)
    compare_copy: bool = True             # also measure a copy of the tree; its digest must be equal
    reference_operation: str = "sign_ML-DSA-65"   # costs_metrics.json table1.<op>.median_us


class ScalingParams(Strict):
    """AMORT-V1 §V-E/§V-H: controller scaling (Table III), isolation and re-keying, partition replay."""

    # Table III: one report per identity per checkpoint (batch = identity count), ML-DSA-65 checkpoints
    identities: tuple[int, ...] = Field(default=(10, 100, 1000, 4000, 10_000, 100_000), min_length=1)
    checkpoint_signer: CheckpointSigner = "ML-DSA-65"
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
    replay_backlogs: tuple[int, ...] = Field(default=powers_of_two(6, 12), min_length=1)
    replay_fleet: int = Field(default=1000, ge=1, le=1_000_000)   # identities registered beside the partitioned one
    replay_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)    # the partitioned device's report rate
    replay_window_s: float = Field(default=3600.0, gt=0.0, le=1e7)  # "a one-hour backlog"
    replay_trials: int = Field(default=5, ge=1, le=100)
    # the analysis: the percentile bootstrap of Table III's cost per report
    bootstrap_resamples: int = Field(default=2000, ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> ScalingParams:
        for name in ("identities", "isolation_fleets", "replay_backlogs"):
            strictly_increasing(getattr(self, name), name)
            if min(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be positive")
        if min(self.isolation_fleets) < 2:
            raise ValueError("isolation_fleets: a fleet needs two identities to show isolation")
        return self


class DeviceOriginParams(Strict):
    """AMORT-V1 §V-F, Fig. 5: cold-auditor cost per report by audit level, one vs two tags, prover extra work."""

    k_values: tuple[int, ...] = Field(default=powers_of_two(6, 12), min_length=1)  # checkpoint interval k
    checkpoint_signer: CheckpointSigner = "ML-DSA-65"
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
        strictly_increasing(self.k_values, "k_values")
        if min(self.k_values) < 2:
            raise ValueError("k_values must be at least 2")
        return self  # an "after" validator that returns nothing makes the section None

class AttackMatrixParams(Strict):
    """AMORT-V1 Appendix A, Table VI: the attack matrix over the reference model."""

    n_devices: int = Field(default=4, ge=2, le=64)
    checkpoint_signer: Literal["ML-DSA-65"] = "ML-DSA-65"
    alternative_signer: Literal["SLH-DSA-SHA2-128f"] = "SLH-DSA-SHA2-128f"
    stream_records: int = Field(default=640, ge=1, le=1_000_000)  # P5: honest stream length
    stream_k: int = Field(default=64, ge=1, le=1_000_000)  # P5: checkpoint interval
    repeats: int = Field(default=1, ge=1, le=100)  # independent runs, each with its own seed and fresh keys
    # What the hardened variant costs (pqlab.experiments.hardening_cost), both variants alternating in each trial:
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


class StudyParams(Strict):
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
    transport: TransportParams = Field(default_factory=TransportParams)
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
    # the transport cross-check against ns-3; kept out of model_dump() like extended_design_space (see there)
    transport_crosscheck: CrosscheckParams = Field(default_factory=CrosscheckParams, exclude=True)

    @model_validator(mode="after")
    def _sweeps_name_known_scenarios_and_roles(self) -> StudyParams:
        sens, thread = self.sensitivity, self.transport
        scenarios, roles = set(thread.scenarios), set(thread.figure_configs)
        named = [("interference.base_scenario", sens.interference.base_scenario), ("timers.scenario",
                 sens.timers.scenario)] + [(f"segments.scenarios.{i}.loss", sc.loss)
                                          for i, sc in enumerate(sens.segments.scenarios)]
        for where, name in named:
            if name not in scenarios:
                raise ValueError(f"sensitivity.{where}: {name!r} is not one of transport.scenarios {sorted(scenarios)}")
        for where, role in [("role", sens.role)] + [(f"segments.scenarios.{i}.role", sc.role)
                                                    for i, sc in enumerate(sens.segments.scenarios)]:
            if role not in roles:
                raise ValueError(f"sensitivity.{where}: {role!r} is not a role of transport.figure_configs "
                                 f"{sorted(roles)}")
        cross = self.transport_crosscheck
        for i, name in enumerate(cross.losses):
            if name not in scenarios:
                raise ValueError(f"transport_crosscheck.losses.{i}: {name!r} is not one of transport.scenarios "
                                 f"{sorted(scenarios)}")
        for i, role in enumerate(cross.roles):
            if role not in roles:
                raise ValueError(f"transport_crosscheck.roles.{i}: {role!r} is not a role of transport.figure_configs "
                                 f"{sorted(roles)}")
        return self

