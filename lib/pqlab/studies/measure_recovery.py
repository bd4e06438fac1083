"""Stage ``measure_recovery`` (AMORT-V1 §IV-E, §V-H): every restart, rollback, crash-injection and reservation trial
against a real TPM 2.0; writes only the four data/raw/recovery_*.parquet files."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from pqlab import machine
from pqlab.amort.recovery.tpm import client_versions
from pqlab.experiments.recovery import trials
from pqlab.experiments.recovery.swtpm import swtpm_version, tpm_endpoint
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry

RAW = registry.raw_spec("recovery")
SOFTWARE_TPM_NOTE = ("swtpm is a software TPM: its NV writes go to a file on this machine's disk, so its timings "
                     "differ from a discrete TPM's; the counts must not")


def tpm_info(spec: str) -> dict[str, Any]:
    """Which TPM the trials ran against: software or hardware, swtpm's version, the tpm2-tss client's versions."""
    software = spec == "swtpm"
    return {"spec": spec, "software": software, "swtpm": swtpm_version() if software else None,
            "client": "tpm2-tss ESAPI via tpm2-pytss", **client_versions(),
            "note": SOFTWARE_TPM_NOTE if software else "hardware TPM through the kernel resource manager"}


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Run every trial against a real TPM (a private swtpm unless ``recovery.tpm`` names a device); write the
    samples with their provenance and the TPM stack in the metadata."""
    paths.check_writable(paths.raw)
    rp = settings.recovery
    load_before = raw_provenance.load_average()
    jobs = len(trials.plan(rp.trials, rp.restart_trials, rp.crash_trials))
    with tempfile.TemporaryDirectory(prefix="pqlab-recovery-") as tmp, tpm_endpoint(rp.tpm, tmp) as tcti, \
            tqdm(total=jobs, desc="recovery trials", unit="trial", disable=not progress) as bar:
        world = trials.World.create(rp, Path(tmp) / "trials", tcti)
        data = trials.run_trials(world, trials=rp.trials, restart_trials=rp.restart_trials,
                                 crash_trials=rp.crash_trials, reservation_samples=rp.reservation_samples,
                                 seed=settings.seed, progress=bar.update)
    metadata = machine.run_metadata() | {"tpm": tpm_info(rp.tpm), "profile": settings.profile}
    frames = {"recovery_trials.parquet": data.arms, "recovery_restart.parquet": data.restart,
              "recovery_crashes.parquet": data.crashes, "recovery_reservations.parquet": data.reservations}
    return raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
