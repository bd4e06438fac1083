"""Stage ``measure_costs`` (AMORT-V1 §V-C): time every protocol operation; writes only data/raw/costs.parquet."""

from __future__ import annotations

from pathlib import Path

from pqlab import crypto, machine
from pqlab.experiments import costs
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry
from pqlab.pipeline.outputs import scratch_dir

RAW = registry.raw_spec("costs")


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Run the harness (fresh keys per trial) and write the raw samples with their provenance."""
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
    with scratch_dir(paths, RAW.measure_stage) as scratch:  # the fsync probe's file; removed even if killed
        raw, extra = costs.measure(settings, scratch, progress=progress)
    statuses = crypto.backends()  # which post-quantum backends the measuring machine has (REPORT.md says so)
    metadata = machine.run_metadata(backends=extra["backends"]) | extra | {
        "backends_available": {s.name: s.version or "unknown" for s in statuses if s.available},
        "backends_absent": {s.name: s.reason for s in statuses if not s.available}}
    return raw_provenance.write(RAW, settings, paths, {"costs.parquet": raw}, metadata, load_before)
