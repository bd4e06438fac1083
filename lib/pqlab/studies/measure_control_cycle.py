"""Stage ``measure_control_cycle`` (AMORT-V1 §V-G): run the control-cycle loop in every configuration; writes only
data/raw/control_cycle_samples.parquet (the runs' scheduling, the clock cost and back-to-back evidence times in its
metadata)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pqlab import machine
from pqlab.experiments import control_cycle
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry

RAW = registry.raw_spec("control_cycle")
HOST_NOTE = "Linux host, not a PLC: the same method as the paper's OpenPLC prover, on this machine"


def _signer_backends(runs: list[dict[str, Any]]) -> dict[str, str]:
    return {r["background_signer"]: f"{r['signer']['ready']['backend']} {r['signer']['ready']['version']}"
            for r in runs if r.get("signer")}


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Run every configuration, time back-to-back evidence and the clock, and write the samples."""
    paths.check_writable(paths.raw)
    cfg = settings.control_cycle
    load_before = raw_provenance.load_average()
    clock_ns = control_cycle.clock_overhead_ns()
    samples, runs = control_cycle.run_all(cfg, settings.seed, progress=progress)
    warm = control_cycle.back_to_back_evidence_us(cfg, np.random.default_rng([settings.seed, 1]))
    metadata = machine.run_metadata(backends=_signer_backends(runs)) | {
        "study": "control_cycle", "host_note": HOST_NOTE, "runs": runs, "cpu_model": machine.cpu_model(),
        "clock_read_ns": clock_ns, "back_to_back_evidence_us": {str(tags): us for tags, us in warm.items()}}
    return raw_provenance.write(RAW, settings, paths, {"control_cycle_samples.parquet": samples}, metadata, load_before)
