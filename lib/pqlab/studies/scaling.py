"""Stage ``scaling`` (AMORT-V1 §V-E, §V-H): Table III, the scaling figure, isolation and re-keying, partition replay."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.amort.sizes import decompose
from pqlab.analysis import rekey_parts
from pqlab.analysis import scaling as analysis
from pqlab.experiments import isolation
from pqlab.figures.scaling import fig_scaling
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.scaling import ScalingMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "scaling"
RAW = registry.raw_spec(STAGE)
PROVENANCE = ("controller_path_requested", "controller_path", "controller_path_reason", "wire_format", "variant",
              "signature_backend")


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Table III, the checkpoint budget, isolation, re-keying parts and replay from the five raw files."""
    paths.check_writable(paths.derived, paths.amort_figs)
    (rounds, trials, counts, rekeying, replay), raw_metadata = raw_io.read_named(
        RAW, settings, paths, "rounds", "trials", "isolation", "rekey", "replay")
    parts = decompose(bytes.fromhex(raw_metadata["sample_report_hex"]),
                              int(trials["signature_octets"].iloc[0]), raw_metadata["wire_format"])
    table3 = analysis.summarise(trials, settings, parts)
    layouts, crossing = analysis.budget(parts, settings.scaling.size_budget_octets)
    iso, replay_summary = isolation.isolation_table(counts, rekeying), isolation.replay_table(replay)
    provenance = {key: raw_metadata[key] for key in PROVENANCE} | {"profile": settings.profile,
                                                                   "confidence": settings.scaling.confidence}
    headline = validated(ScalingMetrics, analysis.metrics(table3, parts, crossing, iso, replay_summary, provenance,
                                                          rekeying)
                         | {"cpu_model": raw_metadata["cpu_model"], "raw_samples": raw_provenance.source(raw_metadata)})
    rekey_table = rekey_parts.parts_table(rekeying)
    figure = fig_scaling(table3, crossing, raw_metadata["controller_path"], raw_metadata["cpu_model"])
    table = table3[list(analysis.TABLE3_COLUMNS)].rename(columns=analysis.TABLE3_COLUMNS)
    with OutputSet(paths, STAGE) as out:
        for frame, name in ((table, "table3_scaling"), (iso, "isolation"), (rekey_table, "rekey_parts"),
                            (replay_summary, "partition_replay"), (layouts, "checkpoint_budget")):
            out.table(frame, paths.amort_figs / name, markdown=analysis.rounded(frame))
        out.figure(figure, paths.amort_figs / "fig_scaling")
        out.metrics(paths.derived / "scaling_metrics.json", headline, label="attesting, 1 of 1000 out",
                    key="isolation.n1000.attesting_fraction", unit="fraction")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_scaling": figure},
                       tables={"table3_scaling": table, "isolation": iso, "partition_replay": replay_summary,
                               "checkpoint_budget": layouts, "rekey_parts": rekey_table},
                       metrics=headline, files=out.written,
                       data={"rounds": rounds, "trials": trials, "table3": table3, "rekey": rekeying,
                             "isolation": counts, "replay": replay, "decomposition": parts, "budget": crossing,
                             "metadata": raw_provenance.analysis_metadata(raw_metadata, RAW, settings)})


run = measuring.runner(STAGE, analyse)
