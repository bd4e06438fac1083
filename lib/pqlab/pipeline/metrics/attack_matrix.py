"""The attack_matrix stage's typed metrics model: what its study writes and the report reads (AMORT-V1 Appendix A,
§IV-B, §V-A)."""

from __future__ import annotations

from pydantic import Field

from pqlab.pipeline.typed_metrics import LoadAverage, MetricsNode, StageMetrics


class Table6Counts(MetricsNode):
    by_class: dict[str, int]
    by_class_passed: dict[str, int]
    cases_passed: int
    cases_total: int
    controls_passed: int
    controls_total: int


class CaseOutcome(MetricsNode):
    """One case of Table VI over all repeats: its class, the expected and observed outcome (a rejection code, or
    ACCEPT with a control's detail) and how many repeats passed."""

    case_class: str = Field(alias="class")
    expected: str
    observed: str
    detail: str
    passed: bool
    runs: int
    runs_passed: int


class ExtraCounts(MetricsNode):
    cases_passed: int
    cases_total: int


class P5Counts(MetricsNode):
    checkpoints: int
    fsync_count: int
    fsyncs: list[int]
    records: int


class ProtocolFacts(MetricsNode):
    """Facts of the reference model's encodings, each measured on a real encoding (§IV-B)."""

    record_octets: int
    tag_lengths_accepted: list[int]


class Forgery(MetricsNode):
    """§IV-B: tags verified over the deployment in params, and the online forgery probability per accepted tag
    length (one attempt per verified tag, each succeeding with 2^-8l)."""

    tags_verified: float
    probability_by_tag_octets: dict[str, float]


class Differential(MetricsNode):
    """The differential vectors regenerated from the reference model and run through both paths (§V-A)."""

    vectors: int
    identical_reference: int
    identical_native: int | None
    native_available: bool


class VariantOutcome(MetricsNode):
    """One protocol variant (the paper's design or the hardened one) over every case."""

    cases_total: int
    as_expected: int
    attacks_total: int
    attacks_succeeded: list[str]
    matrix_seconds_max: float | None


class DefectCounts(MetricsNode):
    total: int
    stopped_by_paper: int
    stopped_by_hardened: int


class GapCounts(MetricsNode):
    """Attacks (or denials) that succeed under the paper's design, and how many the hardened variant stops."""

    total: int
    succeed_under_paper: int
    stopped_by_hardened: int


class NewCaseCodes(MetricsNode):
    paper: str
    hardened: str
    kind: str


class Issue27(MetricsNode):
    """The sixteen further attacks: defects both variants stop, gaps the paper's design accepts."""

    cases_total: int
    as_expected: int
    defects: DefectCounts
    gaps: GapCounts
    codes: dict[str, NewCaseCodes]


class OutsiderCaseCodes(NewCaseCodes):
    action: str


class Outsider(MetricsNode):
    """Issue 35's attacks written with the default public constructors: defects both variants stop, and the paper
    design's gaps (an attack, or a denial, that succeeds under the paper's design and not under the hardened one)."""

    cases_total: int
    as_expected: int
    defects: DefectCounts
    gaps: GapCounts
    codes: dict[str, OutsiderCaseCodes]


class HardeningCost(MetricsNode):
    paper: float
    hardened: float
    unit: str
    ratio: float | None
    ratio_min: float | None
    ratio_max: float | None


class HardeningSetup(MetricsNode):
    trials: int
    identities: int
    rounds: int
    k: int
    epochs: int
    controller_path: str
    wire_format: str
    checkpoint_signer: str


class AttackMatrixMetrics(StageMetrics):
    cpu_model: str | None
    table6: Table6Counts
    cases: dict[str, CaseOutcome]
    extra: ExtraCounts
    p5: P5Counts
    repeats: int
    matrix_seconds_max: float
    matrix_seconds: list[float]
    variants: dict[str, VariantOutcome]
    issue27: Issue27
    outsider: Outsider
    # what hardening costs, per metric, and the setup it was measured with (key "setup")
    hardening_cost: dict[str, HardeningCost | HardeningSetup]
    load_average: LoadAverage
    wire_format: str
    controller_path: str
    controller_path_reason: str
    protocol: ProtocolFacts
    forgery: Forgery
    differential: Differential
