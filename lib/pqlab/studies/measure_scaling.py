"""Stage ``measure_scaling`` (AMORT-V1 §V-E, §V-H): every identity count (a process per trial), isolation,
re-keying and partition replay; writes only the five data/raw/scaling_*.parquet files."""

from __future__ import annotations

from pathlib import Path

from pqlab import machine
from pqlab.amort.fastpath.api import resolve_controller_path
from pqlab.experiments import isolation, scaling
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry

RAW = registry.raw_spec("scaling")


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Measure and write the samples; the smallest count's first report (hex) goes into the metadata, for the
    analysis's byte decomposition."""
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
    resolved = resolve_controller_path(settings.amort.controller_path)
    rounds, trials, samples = scaling.measure(settings, resolved.path, paths.raw, progress=progress)
    counts, rekeying = isolation.measure_isolation(settings, resolved.path, paths.raw, progress=progress)
    replay = isolation.measure_replay(settings, resolved.path, paths.raw, progress=progress)
    provenance = {"controller_path_requested": settings.amort.controller_path, "controller_path": resolved.path,
                  "controller_path_reason": resolved.reason, "profile": settings.profile,
                  "wire_format": settings.amort.wire_format, "variant": settings.amort.variant,
                  "signature_backend": str(trials["signature_backend"].iloc[0]),
                  "sample_report_hex": samples[min(samples)].hex()}
    metadata = machine.run_metadata(backends={"signature": provenance["signature_backend"]}) | provenance
    for frame in (rounds, trials, counts, rekeying, replay):
        frame["controller_path"] = resolved.path
    frames = {"scaling_rounds.parquet": rounds, "scaling_trials.parquet": trials.drop(columns=["checkpoint_hex"]),
              "scaling_rekey.parquet": rekeying, "scaling_replay.parquet": replay,
              "scaling_isolation.parquet": counts.assign(rejections_after=counts["rejections_after"].astype(str))}
    return raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
