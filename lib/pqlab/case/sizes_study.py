"""Run the CASE size study: Table I payload columns, per-field breakdown, Fig. 1, resumption sizes, frame counts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import io, machine
from pqlab.case import algorithms, framing
from pqlab.case.configurations import (
    TABLE1,
    CaseConfig,
    CaseConfigError,
    case_message_sizes,
    handshake,
    resumption_sizes,
    table1_config,
)
from pqlab.case.material import RealMaterial, SizedMaterial
from pqlab.errors import ParamsError
from pqlab.figures.case import fig1_case_sizes
from pqlab.figures.style import save
from pqlab.params import CaseFramingParams, StudyParams
from pqlab.paths import ProjectPaths

MESSAGES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


@dataclass
class CaseSizesResult:
    """Everything the study produced, for the notebook to show."""

    table1: pd.DataFrame
    breakdown: pd.DataFrame
    resumption: pd.DataFrame
    real_material: pd.DataFrame
    metrics: dict
    figure: plt.Figure
    written: list[Path]


def _framing(p: CaseFramingParams) -> framing.Framing:
    return framing.Framing(p.mac_payload_octets, p.iphc_octets, p.mesh_header_octets, p.matter_header_octets)


def configurations(names: tuple[str, ...]) -> list[CaseConfig]:
    """The named Table I configurations, or a ParamsError naming the unknown one."""
    try:
        return [table1_config(name) for name in names]
    except CaseConfigError as exc:
        known = ", ".join(c.name for c in TABLE1)
        raise ParamsError(f"{exc}; known: {known}", field="case_sizes.configurations") from exc


def table1(configs: list[CaseConfig], limit: int, frame_model: framing.Framing, seed: int = 0) -> pd.DataFrame:
    """One row per configuration: payload bytes per message and in total, the limit check, frames at one hop."""
    rows = []
    for config in configs:
        sizes = case_message_sizes(config, SizedMaterial(seed))
        frames = {m: framing.frames_for_message(sizes[m], frame_model) for m in MESSAGES}
        rows.append({
            "config": config.name, "group": config.group, "key_exchange": config.key_exchange,
            "chain": config.chain_label, "auth": config.auth, "cached": config.cached,
            **{m: sizes[m] for m in MESSAGES}, "Total": sizes["Total"],
            "largest": max(sizes[m] for m in MESSAGES),
            "over_limit": sum(sizes[m] > limit for m in MESSAGES),
            "fits_limit": all(sizes[m] <= limit for m in MESSAGES),
            **{f"frames_{m}": frames[m] for m in MESSAGES}, "frames_total": sum(frames.values()),
        })
    return pd.DataFrame(rows)


def breakdown(configs: list[CaseConfig], seed: int = 0) -> pd.DataFrame:
    """Bytes per field of every message (from the encoder), so any size difference names its field."""
    rows = []
    for config in configs:
        hs = handshake(config, SizedMaterial(seed))
        for message in hs.messages:
            for name, octets in message.fields.items():
                rows.append({"config": config.name, "message": message.name, "field": name, "bytes": octets})
        for role, chain in (("responder", hs.responder_chain), ("initiator", hs.initiator_chain)):
            for kind, cert in (("NOC", chain.noc), ("ICAC", chain.icac)):
                if cert is not None:
                    rows.append({"config": config.name, "message": f"{role} {kind} ({cert.algorithm})",
                                 "field": "certificate", "bytes": len(cert)})
    return pd.DataFrame(rows)


def resumption_table(key_exchanges: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for kex in key_exchanges:
        config = CaseConfig(key_exchange=kex, name=f"resume-{kex}")
        for with_share in (True, False):
            sizes = resumption_sizes(config, with_share)
            rows.append({"key_exchange": kex, "ephemeral_share": with_share, **sizes})
    return pd.DataFrame(rows)


def real_material_check(configs: list[CaseConfig], names: tuple[str, ...], seed: int) -> pd.DataFrame:
    """Rebuild configurations with real keys, signatures and encapsulations; sizes must equal the sized build."""
    rows = []
    for config in (c for c in configs if c.name in names):
        sized = case_message_sizes(config, SizedMaterial(seed))
        real = case_message_sizes(config, RealMaterial(seed))
        rows.append({"config": config.name, **{f"real_{m}": real[m] for m in (*MESSAGES, "Total")},
                     "identical_sizes": real == sized})
    return pd.DataFrame(rows)


def _markdown(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False) + "\n"


def metrics(table: pd.DataFrame, resumption: pd.DataFrame, real: pd.DataFrame, extra: dict) -> dict:
    """The metrics JSON that REPORT.md reads."""
    resume: dict = {}
    for row in resumption.to_dict("records"):
        key = "with_share" if row["ephemeral_share"] else "without_share"
        resume.setdefault(row["key_exchange"], {})[key] = {k: int(row[k]) for k in
                                                           ("Sigma1", "Sigma2Resume", "StatusReport", "Total")}
    return {
        "table1": {r["config"]: {k: int(r[k]) for k in (*MESSAGES, "Total", "largest", "over_limit")}
                   | {"fits_limit": bool(r["fits_limit"])} for r in table.to_dict("records")},
        "frames": {r["config"]: {"total": int(r["frames_total"])} | {m: int(r[f"frames_{m}"]) for m in MESSAGES}
                   for r in table.to_dict("records")},
        "resumption": resume,
        "real_material": {r["config"]: bool(r["identical_sizes"]) for r in real.to_dict("records")},
        "algorithm_sizes_source": algorithms.SOURCE,
    } | extra


def run(settings: StudyParams, paths: ProjectPaths) -> CaseSizesResult:
    """Build every configuration's messages, tabulate, plot and write the outputs."""
    p = settings.case_sizes
    paths.check_writable(paths.derived, paths.case_figs)
    configs = configurations(p.configurations)
    frame_model = _framing(p.framing)
    table = table1(configs, p.limit_octets, frame_model, settings.seed)
    fields = breakdown(configs, settings.seed)
    resume = resumption_table(p.resumption_key_exchanges)
    real = real_material_check(configs, p.real_material, settings.seed)
    c1_768 = replace(table1_config("C1"), key_exchange="P-256+ML-KEM-768", name="C1-768")
    extra = {"text": {"C1_with_ML-KEM-768": case_message_sizes(c1_768)},
             "profile": settings.profile, "limit_octets": p.limit_octets}  # sizes do not depend on the machine
    headline = metrics(table, resume, real, extra)
    figure = fig1_case_sizes(table, p.limit_octets)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"))
    per_field = fields.pivot_table(index=["message", "field"], columns="config", values="bytes", sort=False)
    per_field = per_field[[c.name for c in configs]].astype("Int64").astype(object).reset_index()
    written = [
        io.write_parquet(paths.derived / "case_sizes.parquet", table, metadata),
        io.write_text(paths.case_figs / "table1_case_sizes.csv", table.to_csv(index=False)),
        io.write_text(paths.case_figs / "table1_case_sizes.md", _markdown(table)),
        io.write_text(paths.case_figs / "table1_case_breakdown.csv", fields.to_csv(index=False)),
        io.write_text(paths.case_figs / "table1_case_breakdown.md", _markdown(per_field.fillna(""))),
        io.write_text(paths.case_figs / "resumption_sizes.csv", resume.to_csv(index=False)),
        io.write_text(paths.case_figs / "resumption_sizes.md", _markdown(resume)),
        *save(figure, paths.case_figs / "fig1_case_sizes"),
        io.write_json(paths.derived / "case_sizes_metrics.json", headline),
    ]
    plt.close(figure)
    return CaseSizesResult(table, fields, resume, real, headline, figure, written)
