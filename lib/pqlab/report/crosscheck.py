"""REPORT.md's cross-check section: rows of kind "crosscheck" (pqlab's own tools against independent
implementations), judged on this run's data alone and kept apart from the papers' rows and their counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pqlab.report.expressions import ExpressionError, evaluate
from pqlab.report.metrics import MISSING, MetricsTree, describe_value, lookup
from pqlab.report.schema import CrossCheck, Reference
from pqlab.report.verdicts import missing_file


def judge(x: CrossCheck, reference: Reference, tree: MetricsTree,
          pipeline: Callable[[str], bool]) -> tuple[str, dict[str, Any], str]:
    """(verdict, the data it read, why not judged): "holds", "does not hold" or "not run here"."""
    values: dict[str, Any] = {}
    for name, ref in x.data.items():
        filename, _, key = ref.partition(":")
        document = tree.document(filename)
        if document is None:
            return "not run here", values, missing_file(reference.stage_of(filename), filename, pipeline)
        values[name] = lookup(document, key)
        if values[name] is MISSING or values[name] is None:
            return "not run here", values, f"{ref} has no value in this run"
    try:
        return ("holds" if evaluate(x.predicate, values) else "does not hold"), values, ""
    except (ExpressionError, TypeError, ZeroDivisionError) as exc:
        return "not run here", values, f"predicate could not be evaluated: {exc}"


def crosscheck_section(reference: Reference, tree: MetricsTree, pipeline: Callable[[str], bool]) -> list[str]:
    """The section: one row per cross-check with its verdict and where a difference comes from."""
    if not reference.crosschecks:
        return []
    lines = ["## Cross-checks of this project's tools (kind: crosscheck)", "",
             "Claims about pqlab's own simulators checked against independent implementations (the Thread transport "
             "against ns-3's lr-wpan and sixlowpan: stage `transport_crosscheck`, docs/thread-simulator.md). Judged "
             "on this run's data alone, never against a paper's number, and not counted in the verdicts above.", "",
             "| id | claim | judged on | verdict | where a difference comes from |", "|---|---|---|---|---|"]
    for x in reference.crosschecks:
        verdict, values, why = judge(x, reference, tree, pipeline)
        shown = "; ".join(f"{k} = {describe_value(v)}" for k, v in values.items())
        source = x.source + (f" Paper: {x.paper_side}" if x.paper_side else "") + (f" ({x.note})" if x.note else "")
        cell = f"**{verdict}**" + (f" ({why})" if why else "")
        lines.append(f"| {x.id} | {_cell(x.claim)} | `{_cell(x.predicate)}` with {_cell(shown)} | {_cell(cell)} "
                     f"| {_cell(source)} |")
    lines.append("")
    return lines


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
