"""The attack-matrix stage's metrics: their typed model, the per-case outcomes, the protocol's encoding facts, the
forgery bound, the differential check, and the assembly of the whole file (AMORT-V1 Appendix A, §IV-B, §V-A)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from pydantic import Field

from pqlab.amort.config import AttackMatrixParams
from pqlab.amort.conformance import differential, vectors
from pqlab.attacks.summary import matrix_metrics, variant_metrics
from pqlab.typed_metrics import LoadAverage, MetricsNode, StageMetrics, validated


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


class DefectsAndGaps(MetricsNode):
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
    issue27: DefectsAndGaps  # issue 27's sixteen cases, under the key the derived outputs and REPORT.md read
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


def case_outcomes(summary: pd.DataFrame, runs: pd.DataFrame) -> dict[str, dict]:
    """Per Table VI case: expected and observed outcome, the control's detail, repeats passed."""
    out = {}
    for row in summary[summary["table"] == "table6"].to_dict("records"):
        mine = runs[runs["case"] == row["case"]]
        code, _, detail = str(row["observed code"]).partition(" (")
        out[str(row["case"])] = {"class": str(row["class"]), "expected": str(row["expected code"]).partition(" (")[0],
                                 "observed": code, "detail": detail.rstrip(")"), "passed": bool(row["pass"]),
                                 "runs": len(mine), "runs_passed": int(mine["pass"].sum())}
    return out


def protocol_facts() -> dict:
    """The record's encoded length and the evidence-tag lengths the protocol accepts: every length 1..32 tried on
    the explicit wire format's report decoder, which checks each tag's length octet (in the implied format the
    epoch fixes the length, so there is nothing on the wire to check)."""
    from pqlab.amort.errors import AmortError
    from pqlab.amort.messages import Record, Report  # the reference model's wire format
    from pqlab.amort.profile import EXPLICIT

    record = Record(b"\x01" * 8, 1, 1, 1, b"\x00" * 32, 1, 0)
    accepted = []
    for length in range(1, 33):
        try:
            Report.decode(Report(record, b"\x00" * length, b"", EXPLICIT).encode(), wire_format=EXPLICIT)
        except (AmortError, ValueError):  # refused: this length is not accepted
            continue
        accepted.append(length)
    return {"record_octets": len(record.encode()), "tag_lengths_accepted": accepted}


def forgery(cfg: AttackMatrixParams, tag_lengths: list[int]) -> dict:
    """Tags verified by the deployment and 1 - (1 - 2^-8l)^N for each tag length l the decoder accepts."""
    tags = cfg.forgery_controllers * cfg.forgery_rate_hz * cfg.forgery_years * 365.25 * 86_400
    return {"tags_verified": tags,
            "probability_by_tag_octets": {str(n): -math.expm1(tags * math.log1p(-(2.0 ** (-8 * n))))
                                          for n in tag_lengths}}


def differential_check() -> dict:
    """The differential vectors from the reference model, each run through both controller paths."""
    from pqlab.amort.fastpath.api import native_status

    generated = vectors.generate()
    native = native_status()[0]
    return {"vectors": len(generated),
            "identical_reference": sum(not differential.differences(v, "reference") for v in generated),
            "identical_native": sum(not differential.differences(v, "native") for v in generated) if native else None,
            "native_available": native}


def stage_metrics(summary: pd.DataFrame, paper_runs: pd.DataFrame, variants: pd.DataFrame,
                  seconds: dict[str, list[float]], cfg: AttackMatrixParams, run: dict[str, Any]) -> dict[str, Any]:
    """attack_matrix_metrics.json, checked against :class:`AttackMatrixMetrics`: the paper variant's counts and
    cases, both variants' outcomes, the protocol facts, forgery bound and differential check, and ``run`` (what
    the stage measured itself: hardening cost, load average, controller path, wire format, profile, CPU)."""
    facts = protocol_facts()
    return validated(AttackMatrixMetrics, matrix_metrics(summary, paper_runs, seconds["paper"])
                     | variant_metrics(variants, seconds) | run
                     | {"cases": case_outcomes(summary, paper_runs), "protocol": facts,
                        "forgery": forgery(cfg, facts["tag_lengths_accepted"]), "differential": differential_check()})
