"""Each reference row's verdict: reproduced, differs, not run here, or sensitivity — always with its reason."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd

from pqlab.report.metrics import MISSING, MetricsTree, absence, failures, lookup, number, parent
from pqlab.report.schema import Quantity, Reference

# Backends whose name differs from how the paper names its library but that are the same code.
_SAME_LIBRARY = {"hashlib": "OpenSSL (C)"}


class Verdict(StrEnum):
    REPRODUCED = "reproduced"
    DIFFERS = "differs"
    NOT_RUN = "not run here"
    SENSITIVITY = "sensitivity"


@dataclass(frozen=True)
class Outcome:
    """A row's verdict, the reasons REPORT.md prints beside it, this run's value and what produced it."""

    verdict: Verdict
    reasons: tuple[str, ...]
    here: float | None
    produced_by: str


def in_pipeline(stage: str) -> bool:
    """Whether this installation has the study module of ``stage`` (``pqlab.studies.<stage>``)."""
    return importlib.util.find_spec(f"pqlab.studies.{stage}") is not None


def missing_file(stage: str | None, filename: str, pipeline: Callable[[str], bool] = in_pipeline) -> str:
    """Why a stage's metrics file is absent: the stage has not run, or it is not in the pipeline yet."""
    if stage is None:
        return f"{filename} missing"
    if pipeline(stage):
        return f"{filename} missing: stage `{stage}` has not run"
    return f"stage `{stage}` is not in this pipeline yet (open item; it will write {filename})"


def _library_absent(document: dict[str, Any], library: str, present: tuple[str, ...]) -> str:
    reason = (document.get("backends_absent") or {}).get(library)
    timed = f"; timed here on {', '.join(present)}" if present else ""
    if isinstance(reason, str) and reason:
        return f"{library} absent on this machine ({reason}){timed}"
    return f"{library} did not run here{timed}"


def _library_note(document: dict[str, Any], wanted: str, backend: str) -> str | None:
    if _SAME_LIBRARY.get(backend, backend) == wanted:
        return None
    absent = (document.get("backends_absent") or {}).get(wanted)
    return f"library differs: paper {wanted}, here {backend}" + (f" ({wanted} absent on this machine)"
                                                                  if absent else "")


def _missing_value(q: Quantity, document: dict[str, Any], filename: str) -> tuple[Verdict, str, bool]:
    """Why a present metrics file holds no value for ``q``; the flag says the paper's library was absent."""
    failed = failures(document, q.key)
    if failed is not None and failed.rate > 0:
        return Verdict.DIFFERS, f"no value: {failed.describe()}", False
    gap = absence(document, q.key)
    if gap.null:
        return Verdict.DIFFERS, f"the stage ran but wrote no value (`{q.key}` is null)", False
    if q.paper_library and gap.missing == q.paper_library:
        return Verdict.NOT_RUN, _library_absent(document, q.paper_library, gap.present), True
    under = f" under `{gap.found}`" if gap.found else ""
    present = f" (present: {', '.join(gap.present)})" if gap.present and len(gap.present) <= 20 else ""
    return Verdict.NOT_RUN, f"this run's {filename} has no `{gap.missing}`{under}{present}", False


def judge(q: Quantity, reference: Reference, tree: MetricsTree,
          pipeline: Callable[[str], bool] = in_pipeline) -> Outcome:
    """The verdict of one row against this run's metrics."""
    filename = q.metrics_file
    stage = reference.stage_of(filename) or filename
    document = tree.document(filename)
    note = (q.note,) if q.note else ()
    if document is None:
        return Outcome(Verdict.NOT_RUN, (missing_file(reference.stage_of(filename), filename, pipeline), *note),
                       None, stage)
    raw = lookup(document, q.key)
    here = number(raw) if raw is not MISSING else None
    holder = parent(document, q.key)
    backend = holder.get("backend") if isinstance(holder.get("backend"), str) else None
    produced_by = f"{stage} ({backend})" if backend else stage
    reasons: list[str] = []
    inside = False
    if here is None:
        verdict, why, library_missing = _missing_value(q, document, filename)
        reasons += [why, *note]
        if library_missing:
            produced_by = f"{stage} (no {q.paper_library})"
    else:
        inside = q.band.holds(q.value, here)
        verdict = Verdict.REPRODUCED if inside else Verdict.DIFFERS
        if not inside and not note and not q.sensitivity:  # a variant's own name says why it differs
            reasons.append(f"exact by construction, yet here {here:g} ≠ paper {q.value:g}" if q.band.exact else
                           f"outside the band{f' ({q.band.name})' if q.band.name else ''}: {q.band.why}")
        reasons += note
        failed = failures(document, q.key)
        if failed is not None and failed.rate > 0:
            reasons.append(f"{failed.describe()}; the value is over the completed ones")
        if q.paper_library and backend:
            library = _library_note(document, q.paper_library, backend)
            reasons += [library] if library else []
    if q.sensitivity and verdict is not Verdict.NOT_RUN:
        where = f": {'within' if inside else 'outside'} the band of the paper's model" if here is not None else ""
        reasons.insert(0, f"variant {q.sensitivity}{where}")
        verdict = Verdict.SENSITIVITY
    return Outcome(verdict, tuple(reasons), here, produced_by)


def collect(reference: Reference, tree: MetricsTree | Path,
            pipeline: Callable[[str], bool] = in_pipeline) -> pd.DataFrame:
    """One row per reference quantity: paper value, this run's value, ratio, band, verdict and its reasons
    (``tree``: the run's metrics, or the folder holding them)."""
    tree = tree if isinstance(tree, MetricsTree) else MetricsTree(tree)
    rows = []
    for q in reference.quantities:
        outcome = judge(q, reference, tree, pipeline)
        here = outcome.here
        rows.append({
            "id": q.id, "paper_id": q.paper, "quantity": f"{q.row} — {q.column}", "source": q.where,
            "paper": q.value, "here": here,
            "ratio": here / q.value if here is not None and q.value else None,
            "unit": q.unit, "band": q.band.describe(q.unit), "band_name": q.band.name, "verdict": outcome.verdict.value,
            "why": "; ".join(outcome.reasons), "produced_by": outcome.produced_by,
        })
    return pd.DataFrame(rows, columns=["id", "paper_id", "quantity", "source", "paper", "here", "ratio", "unit",
                                       "band", "band_name", "verdict", "why", "produced_by"])
