"""The markdown of REPORT.md: counts per kind and verdict, the claims that do not reproduce, the run, one table per
paper, the claims that depend on the library, the sensitivity rows, security beyond the paper, the papers' own
consistency, what differs and why, coverage."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from pqlab.report.consistency import VERDICTS as CONSISTENCY_VERDICTS
from pqlab.report.crosscheck import crosscheck_section
from pqlab.report.libraries import libraries_section
from pqlab.report.metrics import MetricsTree, describe_value, lookup_all
from pqlab.report.schema import BINOMIAL_CONFIDENCE, HARDWARE_TOLERANCE, Reference
from pqlab.report.security import security_section
from pqlab.report.verdicts import FINDINGS, VERDICT_ORDER, Verdict, in_pipeline, missing_file
from pqlab.stats import level

_KIND_MACHINE = {"simulation": "machine-independent (seeded simulation)", "model": "machine-independent (model)"}


def _legend(levels: str) -> str:
    """How each kind is judged; ``levels``: the estimates' interval levels in this run (the header lists them)."""
    return (
        "How each kind is judged. **exact** (bytes, counts, codes): equal to the paper at its printed precision; a "
        f"fraction of trials (\"150/150\") by its {level(BINOMIAL_CONFIDENCE)} binomial interval for the trials this "
        "run has. **claim**: the paper's statement, written as a predicate over this run's data, holds on that data "
        "(shown under *judged on*); a statement with a number is judged against that number (±25 %, or the printed "
        "precision of an order of magnitude). **estimate** (a model or simulation quantity): the paper's value lies "
        f"inside this run's interval at its stage's `confidence` ({levels}) — from this run's own samples "
        "(bootstrap, binomial, order statistics or Monte-Carlo spread) — widened by half a unit of the paper's last "
        "printed digit; an interval wider than ±25 % of the paper's value is **inconclusive**, not reproduced. "
        "**hardware** (a time, rate or memory figure of the paper's machine): divided by a reference operation "
        f"measured on both machines and compared within ×{HARDWARE_TOLERANCE[0]:g}–{HARDWARE_TOLERANCE[1]:g}, only "
        "when the row and its reference spend their time on the same resource (compiled code on the CPU, storage, a "
        "TPM, an interpreter) on both machines; otherwise it is **not judged**, only shown with its plain ratio. "
        "**setting** rows restate a value this project configures (trial and cycle counts, a generator's inputs): "
        "shown and checked, never counted. Every row carries its sample size n; a row over zero trials or over fewer "
        "cells than the paper's differs, and a value over completed runs differs when runs failed and the paper "
        "reports none. **measurement failed**: the study's own sanity checks caught a contradiction in the numbers "
        "the row reads. **not run here**: the stage has not run, or the paper's library is absent on this machine."
    )


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3g}"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def _judged_on(r: Any) -> str:
    """What a row was judged on, in a few words."""
    if r.kind == "estimate":
        parts = []
        if not pd.isna(r.ci_low):
            parts.append(f"{level(r.confidence)} CI {_fmt(r.ci_low)}–{_fmt(r.ci_high)}")
        if not pd.isna(r.ci_high_low):
            parts.append(f"high end {_fmt(r.ci_high_low)}–{_fmt(r.ci_high_high)}")
        if not pd.isna(r.n):
            parts.append(f"n = {_fmt(r.n)}")
        return "; ".join(parts) or "no interval"
    if r.kind == "hardware":
        n = f"; n = {_fmt(r.n)}" if not pd.isna(r.n) else ""
        return (f"normalised {r.normalised:.3g}" if not pd.isna(r.normalised) else "not normalised") + n
    n = f"; n = {_fmt(r.n)}" if not pd.isna(r.n) else ""
    if r.kind == "claim":
        return (r.data or "—") + n
    return (r.data + "; " if r.data else "") + "printed precision" + n


def _extras(r: Any) -> str:
    parts = []
    if not pd.isna(r.cells_here):
        parts.append(f"{int(r.cells_here)} of {int(r.cells_paper)} cells")
    if not pd.isna(r.failure_rate) and r.failure_rate > 0:
        parts.append(f"failed {r.failure_rate:.1%}")
    return " (" + ", ".join(parts) + ")" if parts else ""


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


def _provisional(reference: Reference, tree: MetricsTree) -> list[str]:
    """The simulation stages that ran on a profile other than the paper's: their estimates are provisional."""
    out = []
    for name, spec in reference.stages.items():
        document = tree.document(spec.metrics)
        if spec.kind == "simulation" and document is not None and document.get("profile") != "paper":
            out.append(f"{name} ({document.get('profile')})")
    return out


