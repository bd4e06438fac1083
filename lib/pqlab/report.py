"""REPORT.md's content: every headline quantity, the paper's value beside this run's (no I/O but reading)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from pqlab import machine
from pqlab.errors import ParamsError

# Backends whose name differs from how the paper names its library but that are the same code.
_SAME_LIBRARY = {"hashlib": "OpenSSL (C)"}


class PaperInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str
    source: str
    machine: str


class Quantity(BaseModel):
    """One published value and where this run's counterpart is stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    paper: str
    where: str
    row: str
    column: str
    value: float
    unit: str
    metric: str
    paper_library: str | None = None
    note: str | None = None


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    papers: dict[str, PaperInfo]
    quantities: list[Quantity]


def load_reference(path: Path) -> Reference:
    """Read and validate ``params/paper_reference.yaml``."""
    try:
        reference = Reference.model_validate(yaml.safe_load(path.read_text()))
    except (OSError, yaml.YAMLError) as exc:
        raise ParamsError(f"cannot read: {exc}", field=str(path)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ParamsError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}", field=str(path)) from exc
    unknown = {q.paper for q in reference.quantities} - set(reference.papers)
    if unknown:
        raise ParamsError(f"quantities name unknown papers {sorted(unknown)}", field=str(path))
    return reference


def _lookup(document: dict[str, Any], dotted: str) -> Any:
    node: Any = document
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _metric_parent(document: dict[str, Any], dotted: str) -> dict[str, Any]:
    parent = _lookup(document, dotted.rsplit(".", 1)[0]) if "." in dotted else document
    return parent if isinstance(parent, dict) else {}


def collect(reference: Reference, derived: Path) -> pd.DataFrame:
    """One row per reference quantity with this run's value (None where the metrics hold no value for it)."""
    documents: dict[str, dict[str, Any] | None] = {}
    rows = []
    for q in reference.quantities:
        filename, _, key = q.metric.partition(":")
        if filename not in documents:
            path = derived / filename
            documents[filename] = json.loads(path.read_text()) if path.exists() else None
        document = documents[filename]
        here = _lookup(document, key) if document is not None else None
        notes = [q.note] if q.note else []
        if document is None:
            notes.append(f"not run yet ({filename} missing)")
        elif here is None:
            notes.append("no value in this run's metrics")
        parent = _metric_parent(document or {}, key)
        backend = parent.get("backend")
        if here is not None and q.paper_library and backend and _SAME_LIBRARY.get(backend, backend) != q.paper_library:
            notes.append(f"library differs: paper {q.paper_library}, here {backend}")
        here_value = float(here) if isinstance(here, (int, float)) else None
        rows.append({
            "paper_id": q.paper, "quantity": f"{q.row} — {q.column}", "source": q.where,
            "paper": q.value, "here": here_value,
            "ratio": here_value / q.value if here_value is not None and q.value else None,
            "unit": q.unit, "machine": (document or {}).get("cpu_model"), "note": "; ".join(notes),
        })
    return pd.DataFrame(rows)


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def render(reference: Reference, table: pd.DataFrame) -> str:
    """The markdown text of REPORT.md (no timestamp or commit: the same inputs give the same bytes)."""
    lines = [
        "# pqlab: paper vs this run",
        "",
        f"Built on **{machine.cpu_model()}**; when and from which commit: `data/derived/report_run.json`. "
        "Ratio = here / paper. Published values come from `params/paper_reference.yaml` and are used only here.",
        "",
    ]
    for key, info in reference.papers.items():
        rows = table[table["paper_id"] == key]
        if rows.empty:
            continue
        lines += [f"## {info.title}", "", f"Source: {info.source}. Paper's machine: {info.machine}.", "",
                  "| quantity | source | paper | here | ratio | unit | machine | note |",
                  "|---|---|---:|---:|---:|---|---|---|"]
        for r in rows.itertuples():
            ratio = "—" if r.ratio is None or pd.isna(r.ratio) else f"{r.ratio:.3g}×"
            lines.append(f"| {r.quantity} | {r.source} | {_fmt(r.paper)} | {_fmt(r.here)} | {ratio} | {r.unit} "
                         f"| {'—' if pd.isna(r.machine) else r.machine} | {r.note} |")
        lines.append("")
    return "\n".join(lines)
