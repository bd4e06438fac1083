"""Benchmark: the amortisation stage on one profile, end to end, against its targets — Eq. 1 with the path's own
terms within 5 % median relative error on every baseline (the as-published model's error as it falls), every sweep
point's 95 % interval within ±target_half_width_pct, and the stage's wall time (quick: about three minutes).

Runs the costs stage first when the project has no ``data/derived/costs_stats.parquet``, into a scratch project
(``--out-dir``, default a temporary folder), and writes benchmarks/results/eq1_error.json: per baseline both median
errors with their intervals, the sweep's precision and spend, the stage's wall time per part, the signing backends,
and the load average before and after. Take the figures on a quiet machine; on a shared one they say so.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from pqlab import machine, params
from pqlab.io import write_json
from pqlab.paths import ProjectPaths
from pqlab.pipeline.raw_provenance import load_average
from pqlab.studies import amortisation, costs

HERE = Path(__file__).resolve().parent
TARGET_PCT = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--params", default=str(HERE.parent / "params" / "params.yaml"))
    parser.add_argument("--out-dir", default=None, help="project folder to run in (default: a temporary one)")
    args = parser.parse_args()
    root = Path(args.out_dir) if args.out_dir else Path(tempfile.mkdtemp(prefix="pqlab-eq1-"))
    (root / "params").mkdir(parents=True, exist_ok=True)
    for source in Path(args.params).parent.glob("*.yaml"):
        shutil.copy(source, root / "params" / source.name)
    settings = params.load(root / "params" / "params.yaml", args.profile)
    paths = ProjectPaths(root)
    load_before = load_average()
    started = time.perf_counter()
    if not (paths.derived / "costs_stats.parquet").is_file():
        costs.run(settings, paths, progress=False)
    costs_s = time.perf_counter() - started
    result = amortisation.run(settings, paths, progress=False).metrics
    errors = {scheme: {
        "backend": m["backend"],
        "as_published_pct": m["median_relative_error_pct"], "as_published_ci_pct": m["median_relative_error_ci_pct"],
        "path_terms_pct": m["median_relative_error_pct_path_terms"],
        "path_terms_ci_pct": m["median_relative_error_ci_pct_path_terms"],
        "path_terms_within_target": m["median_relative_error_pct_path_terms"] <= TARGET_PCT,
        "checkpoint_cost_vs_model": m["checkpoint_cost_vs_model"]} for scheme, m in result["measured"].items()}
    out = {"profile": args.profile, "target_pct": TARGET_PCT, "errors": errors, "sweep": result["sweep"],
           "stage_wall_s": result["wall_s"], "costs_stage_s": round(costs_s, 1),
           "library_dependent": result["library_dependent"]["main_backend"],
           "load_average": {"before": load_before, "after": load_average()}, "machine": machine.run_metadata()}
    target = write_json(HERE / "results" / "eq1_error.json", out)
    for scheme, e in errors.items():
        print(f"{scheme} [{e['backend']}]: path terms {e['path_terms_pct']} % {e['path_terms_ci_pct']}, "
              f"as published {e['as_published_pct']} % {e['as_published_ci_pct']}")
    print(f"stage {result['wall_s']['total_s']} s; load {load_before} -> {load_average()}; wrote {target}")


if __name__ == "__main__":
    main()
