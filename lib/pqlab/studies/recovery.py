"""Stage ``recovery`` (AMORT-V1 §IV-E, §V-H): restart and rollback with a real TPM 2.0 — Table IV, restart loss,
crash injection around the counter increment, the cost of one reservation and the window sizing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from tqdm.auto import tqdm

from pqlab import machine
from pqlab.amort.recovery import trials
from pqlab.amort.recovery.swtpm import swtpm_version, tpm_endpoint
from pqlab.amort.recovery.tpm import client_versions
from pqlab.analysis import recovery as analysis
from pqlab.figures.recovery import fig_recovery
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet, rounded
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "recovery"


class ArmCell(MetricsNode):
    """One Table IV cell (scenario × arm) over its trials."""

    trials: int
    killed_by_sigkill: int
    new_epoch: int
    new_epoch_fraction: float
    ready_ms_median: float | None
    spawn_to_ready_ms_median: float | None
    reissued: int
    reissued_per_trial_mean: float
    stale_detected: int
    stale_detected_fraction: float


class Restart(MetricsNode):
    interrupted_epochs: int
    epochs_with_loss: int
    err_evidence_incomplete: int
    first_interrupted_lost: int | None
    second_interrupted_lost: int | None
    first_trial_lost: list[int]
    lost_max: int | None
    bounded_by_k: bool
    clean_epochs: int
    clean_lost: int
    clean_errors: int
    restart_rate_refused_trials: int


class Rollback(MetricsNode):
    trials_per_arm: int
    naive_reissued: int
    tpm_reissued: int
    tpm_stale_detected: int


class CrashCase(MetricsNode):
    failed_secure: int
    resumed: int
    sequence_reuse: int


class Crash(MetricsNode):
    trials: int
    cases: dict[str, CrashCase]
    all_fail_secure_or_resume: bool
    fail_secure_or_resume_fraction: float


class Reservation(MetricsNode):
    samples: int
    total_ms_median: float
    increment_ms_median: float
    read_ms_median: float
    write_ms_median: float


class Sizing(MetricsNode):
    nv_write_budget: int
    report_rate_hz: float
    service_years: float
    days_per_year: float
    min_window: int
    nv_writes_at_min_window: int
    nv_writes_at_window: int


class RecoveryMetrics(StageMetrics):
    table4: dict[str, dict[str, ArmCell]]
    restart: Restart
    rollback: Rollback
    crash: Crash
    reservation: dict[str, Reservation]
    sizing: Sizing
    k: int
    window: int
    tpm: dict[str, str | bool | None]
    cpu_model: str | None
    load_average_before: list[float]
    load_average_after: list[float]


METRICS = RecoveryMetrics
SOFTWARE_TPM_NOTE = ("swtpm is a software TPM: its NV writes go to a file on this machine's disk, so its timings "
                     "differ from a discrete TPM's; the counts must not")


def _tpm_info(spec: str) -> dict[str, Any]:
    software = spec == "swtpm"
    return {"spec": spec, "software": software, "swtpm": swtpm_version() if software else None,
            "client": "tpm2-tss ESAPI via tpm2-pytss", **client_versions(),
            "note": SOFTWARE_TPM_NOTE if software else "hardware TPM through the kernel resource manager"}


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Run every trial against a real TPM (a private swtpm unless ``recovery.tpm`` names a device), then write."""
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    rp = settings.recovery
    load_before = os.getloadavg()
    jobs = len(trials.plan(rp.trials, rp.restart_trials, rp.crash_trials))
    with tempfile.TemporaryDirectory(prefix="pqlab-recovery-") as tmp, tpm_endpoint(rp.tpm, tmp) as tcti, \
            tqdm(total=jobs, desc="recovery trials", unit="trial", disable=not progress) as bar:
        world = trials.World.create(rp, Path(tmp) / "trials", tcti)
        data = trials.run_trials(world, trials=rp.trials, restart_trials=rp.restart_trials,
                                 crash_trials=rp.crash_trials, reservation_samples=rp.reservation_samples,
                                 seed=settings.seed, progress=bar.update)
    load_after = os.getloadavg()
    tpm = _tpm_info(rp.tpm)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json")) | {"tpm": tpm}
    table4 = analysis.table4(data.arms)
    crash = analysis.crash_table(data.crashes)
    restart = analysis.restart_table(data.restart, rp.k)
    headline = validated(RecoveryMetrics, analysis.metrics(
        data.arms, data.restart, data.crashes, data.reservations, k=rp.k, window=rp.window,
        sizing=rp.sizing.model_dump()) | {
        "tpm": tpm, "profile": settings.profile, "cpu_model": metadata["cpu_model"],
        "load_average_before": list(load_before), "load_average_after": list(load_after)})
    figure = fig_recovery(data.arms, data.restart, rp.k, "swtpm, software TPM" if tpm["software"] else rp.tpm)
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "recovery_trials.parquet", data.arms, metadata)
        out.parquet(paths.raw / "recovery_restart.parquet", data.restart, metadata)
        out.parquet(paths.raw / "recovery_crashes.parquet", data.crashes, metadata)
        out.parquet(paths.raw / "recovery_reservations.parquet", data.reservations, metadata)
        out.table(table4, paths.amort_figs / "table4_recovery", markdown=rounded(table4, decimals=2))
        out.table(crash, paths.amort_figs / "recovery_crash_injection")
        out.table(restart, paths.amort_figs / "recovery_restart", markdown=rounded(restart, decimals=2))
        out.figure(figure, paths.amort_figs / "fig_recovery")
        out.metrics(paths.derived / "recovery_metrics.json", headline, label="crash trials safe",
                    key="crash.fail_secure_or_resume_fraction", unit="fraction")
    plt.close(figure)
    return StudyResult(STAGE, figures={"fig_recovery": figure},
                       tables={"table4_recovery": table4, "recovery_crash_injection": crash,
                               "recovery_restart": restart},
                       metrics=headline, files=out.written,
                       data={"trials": data.arms, "restart": data.restart, "crashes": data.crashes,
                             "reservations": data.reservations, "metadata": metadata})
