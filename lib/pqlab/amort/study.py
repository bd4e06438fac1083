"""Run the attack matrix study (AMORT-V1 Appendix A, Table VI) and write its tables, figure and metrics."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import io, machine
from pqlab.amort.attacks import run_matrix
from pqlab.amort.lab import KeySet
from pqlab.figures.amort import attack_matrix_overview
from pqlab.figures.style import save
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths

TABLE_COLUMNS = ["case", "class", "adversary action", "expected code", "observed code", "pass", "runs passed"]


@dataclass
class MatrixResult:
    """Everything the study produced, for the notebook to show."""

    runs: pd.DataFrame
    table6: pd.DataFrame
    extra: pd.DataFrame
    metrics: dict
    figure: plt.Figure
    written: list[Path]


def _summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per case over all repeats: passes only if every repeat passed with the same observed code."""
    rows = []
    for case_id, group in runs.groupby("case", sort=False):
        observed = sorted(set(group["observed code"]))
        first = group.iloc[0]
        rows.append({"case": case_id, "class": first["class"], "adversary action": first["adversary action"],
                     "expected code": first["expected code"], "observed code": " / ".join(observed),
                     "pass": bool(group["pass"].all() and len(observed) == 1),
                     "runs passed": f"{int(group['pass'].sum())}/{len(group)}", "table": first["table"],
                     "median_ms": 1e3 * float(group["seconds"].median())})
    frame = pd.DataFrame(rows)
    order = frame["table"].ne("table6").astype(int).astype(str) + frame["class"].eq("P").astype(int).astype(str) \
        + frame["case"]
    return frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def _metrics(summary: pd.DataFrame, runs: pd.DataFrame, matrix_seconds: list[float]) -> dict:
    table6 = summary[summary["table"] == "table6"]
    attacks, controls = table6[table6["class"] != "P"], table6[table6["class"] == "P"]
    extra = summary[summary["table"] == "extra"]
    p5 = runs[runs["case"] == "P5"]["counts"]
    return {
        "table6": {
            "cases_total": len(attacks), "cases_passed": int(attacks["pass"].sum()),
            "controls_total": len(controls), "controls_passed": int(controls["pass"].sum()),
            "by_class": {c: int((attacks["class"] == c).sum()) for c in ("C", "D", "S")},
            "by_class_passed": {c: int(attacks[attacks["class"] == c]["pass"].sum()) for c in ("C", "D", "S")},
        },
        "extra": {"cases_total": len(extra), "cases_passed": int(extra["pass"].sum())},
        "p5": {"records": int(p5.iloc[0]["records"]), "fsyncs": sorted({int(c["fsyncs"]) for c in p5}),
               "fsync_count": int(p5.iloc[0]["fsyncs"]), "checkpoints": int(p5.iloc[0]["checkpoints"])},
        "repeats": int(runs["repeat"].nunique()),
        "matrix_seconds_max": max(matrix_seconds),
        "matrix_seconds": matrix_seconds,
    }


def run(settings: StudyParams, paths: ProjectPaths) -> MatrixResult:
    """Run the whole matrix ``repeats`` times (fresh keys and seed each time) and write every output."""
    cfg = settings.attack_matrix
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    frames, seconds = [], []
    for repeat in range(cfg.repeats):
        start = time.perf_counter()
        keys = KeySet.generate(cfg.n_devices, cfg.checkpoint_signer)
        slh = KeySet.generate(2, cfg.alternative_signer)
        frame = run_matrix(keys, settings.seed + repeat, slh_keys=slh, stream_records=cfg.stream_records,
                           stream_k=cfg.stream_k, workdir=paths.raw)
        seconds.append(time.perf_counter() - start)
        frames.append(frame.assign(repeat=repeat, seed=settings.seed + repeat))
    runs = pd.concat(frames, ignore_index=True)
    summary = _summarise(runs)
    metrics = _metrics(summary, runs, seconds) | {"profile": settings.profile}
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends={})
    metrics["cpu_model"] = metadata.get("cpu_model")
    table6 = summary[summary["table"] == "table6"][TABLE_COLUMNS].reset_index(drop=True)
    extra = summary[summary["table"] == "extra"][TABLE_COLUMNS].reset_index(drop=True)
    figure = attack_matrix_overview(summary)
    raw = runs.assign(counts=runs["counts"].map(json.dumps))
    written = [
        io.write_parquet(paths.raw / "attack_matrix_runs.parquet", raw, metadata),
        io.write_text(paths.amort_figs / "table6_attack_matrix.csv", table6.to_csv(index=False)),
        io.write_text(paths.amort_figs / "table6_attack_matrix.md", table6.to_markdown(index=False) + "\n"),
        io.write_text(paths.amort_figs / "attack_matrix_extra.csv", extra.to_csv(index=False)),
        io.write_text(paths.amort_figs / "attack_matrix_extra.md", extra.to_markdown(index=False) + "\n"),
        *save(figure, paths.amort_figs / "attack_matrix_overview"),
        io.write_json(paths.derived / "attack_matrix_metrics.json", metrics),
    ]
    plt.close(figure)
    return MatrixResult(runs, table6, extra, metrics, figure, written)
