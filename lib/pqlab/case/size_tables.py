"""The CASE size tables: Table I payload columns, per-field breakdown, resumption sizes, frames at one hop."""

from __future__ import annotations

import pandas as pd

from pqlab import framing
from pqlab.case import algorithms
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
from pqlab.framing import FramingParams

MESSAGES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


def configurations(names: tuple[str, ...]) -> list[CaseConfig]:
    """The named Table I configurations, or a ParamsError naming the unknown one."""
    try:
        return [table1_config(name) for name in names]
    except CaseConfigError as exc:
        known = ", ".join(c.name for c in TABLE1)
        raise ParamsError(f"{exc}; known: {known}", field="case_sizes.configurations") from exc


def table1(configs: list[CaseConfig], fr: FramingParams, seed: int) -> pd.DataFrame:
    """One row per configuration: payload bytes per message and in total, the limit check, frames at one hop.

    Frames use the shared framing model (the Thread simulator's, by construction); ``frames_total_openthread``
    is the same count with OpenThread's mesh-local IPHC size and 8-byte fragment rounding.
    """
    limit = fr.max_app_payload
    rows = []
    for config in configs:
        sizes = case_message_sizes(config, SizedMaterial(seed))
        frames = {m: framing.frames_for_message(sizes[m], fr) for m in MESSAGES}
        openthread = sum(framing.frames_for_message(sizes[m], fr, rounding=True, iphc_bytes=fr.openthread_iphc_bytes)
                         for m in MESSAGES)
        rows.append({
            "config": config.name, "group": config.group, "key_exchange": config.key_exchange,
            "chain": config.chain_label, "auth": config.auth, "cached": config.cached,
            **{m: sizes[m] for m in MESSAGES}, "Total": sizes["Total"],
            "largest": max(sizes[m] for m in MESSAGES),
            "over_limit": sum(sizes[m] > limit for m in MESSAGES),
            "fits_limit": all(sizes[m] <= limit for m in MESSAGES),
            **{f"frames_{m}": frames[m] for m in MESSAGES}, "frames_total": sum(frames.values()),
            "frames_total_openthread": openthread,
        })
    return pd.DataFrame(rows)


def breakdown(configs: list[CaseConfig], seed: int) -> pd.DataFrame:
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
        "frames": {r["config"]: {"total": int(r["frames_total"]), "total_openthread": int(r["frames_total_openthread"])}
                   | {m: int(r[f"frames_{m}"]) for m in MESSAGES} for r in table.to_dict("records")},
        "resumption": resume,
        "real_material": {r["config"]: bool(r["identical_sizes"]) for r in real.to_dict("records")},
        "algorithm_sizes_source": algorithms.SOURCE,
    } | extra
