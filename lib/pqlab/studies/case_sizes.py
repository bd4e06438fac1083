"""Stage ``case_sizes`` (PQ-CASE §IV-A, §V): byte-exact Table I payload columns, Fig. 1, resumption sizes."""

from __future__ import annotations

from dataclasses import replace

import matplotlib.pyplot as plt

from pqlab import machine
from pqlab.case import size_tables
from pqlab.case.configurations import case_message_sizes, table1_config
from pqlab.figures.case_sizes import fig1_case_sizes
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult

STAGE = "case_sizes"


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
                         "matter_header_bytes": fr.matter_header_bytes}}
    headline = size_tables.metrics(table, resume, real, extra)
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
        out.metrics(paths.derived / "case_sizes_metrics.json", headline | {"fit_limit": int(table["fits_limit"].sum())},
                    label=f"configs within {fr.max_app_payload} B", key="fit_limit", unit=f"of {len(table)}")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig1_case_sizes": figure},
                       tables={"table1_case_sizes": table, "table1_case_breakdown": fields,
                               "resumption_sizes": resume},
                       metrics=headline, files=out.written, data={"real_material": real, "per_field": per_field})
