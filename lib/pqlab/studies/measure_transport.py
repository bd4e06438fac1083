"""Stage ``measure_transport`` (PQ-CASE §IV-C, §VI): simulate the Thread grid under the paper's model and the
source_accurate variant (resumable), and the drop-in scenarios under the other channel rule; writes only the four
data/raw/transport_*.parquet files, with the configurations simulated in their metadata."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

import pandas as pd

from pqlab import machine
from pqlab.cache import PartStore
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry
from pqlab.transport.case_inputs import table1_inputs
from pqlab.transport.grid import VARIANTS, channel_rule_points, grid_points, run_grid, simulate_points, variant_params

RAW = registry.raw_spec("transport")


def parts_folder(paths: ProjectPaths, variant: str) -> Path:
    """Where one variant's resume cache lives while the stage runs (deleted when its raw file is written)."""
    return paths.raw / f".transport-{variant}.parts"


def measure(settings: StudyParams, paths: ProjectPaths, *, configs: Mapping[str, Sequence[int]] | None = None,
            device_compute_ms: Mapping[str, tuple[float, float]] | None = None, workers: int | None = None,
            scheduler: str | None = None, progress: bool = True) -> list[Path]:
    """Simulate both variants' grids and their channel-rule reruns; write them as one set.

    ``configs`` (name -> four message sizes) and ``device_compute_ms`` default to the Table I configurations
    named in ``transport.configurations``, with sizes from the CASE size model and device computation from
    ``inputs.cycles_file``.
    """
    paths.check_writable(paths.raw)
    params = settings.transport
    if configs is None:
        configs, device_compute_ms = table1_inputs(params.configurations, paths.input(settings.inputs.cycles_file))
    load_before = raw_provenance.load_average()
    frames: dict[str, pd.DataFrame] = {}
    seconds: dict[str, float] = {}
    with ExitStack() as held:  # each variant's resume cache stays locked until the raw files are committed
        stores = {v: held.enter_context(PartStore(parts_folder(paths, v))) for v in VARIANTS}
        for variant in VARIANTS:
            suffix = "" if variant == "paper" else f"_{variant}"
            vp = variant_params(params, variant)
            start = time.perf_counter()
            frames[f"transport_grid{suffix}.parquet"] = run_grid(grid_points(configs, vp, device_compute_ms), vp,
                                                              stores[variant], workers=workers, scheduler=scheduler,
                                                              progress=progress)
            seconds[variant] = round(time.perf_counter() - start, 3)
            rerun = channel_rule_points(configs, vp, device_compute_ms)
            frames[f"transport_channel_rule{suffix}.parquet"] = (simulate_points(rerun[1], rerun[0], rerun[0].runs)
                                                              if rerun else pd.DataFrame())
        metadata = machine.run_metadata() | {
            "configs": {name: list(sizes) for name, sizes in configs.items()}, "grid_seconds": seconds,
            "device_compute_ms": None if device_compute_ms is None else
            {name: list(ms) for name, ms in device_compute_ms.items()}}
        written = raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
        for store in stores.values():  # the samples are committed: the resume caches are no longer needed
            store.clear()
    return written
