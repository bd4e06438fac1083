"""Stage ``case_sizes`` (PQ-CASE §IV-A, §V): byte-exact Table I payload columns, Fig. 1, resumption sizes."""

from __future__ import annotations

from dataclasses import replace

import matplotlib.pyplot as plt

from pqlab import framing, machine
from pqlab.case import algorithms, messages, size_tables
from pqlab.case.configurations import case_message_sizes, table1_config
from pqlab.figures.case_sizes import fig1_case_sizes
from pqlab.framing import FramingParams
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline.metrics.case_sizes import CaseSizesMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated

STAGE = "case_sizes"


def framing_facts(fr: FramingParams) -> dict:
    """§II-C: frames of a full 1232-byte datagram at one hop, and the datagram bytes a later fragment carries
    (with a mesh header beyond one hop, without at one hop)."""
    room = fr.max_psdu_bytes - fr.mac_overhead_bytes - fr.fragn_header_bytes
    return {"frames_per_full_datagram": len(framing.frame_psdus(fr.ip6_fragment_payload, fr, multi_hop=False)),
            "fragment_datagram_bytes": [room - framing.mesh_header_bytes(fr, multi_hop=True), room]}


def certificate_sizes(fields) -> dict:
    """The classical NOC and ICAC as encoded (the reference test vectors' sizes)."""
    classical = fields[fields["message"].str.contains(r"\(ECDSA-P256\)") & (fields["field"] == "certificate")]
    size = {kind: int(classical[classical["message"].str.startswith(f"responder {kind.upper()} ")]["bytes"].iloc[0])
            for kind in ("noc", "icac")}
    return size


def algorithm_sizes() -> dict:
    """The public key, signature and ciphertext sizes the size model uses (checked with real keys where a
    backend has the algorithm: real_material)."""
    out = {name: {"public_key": a.public_key, "signature": a.signature}
           for name, a in algorithms.SIGNATURES.items()}
    out |= {name: {"public_key": k.public_key, "ciphertext": k.ciphertext} for name, k in algorithms.KEMS.items()}
    return out


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Build every configuration's messages, tabulate, plot and write the outputs (byte-stable across runs)."""
    p, fr = settings.case_sizes, settings.framing
    paths.check_writable(paths.derived, paths.case_figs)
    configs = size_tables.configurations(p.configurations)
    table = size_tables.table1(configs, fr, settings.seed)
    fields = size_tables.breakdown(configs, settings.seed)
    resume = size_tables.resumption_table(p.resumption_key_exchanges)
    real = size_tables.real_material_check(configs, p.real_material, settings.seed)
    c1_768 = replace(table1_config("C1"), key_exchange="P-256+ML-KEM-768", name="C1-768")
    extra = {"text": {"C1_with_ML-KEM-768": case_message_sizes(c1_768)},
             "profile": settings.profile, "limit_octets": fr.max_app_payload,
             "framing": {"iphc_bytes": fr.iphc_bytes, "openthread_iphc_bytes": fr.openthread_iphc_bytes,
                         "matter_header_bytes": fr.matter_header_bytes} | framing_facts(fr),
             "certificates": certificate_sizes(fields), "algorithms": algorithm_sizes()}
    headline = validated(CaseSizesMetrics, size_tables.metrics(table, resume, real, extra)
                         | {"fit_limit": int(table["fits_limit"].sum()), "sigma1_random_octets": messages.RANDOM_OCTETS,
                            "chain_reference_octets": messages.CHAIN_REFERENCE_OCTETS})
    figure = fig1_case_sizes(table, fr.max_app_payload)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), stable=True)
    per_field = fields.pivot_table(index=["message", "field"], columns="config", values="bytes", sort=False)
    per_field = per_field[[c.name for c in configs]].astype("Int64").astype(object).reset_index().fillna("")
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.derived / "case_sizes.parquet", table, metadata)
        out.table(table, paths.case_figs / "table1_case_sizes")
        out.table(fields, paths.case_figs / "table1_case_breakdown", markdown=per_field)
        out.table(resume, paths.case_figs / "resumption_sizes")
        out.figure(figure, paths.case_figs / "fig1_case_sizes")
        out.metrics(paths.derived / "case_sizes_metrics.json", headline,
                    label=f"configs within {fr.max_app_payload} B", key="fit_limit", unit=f"of {len(table)}")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig1_case_sizes": figure},
                       tables={"table1_case_sizes": table, "table1_case_breakdown": fields,
                               "resumption_sizes": resume},
                       metrics=headline, files=out.written, data={"real_material": real, "per_field": per_field})
