"""Stage ``measure_transport_crosscheck``: run every cross-check scenario in pqlab's Thread simulator and in the ns-3
scenario program; writes only data/raw/transport_crosscheck_runs.parquet (one row per run and simulator) and
transport_crosscheck_ns3_used.parquet (what ns-3 reported it used: symbol time, ACK wait, IFS, ...)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from pqlab import machine
from pqlab.crosscheck import ns3_program, scenarios
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry
from pqlab.transport.case_inputs import table1_inputs

STAGE = "transport_crosscheck"


def measure(settings: StudyParams, paths: ProjectPaths, *, workers: int | None = None, progress: bool = True,
            **_: object) -> list[Path]:
    """Run both simulators on every scenario and write the raw files with their provenance."""
    raw = registry.raw_spec(STAGE)
    paths.check_writable(paths.raw)
    cross, thread = settings.transport_crosscheck, settings.transport
    program = ns3_program.locate()  # fails here, naming what to install, before any work
    names = list(dict.fromkeys(thread.figure_configs[role] for role in cross.roles))
    configs, compute = table1_inputs(names, paths.input(settings.inputs.cycles_file))
    cases = scenarios.cases(cross, thread, configs, compute)
    load_before = raw_provenance.load_average()
    pqlab_frames = [scenarios.run_pqlab(case, thread, cross.runs if case.kind == "handshake" else cross.transfer_runs)
                    for case in tqdm(cases, desc="pqlab", disable=not progress)]
    jobs = list(scenarios.ns3_jobs(cases, cross))
    with tqdm(total=len(jobs), desc=f"ns-3 ({program.name})", disable=not progress) as bar:
        ns3_frame, used = scenarios.run_ns3(jobs, thread, cross, settings.seed,
                                            workers=workers or os.cpu_count() or 1, on_done=lambda _: bar.update())
    runs = pd.concat([*pqlab_frames, ns3_frame], ignore_index=True)
    used_frame = pd.DataFrame([*sorted(used.items()), ("ns3_version", ns3_program.version())],
                              columns=["key", "value"])
    metadata = machine.run_metadata() | {"ns3_version": ns3_program.version()}
    files = {"transport_crosscheck_runs.parquet": runs, "transport_crosscheck_ns3_used.parquet": used_frame}
    return raw_provenance.write(raw, settings, paths, files, metadata, load_before)
