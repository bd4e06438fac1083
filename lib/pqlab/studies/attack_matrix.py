"""Stage ``attack_matrix`` (AMORT-V1 Appendix A): Table VI's 27 cases and 5 controls, the extra cases and issue 27's
sixteen, under the paper's design and the hardened variant, and what hardening costs."""

from __future__ import annotations

import json
import time

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import machine
from pqlab.amort.fastpath.api import resolve_controller_path
from pqlab.amort.profile import VARIANTS
from pqlab.attacks import run_matrix
from pqlab.attacks.metrics import stage_metrics
from pqlab.attacks.summary import TABLE_COLUMNS, summarise_runs, variant_table
from pqlab.experiments import hardening_cost
from pqlab.experiments.amort_lab import KeySet
from pqlab.figures.attack_matrix import attack_matrix_overview, attack_matrix_variants
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance
from pqlab.pipeline.metrics.attack_matrix import AttackMatrixMetrics
from pqlab.pipeline.outputs import OutputSet, scratch_dir
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated

STAGE = "attack_matrix"


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Run the whole matrix ``repeats`` times per variant (fresh keys and seed each repeat), measure the cost of
    hardening (both variants in one run), and write every output."""
    cfg, wire = settings.attack_matrix, settings.amort.wire_format
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    resolved = resolve_controller_path(settings.amort.controller_path)
    load_before = raw_provenance.load_average()
    frames, seconds = [], {variant: [] for variant in VARIANTS}
    with scratch_dir(paths, STAGE) as scratch:  # checkpoint logs; removed even if the run is killed
        for repeat in range(cfg.repeats):
            keys = KeySet.generate(cfg.n_devices, cfg.checkpoint_signer)
            slh = KeySet.generate(2, cfg.alternative_signer)
            for variant in VARIANTS:
                start = time.perf_counter()
                frame = run_matrix(keys, settings.seed + repeat, slh_keys=slh, stream_records=cfg.stream_records,
                                   stream_k=cfg.stream_k, workdir=scratch, variant=variant, wire_format=wire)
                seconds[variant].append(time.perf_counter() - start)
                frames.append(frame.assign(repeat=repeat, seed=settings.seed + repeat))
        setup = hardening_cost.CostSetup(cfg.cost_identities, cfg.cost_rounds, cfg.cost_k, cfg.cost_epochs,
                                         cfg.cost_trials, settings.seed, resolved.path, wire, cfg.checkpoint_signer)
        cost_samples = hardening_cost.measure(setup, scratch, progress=progress)
    load_after = raw_provenance.load_average()
    runs = pd.concat(frames, ignore_index=True)
    paper_runs = runs[runs["variant"] == "paper"]
    summary = summarise_runs(paper_runs)
    variants = variant_table(runs)
    cost = hardening_cost.summarise(cost_samples)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends={})
    metrics = validated(AttackMatrixMetrics, stage_metrics(summary, paper_runs, variants, seconds, cfg, {
        "hardening_cost": hardening_cost.metrics(cost, setup),
        "load_average": {"before": load_before, "after": load_after},
        "wire_format": wire, "controller_path": resolved.path, "controller_path_reason": resolved.reason,
        "profile": settings.profile, "cpu_model": metadata.get("cpu_model")}))
    table6 = summary[summary["table"] == "table6"][TABLE_COLUMNS].reset_index(drop=True)
    extra = summary[summary["table"] == "extra"][TABLE_COLUMNS].reset_index(drop=True)
    figures = {"attack_matrix_overview": attack_matrix_overview(summary),
               "attack_matrix_variants": attack_matrix_variants(variants)}
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "attack_matrix_runs.parquet", runs.assign(counts=runs["counts"].map(json.dumps)),
                    metadata)
        out.parquet(paths.raw / "hardening_cost_samples.parquet", cost_samples, metadata)
        out.table(table6, paths.amort_figs / "table6_attack_matrix")
        out.table(extra, paths.amort_figs / "attack_matrix_extra")
        out.table(variants, paths.amort_figs / "attack_matrix_variants")
        out.table(cost.round(4), paths.amort_figs / "hardening_cost")
        for name, figure in figures.items():
            out.figure(figure, paths.amort_figs / name)
        out.metrics(paths.derived / "attack_matrix_metrics.json", metrics, label="Table VI cases passed",
                    key="table6.cases_passed", unit=f"of {metrics['table6']['cases_total']}")
    for figure in figures.values():
        plt.close(figure)
    return StudyResult(STAGE, figures=figures,
                       tables={"table6_attack_matrix": table6, "attack_matrix_extra": extra,
                               "attack_matrix_variants": variants, "hardening_cost": cost},
                       metrics=metrics, files=out.written,
                       data={"runs": runs, "summary": summary, "cost_samples": cost_samples})
