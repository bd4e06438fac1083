"""Stage ``attack_matrix`` (AMORT-V1 Appendix A): Table VI's 27 cases and 5 controls, the extra cases and issue 27's
sixteen, under the paper's design and the hardened variant, and what hardening costs."""

from __future__ import annotations

import json
import math
import os
import time

import matplotlib.pyplot as plt
import pandas as pd
from pydantic import Field

from pqlab import machine
from pqlab.amort import differential, hardening_cost, vectors
from pqlab.amort.attacks import run_matrix
from pqlab.amort.attacks.summary import TABLE_COLUMNS, matrix_metrics, summarise_runs, variant_metrics, variant_table
from pqlab.amort.fastpath import resolve_controller_path
from pqlab.amort.lab import KeySet
from pqlab.amort.profile import VARIANTS
from pqlab.figures.attack_matrix import attack_matrix_overview, attack_matrix_variants
from pqlab.params import AttackMatrixParams, StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet, scratch_dir
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "attack_matrix"


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
    total: int
    accepted_by_paper: int
    rejected_by_hardened: int


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


class LoadAverage(MetricsNode):
    start: list[float]
    end: list[float]


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
    # what hardening costs, per metric, and the setup it was measured with (key "setup")
    hardening_cost: dict[str, HardeningCost | HardeningSetup]
    load_average: LoadAverage
    wire_format: str
    controller_path: str
    controller_path_reason: str
    protocol: ProtocolFacts
    forgery: Forgery
    differential: Differential


METRICS = AttackMatrixMetrics


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
    from pqlab.amort.fastpath import native_status

    generated = vectors.generate()
    native = native_status()[0]
    return {"vectors": len(generated),
            "identical_reference": sum(not differential.differences(v, "reference") for v in generated),
            "identical_native": sum(not differential.differences(v, "native") for v in generated) if native else None,
            "native_available": native}


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Run the whole matrix ``repeats`` times per variant (fresh keys and seed each repeat), measure the cost of
    hardening (both variants in one run), and write every output."""
    cfg, wire = settings.attack_matrix, settings.amort.wire_format
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    resolved = resolve_controller_path(settings.amort.controller_path)
    load_start = os.getloadavg()
    frames, seconds = [], {variant: [] for variant in VARIANTS}
    with scratch_dir(paths, STAGE) as scratch:  # checkpoint logs; removed even if the run is killed
        for repeat in range(cfg.repeats):
            keys = KeySet.generate(cfg.n_devices, cfg.checkpoint_signer)
            slh = KeySet.generate(2, cfg.alternative_signer)
            for variant in VARIANTS:
                start = time.perf_counter()
                frame = run_matrix(keys, settings.seed + repeat, slh_keys=slh, stream_records=cfg.stream_records,
                                   stream_k=cfg.stream_k, workdir=scratch, variant=variant, wire_format=wire)
                seconds[variant].append(time.perf_counter() - start)
                frames.append(frame.assign(repeat=repeat, seed=settings.seed + repeat))
        setup = hardening_cost.CostSetup(cfg.cost_identities, cfg.cost_rounds, cfg.cost_k, cfg.cost_epochs,
                                         cfg.cost_trials, settings.seed, resolved.path, wire, cfg.checkpoint_signer)
        cost_samples = hardening_cost.measure(setup, scratch, progress=progress)
    load_end = os.getloadavg()
    runs = pd.concat(frames, ignore_index=True)
    paper_runs = runs[runs["variant"] == "paper"]
    summary = summarise_runs(paper_runs)
    variants = variant_table(runs)
    cost = hardening_cost.summarise(cost_samples)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends={})
    metrics = (matrix_metrics(summary, paper_runs, seconds["paper"]) | variant_metrics(variants, seconds)
               | {"hardening_cost": hardening_cost.metrics(cost, setup),
                  "load_average": {"start": [round(x, 2) for x in load_start],
                                   "end": [round(x, 2) for x in load_end]},
                  "wire_format": wire, "controller_path": resolved.path, "controller_path_reason": resolved.reason,
                  "profile": settings.profile, "cpu_model": metadata.get("cpu_model")})
    facts = protocol_facts()
    metrics = validated(AttackMatrixMetrics, metrics | {"cases": case_outcomes(summary, paper_runs), "protocol": facts,
                                                        "forgery": forgery(cfg, facts["tag_lengths_accepted"]),
                                                        "differential": differential_check()})
    table6 = summary[summary["table"] == "table6"][TABLE_COLUMNS].reset_index(drop=True)
    extra = summary[summary["table"] == "extra"][TABLE_COLUMNS].reset_index(drop=True)
    figures = {"attack_matrix_overview": attack_matrix_overview(summary),
               "attack_matrix_variants": attack_matrix_variants(variants)}
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "attack_matrix_runs.parquet", runs.assign(counts=runs["counts"].map(json.dumps)),
                    metadata)
        out.parquet(paths.raw / "hardening_cost_samples.parquet", cost_samples, metadata)
        out.table(table6, paths.amort_figs / "table6_attack_matrix")
        out.table(extra, paths.amort_figs / "attack_matrix_extra")
        out.table(variants, paths.amort_figs / "attack_matrix_variants")
        out.table(cost.round(4), paths.amort_figs / "hardening_cost")
        for name, figure in figures.items():
            out.figure(figure, paths.amort_figs / name)
        out.metrics(paths.derived / "attack_matrix_metrics.json", metrics, label="Table VI cases passed",
                    key="table6.cases_passed", unit=f"of {metrics['table6']['cases_total']}")
    for figure in figures.values():
        plt.close(figure)
    return StudyResult(STAGE, figures=figures,
                       tables={"table6_attack_matrix": table6, "attack_matrix_extra": extra,
                               "attack_matrix_variants": variants, "hardening_cost": cost},
                       metrics=metrics, files=out.written,
                       data={"runs": runs, "summary": summary, "cost_samples": cost_samples})