def _counts_table(table: pd.DataFrame, provisional: list[str] | None = None) -> list[str]:
    main = table[(table["table"] == "main") & (table["kind"].isin(FINDINGS))]
    verdicts = [v.value for v in VERDICT_ORDER]
    lines = ["| kind | " + " | ".join(verdicts) + " | rows |", "|---|" + "---:|" * (len(verdicts) + 1)]
    for kind in (*FINDINGS, "all"):
        rows = main if kind == "all" else main[main["kind"] == kind]
        counts = rows["verdict"].value_counts()
        cells = [str(int(counts.get(v, 0))) for v in verdicts]
        label = "**all findings**" if kind == "all" else kind
        if kind == "estimate" and provisional:
            label += " (provisional)"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {len(rows)} |")
    return lines


def _settings_line(rows: pd.DataFrame) -> str:
    settings = rows[(rows["table"] == "main") & (rows["kind"] == "setting")]
    if settings.empty:
        return "no setting rows"
    matches = int(settings["setting_matches"].fillna(False).astype(bool).sum())
    return (f"{len(settings)} setting rows apart ({matches} configured as the paper's, {len(settings) - matches} set "
            "otherwise by the profile)")


def _summary(reference: Reference, table: pd.DataFrame, consistency: pd.DataFrame,
             provisional: list[str] | None = None) -> list[str]:
    main = table[table["table"] == "main"]
    findings = main[main["kind"].isin(FINDINGS)]
    extra = table[table["table"] == "sensitivity"]
    per_paper = "; ".join(
        f"{info.title.split(':')[0]}: {int((findings['paper_id'] == key).sum())} findings "
        f"({_counts(findings[findings['paper_id'] == key]['verdict'])}), "
        f"{_settings_line(main[main['paper_id'] == key])}" for key, info in reference.papers.items())
    lines = ["## Verdicts at a glance", "",
             f"**{len(findings)} main rows that this run produced a value for**, one per published claim, each judged "
             "under this project's default model and parameters; the rows that restate a configured value "
             "(settings) are counted apart:", "", *_counts_table(table, provisional), "", per_paper + ".", ""]
    if provisional:
        lines += [f"**Provisional**: the simulation stages ran on a profile other than the paper's "
                  f"({', '.join(provisional)}); their estimates rest on fewer runs than the paper's and are "
                  "provisional here — the paper profile's counts are the ones to quote.", ""]
    if len(extra):
        lines += [f"{len(extra)} sensitivity rows (model variants and assumption sets: {_counts(extra['verdict'])}) "
                  "are listed in their own table below and never change a main verdict.", ""]
    if len(consistency):
        per = []
        for key, info in reference.papers.items():
            rows = consistency[consistency["paper_id"] == key]
            counts = rows["verdict"].value_counts()
            per.append(f"{info.title.split(':')[0]}: {len(rows)} checks, "
                       + ", ".join(f"{counts[v]} {v}" for v in CONSISTENCY_VERDICTS if v in counts))
        lines += ["The papers' own numbers (table below): " + "; ".join(per) + ".", ""]
    return lines


def _counts(verdicts: pd.Series) -> str:
    counts = verdicts.value_counts()
    return ", ".join(f"{counts[v.value]} {v.value}" for v in (*VERDICT_ORDER, Verdict.SETTING)
                     if v.value in counts) or "none"


def _not_reproduced(table: pd.DataFrame) -> list[str]:
    main = table[(table["table"] == "main")
                 & table["verdict"].isin([Verdict.DIFFERS.value, Verdict.FAILED.value])]
    lines = ["## Claims that do not reproduce here", ""]
    inconclusive = table[(table["table"] == "main") & (table["verdict"] == Verdict.INCONCLUSIVE.value)]
    if main.empty:
        return [*lines, "None: every main row that was judged reproduces.", ""]
    lines += [f"{len(main)} main rows differ or their measurement failed (claim — paper — here — why):", ""]
    for r in main.itertuples():
        here = r.data if r.kind == "claim" and r.data else r.here_text  # a claim: the data it was evaluated on
        lines.append(f"- **{_cell(r.id)}** ({_cell(r.where)}) {_cell(r.claim)} — paper {_cell(r.paper)} "
                     f"{_cell(r.unit)} — here {_cell(here)}{_cell(_extras(r))} — {_cell(r.why)}")
    if len(inconclusive):
        lines += ["", f"Inconclusive: {len(inconclusive)} main rows whose interval contains the paper's value but is "
                  "wider than ±25 % of it: " + ", ".join(inconclusive["id"]) + "."]
    not_run = table[(table["table"] == "main") & (table["verdict"] == Verdict.NOT_RUN.value)]
    if len(not_run):
        lines += ["", f"Not run here: {len(not_run)} main rows ("
                  + ", ".join(sorted(set(not_run["why"].str.split(";").str[0])))[:600] + ")."]
    return [*lines, ""]


