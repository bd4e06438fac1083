"""The attack-matrix stage's metrics: the per-case outcomes, the protocol's encoding facts, the
forgery bound, the differential check, and the assembly of the whole file (AMORT-V1 Appendix A, §IV-B, §V-A)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pqlab.amort.conformance import differential, vectors
from pqlab.attacks.summary import matrix_metrics, variant_metrics
from pqlab.params.schema import AttackMatrixParams


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
    """attack_matrix_metrics.json (its study checks it against the stage's typed model): the paper variant's counts
    and cases, both variants' outcomes, the protocol facts, forgery bound and differential check, and ``run`` (what
    the stage measured itself: hardening cost, load average, controller path, wire format, profile, CPU)."""
    facts = protocol_facts()
    return (matrix_metrics(summary, paper_runs, seconds["paper"]) | variant_metrics(variants, seconds) | run
            | {"cases": case_outcomes(summary, paper_runs), "protocol": facts,
               "forgery": forgery(cfg, facts["tag_lengths_accepted"]), "differential": differential_check()})
