"""Stage ``measure_sensitivity`` (PQ-CASE §VII): simulate every Fig. 4 and Fig. 5 cell (resumable; process pool or
Dask, as the transport grid); writes only data/raw/sensitivity_runs.parquet."""

from __future__ import annotations

from pathlib import Path

from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies import grid_samples
from pqlab.transport import sweeps
from pqlab.transport.case_inputs import table1_inputs


def measure(settings: StudyParams, paths: ProjectPaths, *, workers: int | None = None, scheduler: str | None = None,
            progress: bool = True) -> list[Path]:
    """Simulate every cell's runs and write them with their provenance."""
    sens, thread = settings.sensitivity, settings.transport
    names = sorted({thread.figure_configs[role] for role in {sens.role, *(sc.role for sc in sens.segments.scenarios)}})
    configs, compute = table1_inputs(names, paths.input(settings.inputs.cycles_file))
    points, _ = sweeps.sweep_points(sens, thread, configs, compute, sens.runs)
    return grid_samples.simulate("sensitivity", settings, paths, points, thread, sens.runs, workers=workers,
                                 scheduler=scheduler, progress=progress)
