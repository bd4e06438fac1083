"""A simulated grid as a measuring stage's raw samples: run resumably beside data/raw, write with provenance, then
drop the resume cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pqlab import machine
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import GridPoint, clean_parts, run_grid


def parts_folder(paths: ProjectPaths, stage: str) -> Path:
    """The stage's resume cache while it runs (deleted once the raw file is written)."""
    return paths.raw / f".{stage}.parts"


def simulate(stage: str, settings: StudyParams, paths: ProjectPaths, points: Sequence[GridPoint],
             thread: TransportParams, runs: int, *, workers: int | None, scheduler: str | None,
             progress: bool) -> list[Path]:
    """Run every point ``runs`` times (process pool or Dask) and write the one raw file of ``stage``."""
    raw = registry.raw_spec(stage)
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
    table = run_grid(points, thread, parts_folder(paths, stage), runs=runs, workers=workers, scheduler=scheduler,
                     progress=progress)
    (name,) = raw.files
    written = raw_provenance.write(raw, settings, paths, {name: table}, machine.run_metadata(), load_before)
    clean_parts(parts_folder(paths, stage))
    return written
