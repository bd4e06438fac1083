"""Stage ``measure_assumptions``: simulate every assumption set's scenarios (resumable; process pool or Dask, as the
transport grid); writes only data/raw/assumptions_runs.parquet."""

from __future__ import annotations

from pathlib import Path

from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies import grid_samples
from pqlab.transport import assumptions
from pqlab.transport.case_inputs import table1_inputs


def measure(settings: StudyParams, paths: ProjectPaths, *, workers: int | None = None, scheduler: str | None = None,
            progress: bool = True) -> list[Path]:
    """Simulate every assumption set's runs and write them with their provenance."""
    a, thread = settings.assumptions, settings.transport
    d3 = thread.figure_configs["drop_in"]
    configs, compute = table1_inputs(list(dict.fromkeys([*thread.configurations, d3])),
                                     paths.input(settings.inputs.cycles_file))
    points, _ = assumptions.assumption_points(a, assumptions.assumption_sets(a, thread), thread, configs, compute,
                                              a.runs)
    return grid_samples.simulate("assumptions", settings, paths, points, thread, a.runs, workers=workers,
                                 scheduler=scheduler, progress=progress)
