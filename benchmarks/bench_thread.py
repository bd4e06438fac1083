"""Benchmark: Thread simulator C core vs its Python twin (handshakes/s), and the full 432,000-handshake grid.

Writes benchmarks/results/thread_sim.json. The C/twin ratio comes from one run on the same scenarios.
Message sizes here are SYNTHETIC (15 oversized configurations spread over 1.2-11 kB, from a formula):
the CASE size model is separate, and the benchmark measures speed, not the paper's results.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from pqlab import machine
from pqlab.io import write_json
from pqlab.params import ThreadParams
from pqlab.run.grid import grid_points, run_grid
from pqlab.thread import core
from pqlab.thread.model import TRANSPORTS, Scenario, build_plan
from pqlab.thread.reference import simulate

HERE = Path(__file__).resolve().parent


def synthetic_configs(n: int = 15) -> dict[str, tuple[int, int, int, int]]:
    """n configurations whose largest message exceeds the 1178-byte limit (formula, not paper data)."""
    return {f"syn{i:02d}": (1200 + 97 * i, 1300 + 691 * i, 600 + 650 * i, 20 + i) for i in range(n)}


def ratio_scenarios() -> list[Scenario]:
    sizes = list(synthetic_configs().values())
    return [Scenario(sizes[i], 1 + i % 4, loss, i % 2 == 1, TRANSPORTS[i % 3])
            for i, loss in enumerate(["none", "light_wifi", "heavy_wifi", "iid_15"] * 3)]


def c_vs_twin(params: ThreadParams, twin_runs: int, c_runs: int) -> dict:
    plans = [build_plan(s, params) for s in ratio_scenarios()]
    start = time.perf_counter()
    for plan in plans:
        for run in range(twin_runs):
            simulate(plan, run)
    twin_s = time.perf_counter() - start
    start = time.perf_counter()
    for plan in plans:
        core.run(plan, 0, c_runs)
    c_s = time.perf_counter() - start
    twin_rate, c_rate = len(plans) * twin_runs / twin_s, len(plans) * c_runs / c_s
    return {"scenarios": len(plans), "twin_runs_each": twin_runs, "c_runs_each": c_runs,
            "twin_handshakes_per_s": twin_rate, "c_handshakes_per_s": c_rate, "ratio": c_rate / twin_rate}


def full_grid(params: ThreadParams, workers: int) -> dict:
    points = grid_points(synthetic_configs(), params)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        table = run_grid(points, params, Path(tmp) / "grid.parquet", workers=workers, progress=False)
        wall = time.perf_counter() - start
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"scenarios": len(points), "handshakes": len(table), "workers": workers, "wall_s": wall,
            "handshakes_per_s": len(table) / wall, "peak_rss_parent_mib": self_kb / 1024,
            "peak_rss_largest_worker_mib": child_kb / 1024,
            "failures": int((~table["ok"]).sum())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--twin-runs", type=int, default=10)
    parser.add_argument("--c-runs", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-grid", action="store_true")
    parser.add_argument("--out", default=str(HERE / "results" / "thread_sim.json"))
    args = parser.parse_args(argv)
    params = ThreadParams()
    result = {"c_vs_twin": c_vs_twin(params, args.twin_runs, args.c_runs)}
    r = result["c_vs_twin"]
    print(f"C {r['c_handshakes_per_s']:.0f}/s, twin {r['twin_handshakes_per_s']:.1f}/s, ratio {r['ratio']:.0f}x",
          file=sys.stderr)
    if not args.skip_grid:
        result["full_grid"] = full_grid(params, args.workers)
        g = result["full_grid"]
        print(f"grid: {g['handshakes']} handshakes in {g['wall_s']:.1f} s on {g['workers']} workers", file=sys.stderr)
    result["machine"] = machine.run_metadata()
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
