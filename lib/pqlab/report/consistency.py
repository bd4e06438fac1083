"""The papers' own consistency: checks that use the papers' published numbers (and, where named, a bound this
project computes), with the arithmetic shown and the verdict "consistent" or "inconsistent" — or, for a check
against a bound of this project's model (``basis: model``), "model bound not met", which is the paper against
that model rather than an inconsistency of its numbers alone.

Every printed input carries its rounding (half a unit of its last digit); a result is computed at every
combination of the inputs' rounding ends, so a check reads "inconsistent" only when no rounding of the printed
inputs reproduces the printed result (or satisfies the condition).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from pqlab.report.expressions import corners, evaluate, substituted
from pqlab.report.metrics import MISSING, MetricsTree, lookup, number
from pqlab.report.schema import Consistency, Printed, Reference, resolve
from pqlab.report.verdicts import in_pipeline, missing_file

CONSISTENT, INCONSISTENT, NOT_EVALUATED = "consistent", "inconsistent", "not evaluated"
MODEL_BOUND_NOT_MET = "model bound not met"  # the paper's numbers against a bound this project's model computes
VERDICTS = (CONSISTENT, INCONSISTENT, MODEL_BOUND_NOT_MET, NOT_EVALUATED)


def _fmt(value: float) -> str:
    if value != 0 and (abs(value) >= 1e9 or abs(value) < 1e-3):
        return f"{value:.4g}"
    if abs(value) >= 1000:
        return f"{value:,.1f}".removesuffix(".0")
    return f"{value:.4g}"


def _shown(raw: float | str, value: float) -> str:
    """An input as the arithmetic shows it: as the paper prints it, or this run's value."""
    p = Printed.parse(raw)
    return p.text if p is not None else _fmt(value)


def _inputs(check: Consistency, reference: Reference, tree: MetricsTree,
            pipeline: Callable[[str], bool]) -> tuple[dict[str, tuple[float, float]], dict[str, float], list[str]]:
    """Each input's (low, high) rounding interval, its printed value, and why an input from a run is missing."""
    ranges: dict[str, tuple[float, float]] = {}
    points: dict[str, float] = {}
    missing: list[str] = []
    for name, raw in check.inputs.items():
        p = Printed.parse(raw)
        if p is not None:
            half = 0.0 if check.exact_inputs else p.half_unit
            ranges[name] = (p.value - half, p.value + half)
            points[name] = p.value
            continue
        filename, key = resolve(str(raw), "")
        document = tree.document(filename)
        value = number(lookup(document, key)) if document is not None else None
        if document is None:
            missing.append(missing_file(reference.stage_of(filename), filename, pipeline))
        elif value is None or value is MISSING:
            missing.append(f"`{raw}` has no value in this run")
        else:
            ranges[name] = (value, value)
            points[name] = value
    return ranges, points, missing


def evaluate_check(check: Consistency, reference: Reference, tree: MetricsTree,
                   pipeline: Callable[[str], bool] = in_pipeline) -> dict[str, Any]:
    """One check's arithmetic, result and verdict."""
    ranges, points, missing = _inputs(check, reference, tree, pipeline)
    row = {"id": check.id, "paper_id": check.paper, "where": check.where, "check": check.check,
           "arithmetic": "", "verdict": NOT_EVALUATED, "note": check.note or ""}
    if missing:
        row["arithmetic"] = "; ".join(missing)
        return row
    shown = {k: _shown(check.inputs[k], points[k]) for k in points}
    if check.printed is not None:
        target = Printed.parse(check.printed)
        assert target is not None and check.result is not None
        central = float(evaluate(check.result, points))
        values = [float(evaluate(check.result, c)) for c in corners(ranges)]
        lo, hi = min(values), max(values)
        ok = lo - target.half_unit <= target.value <= hi + target.half_unit
        spread = f" ({_fmt(lo)}–{_fmt(hi)} over the inputs' rounding)" if hi > lo else ""
        row["arithmetic"] = (f"{substituted(check.result, shown)} = {_fmt(central)}{spread}; printed "
                             f"{target.text}")
    else:
        assert check.holds is not None
        central_holds = bool(evaluate(check.holds, points))
        ok = central_holds or any(bool(evaluate(check.holds, c)) for c in corners(ranges))
        row["arithmetic"] = f"{substituted(check.holds, shown)}: {'holds' if central_holds else 'does not hold'}" \
            + ("" if central_holds == ok else " at the printed values, holds within their rounding")
    row["verdict"] = CONSISTENT if ok else (MODEL_BOUND_NOT_MET if check.basis == "model" else INCONSISTENT)
    return row


def consistency_table(reference: Reference, tree: MetricsTree,
                      pipeline: Callable[[str], bool] = in_pipeline) -> pd.DataFrame:
    """One row per consistency check of the reference file."""
    rows = [evaluate_check(c, reference, tree, pipeline) | {"basis": c.basis} for c in reference.consistency]
    return pd.DataFrame(rows, columns=["id", "paper_id", "where", "check", "arithmetic", "verdict", "note", "basis"])
