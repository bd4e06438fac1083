"""Stage ``device_origin`` (AMORT-V1 §V-F, RQ2): Fig. 5, one vs two tags, the prover's extra work, from raw samples."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import device_origin as analysis
from pqlab.figures.device_origin import fig5_auditor
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.device_origin import DeviceOriginMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "device_origin"
RAW = registry.raw_spec(STAGE)
PROVENANCE = ("controller_path_requested", "controller_path", "controller_path_reason", "device_path", "auditor_path",
              "profile")


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """The auditor table, one vs two tags, Fig. 5 and the metrics from the five raw files."""
    paths.check_writable(paths.derived, paths.amort_figs)
    (auditor, delays, tags, samples, builds), raw_metadata = raw_io.read_named(
        RAW, settings, paths, "auditor", "delays", "tags", "prover", "chain_setup")
    metadata = raw_provenance.analysis_metadata(raw_metadata, RAW, settings)
    rate = settings.device_origin.report_rate_hz
    table = analysis.auditor_table(auditor, analysis.delay_summary(delays, rate), raw_metadata["components"])
    comparison = analysis.tags_table(tags, samples, builds)
    provenance = {key: raw_metadata[key] for key in PROVENANCE} | {"profile": settings.profile}
    counted = {"auditor_trials": int(auditor.groupby("k")["trial"].nunique().min()) if len(auditor) else 0,
               "controller_trials": int(tags["trial"].nunique()), "prover_trials": int(samples["trial"].nunique()),
               "prover_reports": len(samples)}
    headline = validated(DeviceOriginMetrics, analysis.metrics(table, comparison, provenance, rate)
                         | {"samples": counted, "cpu_model": raw_metadata["cpu_model"],
                            "raw_samples": raw_provenance.source(raw_metadata)})
    figure = fig5_auditor(auditor, raw_metadata["cpu_model"])
    with OutputSet(paths, STAGE) as out:
        out.table(table, paths.amort_figs / "device_origin_auditor", markdown=table.round(4))
        out.table(comparison, paths.amort_figs / "device_origin_tags", markdown=comparison.round(4))
        out.figure(figure, paths.amort_figs / "fig5_auditor")
        out.metrics(paths.derived / "device_origin_metrics.json", headline, label="in-order verify incl. MAC",
                    key="in_order_with_mac_us", unit="us")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig5_auditor": figure},
                       tables={"device_origin_auditor": table, "device_origin_tags": comparison},
                       metrics=headline, files=out.written,
                       data={"auditor": auditor, "delays": delays, "tags": tags, "prover": samples,
                             "chain_setup": builds, "metadata": metadata})


run = measuring.runner(STAGE, analyse)
