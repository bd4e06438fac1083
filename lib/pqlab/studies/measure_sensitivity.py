"""Stage ``measure_sensitivity`` (PQ-CASE §VII): simulate every Fig. 4 and Fig. 5 cell (resumable; process pool or
Dask, as the transport grid); writes only data/raw/sensitivity_runs.parquet."""

from __future__ import annotations

from pathlib import Path

from pqlab import machine
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies import raw_samples
from pqlab.thread import sweeps
from pqlab.thread.case_inputs import table1_inputs
from pqlab.thread.grid import clean_parts, run_grid

RAW = raw_samples.spec("sensitivity")


def parts_folder(paths: ProjectPaths) -> Path:
    """The stage's resume cache while it runs (deleted once the raw file is written)."""
    return paths.raw / ".sensitivity.parts"


def measure(settings: StudyParams, paths: ProjectPaths, *, workers: int | None = None, scheduler: str | None = None,
            progress: bool = True) -> list[Path]:
    """Simulate every cell's runs and write them with their provenance."""
    paths.check_writable(paths.raw)
    load_before = raw_samples.load_average()
    sens, thread = settings.sensitivity, settings.thread
    names = sorted({thread.figure_configs[role] for role in {sens.role, *(sc.role for sc in sens.segments.scenarios)}})
    configs, compute = table1_inputs(names, paths.input(settings.inputs.cycles_file))
    points, _ = sweeps.sweep_points(sens, thread, configs, compute, sens.runs)
    table = run_grid(points, thread, parts_folder(paths), runs=sens.runs, workers=workers, scheduler=scheduler,
                     progress=progress)
    written = raw_samples.write(RAW, settings, paths, {"sensitivity_runs.parquet": table}, machine.run_metadata(),
                                load_before)
    clean_parts(parts_folder(paths))
    return written