def raw_source(block: object, kind: str) -> str:
    """Where a stage's raw samples were measured (its metrics' ``raw_samples`` block), for the header table."""
    if isinstance(block, dict) and block.get("machine"):
        load = block.get("load_average") or {}
        shown = " → ".join("/".join(str(x) for x in load[when]) for when in ("before", "after") if load.get(when))
        edited = block.get("hand_edited") or []
        return (f"host {block['machine']} ({block.get('cpu_model', 'unknown CPU')}), measured "
                f"{block.get('measured_utc', 'at an unknown time')}, seed {block.get('seed')}, profile "
                f"{block.get('profile')}, load average {shown or 'not recorded'}"
                + (f"; **EDITED BY HAND**: {', '.join(map(str, edited))}" if edited else ""))
    return "no raw samples (model)" if kind == "model" else "measured and analysed in one run (no raw-sample stage)"


def _header(reference: Reference, tree: MetricsTree, pipeline: Callable[[str], bool]) -> list[str]:
    lines = ["## This run", ""]
    profiles: dict[str, list[str]] = {}
    machines: dict[str, list[str]] = {}
    levels: dict[str, list[str]] = {}
    rows = ["| stage | kind | metrics file | profile | sample sizes | machine | raw samples from |",
            "|---|---|---|---|---|---|---|"]
    for name, spec in reference.stages.items():
        document = tree.document(spec.metrics)
        if document is None:
            why = missing_file(name, spec.metrics, pipeline)
            rows.append(f"| `{name}` | {spec.kind} | `{spec.metrics}` | not run | {_cell(why)} | not run | not run |")
            continue
        profile = document.get("profile")
        profile_text = str(profile) if profile else "not recorded"
        profiles.setdefault(profile_text, []).append(name)
        if isinstance(document.get("confidence"), float):
            levels.setdefault(level(document["confidence"]), []).append(name)
        machine = _KIND_MACHINE.get(spec.kind)
        if machine is None:
            machine = str(document.get("cpu_model") or "not recorded")
            machines.setdefault(machine, []).append(name)
            details = document.get("machine")
            if isinstance(details, dict) and details:
                machine += f" ({describe_value(details)})"
        rows.append(f"| `{name}` | {spec.kind} | `{spec.metrics}` | {_cell(profile_text)} "
                    f"| {_cell(_samples(reference, tree, name))} | {_cell(machine)} "
                    f"| {_cell(raw_source(document.get('raw_samples'), spec.kind))} |")
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
              "`params/paper_reference.yaml` and are used only here; `paper_figs/report_rows.csv` holds every row "
              "in machine-readable form.", "", *rows, "",
              _legend("; ".join(f"{shown}: {', '.join(names)}" for shown, names in sorted(levels.items()))
                      or "no stage with intervals has run"), ""]
    return lines


