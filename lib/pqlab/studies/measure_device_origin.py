"""Stage ``measure_device_origin`` (AMORT-V1 §V-F): time the cold auditor at every k, one vs two tags at the
controller, and the prover; writes only the five data/raw/device_origin_*.parquet files."""

from __future__ import annotations

from pathlib import Path

from pqlab import machine
from pqlab.amort.fastpath.api import resolve_controller_path
from pqlab.experiments import device_origin as experiment
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry

RAW = registry.raw_spec("device_origin")


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Measure the auditor, the controller's tags and the prover; write the samples with their provenance."""
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
    resolved = resolve_controller_path(settings.amort.controller_path)
    auditor, delays = experiment.measure_auditor(settings, paths.raw, progress=progress)
    tags = experiment.measure_controller_tags(settings, resolved.path, paths.raw, progress=progress)
    samples, builds = experiment.measure_prover(settings, resolved.path, progress=progress)
    for frame in (auditor, tags, samples, builds):
        frame["controller_path"] = resolved.path
    metadata = machine.run_metadata() | {
        "controller_path_requested": settings.amort.controller_path, "controller_path": resolved.path,
        "controller_path_reason": resolved.reason, "device_path": resolved.path,
        "auditor_path": "reference (pqlab.amort.auditor.ColdAuditor)", "profile": settings.profile,
        "components": list(experiment.COMPONENTS)}
    frames = {"device_origin_auditor.parquet": auditor, "device_origin_delays.parquet": delays,
              "device_origin_tags.parquet": tags, "device_origin_prover.parquet": samples,
              "device_origin_chain_setup.parquet": builds}
    return raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
