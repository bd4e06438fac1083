"""The markdown of REPORT.md: the run's header, one verdict table per paper, what differs and why, coverage."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from pqlab.report.coverage import VERDICT_ORDER
from pqlab.report.metrics import MetricsTree, describe_value, lookup_all
from pqlab.report.schema import Reference
from pqlab.report.verdicts import Verdict, in_pipeline, missing_file

_KIND_MACHINE = {"simulation": "machine-independent (seeded simulation)", "model": "machine-independent (model)"}
_LEGEND = (
    "**reproduced**: this run's value is inside the row's band · **differs**: outside it (or no value), the reason "
    "beside it · **not run here**: this run has no value, and why · **sensitivity**: a deliberately different model "
    "variant, shown beside the paper's model, never a mismatch. Each row's band is one of the named bands below "
    "(`params/paper_reference.yaml`): *exact* for quantities exact by construction, ×lo–hi for here/paper, ±x for an "
    "absolute tolerance in the row's unit."
)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "no value"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def _counts(verdicts: pd.Series) -> str:
    counts = verdicts.value_counts()
    return " · ".join(f"{counts[v.value]} {v.value}" for v in VERDICT_ORDER if v.value in counts)


def _samples(reference: Reference, tree: MetricsTree, stage: str) -> str:
    spec = reference.stages[stage]
    document = tree.document(spec.metrics)
    parts = []
    for label, key in spec.samples.items():
        values = [v for v in lookup_all(document, key) if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not values:
            parts.append(f"{label}: not in the metrics")
        elif min(values) == max(values):
            parts.append(f"{label}: {min(values):,g}")
        else:
            parts.append(f"{label}: {min(values):,g}–{max(values):,g}")
    if parts:
        return "; ".join(parts)
    return "exact (no sampling)" if spec.kind == "model" else "not recorded in the metrics"


def _header(reference: Reference, tree: MetricsTree, table: pd.DataFrame, pipeline: Callable[[str], bool]) -> list[str]:
    lines = ["## This run", ""]
    profiles: dict[str, list[str]] = {}
    machines: dict[str, list[str]] = {}
    rows = ["| stage | kind | metrics file | profile | sample sizes | machine |", "|---|---|---|---|---|---|"]
    for name, spec in reference.stages.items():
        document = tree.document(spec.metrics)
        if document is None:
            why = missing_file(name, spec.metrics, pipeline)
            rows.append(f"| `{name}` | {spec.kind} | `{spec.metrics}` | not run | {_cell(why)} | not run |")
            continue
        profile = document.get("profile")
        profile_text = str(profile) if profile else "not recorded"
        profiles.setdefault(profile_text, []).append(name)
        machine = _KIND_MACHINE.get(spec.kind)
        if machine is None:
            machine = str(document.get("cpu_model") or "not recorded")
            machines.setdefault(machine, []).append(name)
            details = document.get("machine")
            if isinstance(details, dict) and details:
                machine += f" ({describe_value(details)})"
        rows.append(f"| `{name}` | {spec.kind} | `{spec.metrics}` | {_cell(profile_text)} "
                    f"| {_cell(_samples(reference, tree, name))} | {_cell(machine)} |")
    if not profiles:
        lines.append("Profile: **no stage has run** (no metrics files under `data/derived/`).")
    elif len(profiles) == 1:
        lines.append(f"Profile: **{next(iter(profiles))}** (every stage that ran, read from its metrics file).")
    else:
        mixed = "; ".join(f"{p}: {', '.join(names)}" for p, names in sorted(profiles.items()))
        lines.append(f"Profile: **mixed** — {mixed}. Sample sizes differ between stages.")
    if machines:
        lines.append("Machine of the measured stages: " + "; ".join(
            f"**{m}** ({', '.join(names)})" for m, names in sorted(machines.items())) + ".")
    else:
        lines.append("Machine: no measured stage has run.")
    lines += ["When, and from which commit, this report was built: `data/derived/report_run.json` (kept out of this "
              "file so that the same metrics give the same bytes). Published values come from "
              "`params/paper_reference.yaml` and are used only here.", "",
              f"**{len(table)} rows**: {_counts(table['verdict'])}.", "", *rows, "", _LEGEND, "",
              *_bands(reference, table)]
    return lines


def _bands(reference: Reference, table: pd.DataFrame) -> list[str]:
    if not reference.bands:
        return []
    lines = ["### Bands", "", "| band | rule | rows | why this tolerance |", "|---|---|---:|---|"]
    for name, band in reference.bands.items():
        used = int(table["band_name"].eq(name).sum()) if "band_name" in table else 0
        lines.append(f"| {name} | {band.rule()} | {used} | {_cell(band.why or 'exact by construction')} |")
    return [*lines, ""]


def _paper_tables(reference: Reference, table: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    for key, info in reference.papers.items():
        rows = table[table["paper_id"] == key]
        if rows.empty:
            continue
        lines += [f"## {info.title}", "", f"Source: {info.source}. Paper's machine: {info.machine}.", "",
                  f"{len(rows)} rows: {_counts(rows['verdict'])}.", "",
                  "| quantity | source | paper | here | here/paper | unit | band | verdict | why | produced by |",
                  "|---|---|---:|---:|---:|---|---|---|---|---|"]
        for r in rows.itertuples():
            ratio = "—" if r.ratio is None or pd.isna(r.ratio) else f"{r.ratio:.3g}×"
            if r.here is None or pd.isna(r.here):
                ratio = "no value"
            verdict = f"**{r.verdict}**" if r.verdict != Verdict.REPRODUCED.value else r.verdict
            lines.append(f"| {_cell(r.quantity)} | {_cell(r.source)} | {_fmt(r.paper)} | {_fmt(r.here)} | {ratio} "
                         f"| {_cell(r.unit)} | {_cell(r.band)} | {verdict} | {_cell(r.why or '—')} "
                         f"| {_cell(r.produced_by)} |")
        lines.append("")
    return lines


def _differences(reference: Reference, tree: MetricsTree, pipeline: Callable[[str], bool]) -> list[str]:
    if not reference.differences:
        return []
    lines = ["## What differs and why", ""]
    for d in reference.differences:
        lines.append(f"- **{d.topic}.** Paper: {d.paper} Here: {d.here}")
        shown: set[str] = set()
        for evidence in d.evidence:
            text = tree.evidence(evidence, lambda f: missing_file(reference.stage_of(f), f, pipeline))
            if text not in shown:  # a missing file is said once, not once per key
                lines.append(f"  - {text}")
                shown.add(text)
    lines.append("")
    return lines


def _coverage(reference: Reference, coverage: pd.DataFrame) -> list[str]:
    if coverage.empty:
        return []
    lines = ["## Coverage: every table and figure of both papers", "",
             "Each item of each paper, the stage and output files that reproduce it, and whether this run wrote "
             "them (checked on disk when the report was built). **open** = no stage in this pipeline yet.", ""]
    for key, info in reference.papers.items():
        rows = coverage[coverage["paper_id"] == key]
        if rows.empty:
            continue
        counts = rows["status"].value_counts()
        lines += [f"### {info.title.split(':')[0]}", "",
                  ", ".join(f"{counts[s]} {s}" for s in sorted(counts.index)) + ".", "",
                  "| item | what | stage | outputs | status | rows checked |", "|---|---|---|---|---|---|"]
        for r in rows.itertuples():
            outputs = ", ".join(f"`{o}`" for o in r.outputs) or "none"
            state = f"**{r.status}**" + (f": {r.detail}" if r.detail else "")
            stage = "none" if r.stage is None or pd.isna(r.stage) else f"`{r.stage}`"
            lines.append(f"| {_cell(r.item)} | {_cell(r.what)} | {stage} "
                         f"| {_cell(outputs)} | {_cell(state)} | {_cell(r.rows or 'no rows')} |")
        lines.append("")
    return lines


def render(reference: Reference, table: pd.DataFrame, tree: MetricsTree, coverage: pd.DataFrame | None = None,
           pipeline: Callable[[str], bool] = in_pipeline) -> str:
    """The markdown text of REPORT.md: no timestamp or commit, so the same inputs give the same bytes."""
    lines = ["# pqlab: paper vs this run", "", *_header(reference, tree, table, pipeline),
             *_paper_tables(reference, table), *_differences(reference, tree, pipeline)]
    if coverage is not None:
        lines += _coverage(reference, coverage)
    return "\n".join(lines).rstrip("\n") + "\n"

