"""Stage ``recovery`` (AMORT-V1 §IV-E, §V-H): restart and rollback with a real TPM 2.0 — Table IV, restart loss,
crash injection around the counter increment, the cost of one reservation and the window sizing, from the raw
samples of ``measure_recovery``."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import recovery as analysis
from pqlab.figures.recovery import fig_recovery
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.recovery import RecoveryMetrics
from pqlab.pipeline.outputs import OutputSet, rounded
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "recovery"
RAW = registry.raw_spec(STAGE)


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Table IV, restart loss, crash injection, reservation cost and sizing from the four raw files, then write."""
    paths.check_writable(paths.derived, paths.amort_figs)
    (arms, restart, crashes, reservations), raw_metadata = raw_io.read_named(
        RAW, settings, paths, "trials", "restart", "crashes", "reservations")
    rp, tpm = settings.recovery, raw_metadata["tpm"]
    table4 = analysis.table4(arms)
    crash = analysis.crash_table(crashes)
    restart_table = analysis.restart_table(restart, rp.k)
    headline = validated(RecoveryMetrics, analysis.metrics(
        arms, restart, crashes, reservations, k=rp.k, window=rp.window, sizing=rp.sizing.model_dump()) | {
        "tpm": tpm, "profile": settings.profile, "cpu_model": raw_metadata["cpu_model"],
        "raw_samples": raw_provenance.source(raw_metadata)})
    figure = fig_recovery(arms, restart, rp.k, "swtpm, software TPM" if tpm["software"] else tpm["spec"])
    with OutputSet(paths, STAGE) as out:
        out.table(table4, paths.amort_figs / "table4_recovery", markdown=rounded(table4, decimals=2))
        out.table(crash, paths.amort_figs / "recovery_crash_injection")
        out.table(restart_table, paths.amort_figs / "recovery_restart", markdown=rounded(restart_table, decimals=2))
        out.figure(figure, paths.amort_figs / "fig_recovery")
        out.metrics(paths.derived / "recovery_metrics.json", headline, label="crash trials safe",
                    key="crash.fail_secure_or_resume_fraction", unit="fraction")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_recovery": figure},
                       tables={"table4_recovery": table4, "recovery_crash_injection": crash,
                               "recovery_restart": restart_table},
                       metrics=headline, files=out.written,
                       data={"trials": arms, "restart": restart, "crashes": crashes, "reservations": reservations,
                             "metadata": raw_provenance.analysis_metadata(raw_metadata, RAW, settings)})


run = measuring.runner(STAGE, analyse)