def _paper_tables(reference: Reference, table: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    main = table[table["table"] == "main"]
    for key, info in reference.papers.items():
        rows = main[main["paper_id"] == key]
        if rows.empty:
            continue
        lines += [f"## {info.title}", "", f"Source: {info.source}. Paper's machine: {info.machine}.", "",
                  f"{len(rows)} main rows: {_counts(rows['verdict'])}.", "",
                  "| id | where | claim | kind | paper | here | unit | judged on | verdict | why | produced by |",
                  "|---|---|---|---|---:|---:|---|---|---|---|---|"]
        for r in rows.itertuples():
            verdict = r.verdict if r.verdict == Verdict.REPRODUCED.value else f"**{r.verdict}**"
            if r.verdict == Verdict.SETTING.value:
                verdict = "setting (as the paper's)" if r.setting_matches else "setting (set otherwise)"
            lines.append(f"| {_cell(r.id)} | {_cell(r.where)} | {_cell(r.claim)} | {r.kind} | {_cell(r.paper)} "
                         f"| {_cell(r.here_text)}{_cell(_extras(r))} | {_cell(r.unit)} | {_cell(_judged_on(r))} "
                         f"| {verdict} | {_cell(r.why or '—')} | {_cell(r.produced_by)} |")
        lines.append("")
    return lines


def _sensitivity(table: pd.DataFrame) -> list[str]:
    extra = table[table["table"] == "sensitivity"]
    if extra.empty:
        return []
    verdicts = dict(zip(table["id"], table["verdict"], strict=True))
    lines = ["## Sensitivity rows: model variants and assumption sets", "",
             "Each row is the same claim under a deliberately different model or assumption, beside its main row's "
             "verdict; none changes a main verdict or the counts above.", "",
             "| id | main row (its verdict) | variant | claim | paper | here | judged on | verdict vs the paper "
             "| why |", "|---|---|---|---|---:|---:|---|---|---|"]
    for r in extra.itertuples():
        lines.append(f"| {_cell(r.id)} | {_cell(r.main)} ({verdicts.get(r.main, '?')}) | {_cell(r.sensitivity)} "
                     f"| {_cell(r.claim)} | {_cell(r.paper)} | {_cell(r.here_text)}{_cell(_extras(r))} "
                     f"| {_cell(_judged_on(r))} | {r.verdict} | {_cell(r.why or '—')} |")
    return [*lines, ""]


def _consistency(reference: Reference, consistency: pd.DataFrame) -> list[str]:
    if consistency.empty:
        return []
    lines = ["## The papers' own consistency", "",
             "Checks that use only the papers' published numbers (or, where said, a bound this project computes), "
             "each printed input taken with its rounding: **inconsistent** means no rounding of the inputs gives the "
             "printed result or satisfies the condition. Every printed number of both papers that follows from other "
             "printed numbers (totals, ratios, shares, throughputs, per-unit costs, bounds against their floors) is "
             "recomputed here. **model bound not met** is a check against a bound this project's model computes: "
             "the paper against that model, not an inconsistency of its numbers alone.", ""]
    for key, info in reference.papers.items():
        rows = consistency[consistency["paper_id"] == key]
        bad = rows[rows["verdict"] == "inconsistent"]
        lines.append(f"- {info.title.split(':')[0]}: {len(rows)} checks, {len(bad)} inconsistent"
                     + (f" ({', '.join(bad['id'])})" if len(bad) else "") + ".")
    lines += ["", "| id | paper | where | check | arithmetic | verdict | note |", "|---|---|---|---|---|---|---|"]
    for r in consistency.itertuples():
        title = reference.papers[r.paper_id].title.split(":")[0]
        verdict = f"**{r.verdict}**" if r.verdict in ("inconsistent", "model bound not met") else r.verdict
        lines.append(f"| {_cell(r.id)} | {_cell(title)} | {_cell(r.where)} | {_cell(r.check)} "
                     f"| {_cell(r.arithmetic)} | {verdict} | {_cell(r.note or '—')} |")
    return [*lines, ""]


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
             "Each item's status comes from its main rows: **reproduced** only when every one is; otherwise "
             "**partial: a of b** with the rows that are not. Outputs missing on disk are named.", ""]
    for key, info in reference.papers.items():
        rows = coverage[coverage["paper_id"] == key]
        if rows.empty:
            continue
        counts = rows["status"].map(lambda s: "partial" if s.startswith("partial") else s).value_counts()
        lines += [f"### {info.title.split(':')[0]}", "",
                  ", ".join(f"{counts[s]} {s}" for s in sorted(counts.index)) + ".", "",
                  "| item | what | stage | outputs | status | its rows |", "|---|---|---|---|---|---|"]
        for r in rows.itertuples():
            outputs = ", ".join(f"`{o}`" + (" (missing)" if o in r.missing_outputs else "") for o in r.outputs)
            stage = "none" if r.stage is None or pd.isna(r.stage) else f"`{r.stage}`"
            detail = r.detail + (f"; {r.note}" if r.note else "")
            lines.append(f"| {_cell(r.item)} | {_cell(r.what)} | {stage} | {_cell(outputs or 'none')} "
                         f"| **{_cell(r.status)}** | {_cell(detail)} |")
        lines.append("")
    if reference.cited:
        lines += ["Quoted from other work (not results of these papers, so no rows): " + "; ".join(
            f"{reference.papers[c.paper].title.split(':')[0]} {c.where}: {c.what}" for c in reference.cited) + ".",
                  ""]
    return lines


def render(reference: Reference, table: pd.DataFrame, tree: MetricsTree, coverage: pd.DataFrame | None = None,
           consistency: pd.DataFrame | None = None, pipeline: Callable[[str], bool] = in_pipeline) -> str:
    """The markdown text of REPORT.md: no timestamp or commit, so the same inputs give the same bytes."""
    consistency = consistency if consistency is not None else pd.DataFrame(columns=["verdict"])
    lines = ["# pqlab: paper vs this run", "", *_summary(reference, table, consistency, _provisional(reference, tree)),
             *_not_reproduced(table),
             *_header(reference, tree, pipeline), *_paper_tables(reference, table),
             *libraries_section(reference, tree), *_sensitivity(table), *security_section(tree),
             *_consistency(reference, consistency), *_differences(reference, tree, pipeline),
             *crosscheck_section(reference, tree, pipeline)]
    if coverage is not None:
        lines += _coverage(reference, coverage)
    return "\n".join(lines).rstrip("\n") + "\n"
