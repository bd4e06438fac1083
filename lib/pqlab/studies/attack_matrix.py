"""Stage ``attack_matrix`` (AMORT-V1 Appendix A): Table VI's 27 cases and 5 controls, plus the extra cases."""

from __future__ import annotations

import json
import time

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.amort.attacks import run_matrix
from pqlab.amort.attacks.summary import TABLE_COLUMNS, matrix_metrics, summarise_runs
from pqlab.amort.lab import KeySet
from pqlab.figures.attack_matrix import attack_matrix_overview
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet, scratch_dir
from pqlab.studies.result import StudyResult

STAGE = "attack_matrix"


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Run the whole matrix ``repeats`` times (fresh keys and seed each time) and write every output."""
    cfg = settings.attack_matrix
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    frames, seconds = [], []
    with scratch_dir(paths, STAGE) as scratch:  # checkpoint logs; removed even if the run is killed
        for repeat in range(cfg.repeats):
            start = time.perf_counter()
            keys = KeySet.generate(cfg.n_devices, cfg.checkpoint_signer)
            slh = KeySet.generate(2, cfg.alternative_signer)
            frame = run_matrix(keys, settings.seed + repeat, slh_keys=slh, stream_records=cfg.stream_records,
                               stream_k=cfg.stream_k, workdir=scratch)
            seconds.append(time.perf_counter() - start)
            frames.append(frame.assign(repeat=repeat, seed=settings.seed + repeat))
    runs = pd.concat(frames, ignore_index=True)
    summary = summarise_runs(runs)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends={})
    metrics = matrix_metrics(summary, runs, seconds) | {"profile": settings.profile,
                                                        "cpu_model": metadata.get("cpu_model")}
    table6 = summary[summary["table"] == "table6"][TABLE_COLUMNS].reset_index(drop=True)
    extra = summary[summary["table"] == "extra"][TABLE_COLUMNS].reset_index(drop=True)
    figure = attack_matrix_overview(summary)
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "attack_matrix_runs.parquet", runs.assign(counts=runs["counts"].map(json.dumps)),
                    metadata)
        out.table(table6, paths.amort_figs / "table6_attack_matrix")
        out.table(extra, paths.amort_figs / "attack_matrix_extra")
        out.figure(figure, paths.amort_figs / "attack_matrix_overview")
        out.metrics(paths.derived / "attack_matrix_metrics.json", metrics, label="Table VI cases passed",
                    key="table6.cases_passed", unit=f"of {metrics['table6']['cases_total']}")
    plt.close(figure)
    return StudyResult(STAGE, figures={"attack_matrix_overview": figure},
                       tables={"table6_attack_matrix": table6, "attack_matrix_extra": extra},
                       metrics=metrics, files=out.written, data={"runs": runs, "summary": summary})
