"""Benchmark: Thread simulator C core vs its Python twin (handshakes/s), and the full 432,000-handshake grid.

Writes benchmarks/results/thread_sim.json. The C/twin ratio comes from one run on the same scenarios.
The grid is the paper's: the 15 Table I configurations with message sizes from the CASE size model and
device computation from params/pqm4_cycles.yaml, under the model in params/params.yaml (`transport:`),
1-4 hops x 4 interference scenarios x always-on/sleepy x 3 transports x 300 runs.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from pqlab import machine
from pqlab import params as params_module
from pqlab.io import write_json
from pqlab.transport import core
from pqlab.transport.case_inputs import table1_inputs
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import grid_points, run_grid
from pqlab.transport.model import TRANSPORTS, Scenario, build_plan
from pqlab.transport.reference import simulate

HERE = Path(__file__).resolve().parent


REPO = HERE.parent


def table1_grid_inputs() -> tuple[TransportParams, dict, dict]:
    """The project's thread model and the Table I configurations' sizes and device computation."""
    settings = params_module.load(REPO / "params" / "params.yaml")
    configs, compute = table1_inputs(settings.transport.configurations,
                                     REPO / "params" / settings.inputs.cycles_file)
    return settings.transport.model_copy(update={"runs": 300}), configs, compute


def ratio_scenarios(configs: dict) -> list[Scenario]:
    sizes = [s for s in configs.values() if max(s) > 1178][:12]
    sizes = (sizes * 12)[:12]
    return [Scenario(sizes[i], 1 + i % 4, loss, i % 2 == 1, TRANSPORTS[i % 3])
            for i, loss in enumerate(["none", "light_wifi", "heavy_wifi", "iid_15"] * 3)]


def c_vs_twin(params: TransportParams, configs: dict, twin_runs: int, c_runs: int) -> dict:
    plans = [build_plan(s, params) for s in ratio_scenarios(configs)]
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


def full_grid(params: TransportParams, configs: dict, compute: dict, workers: int) -> dict:
    points = grid_points(configs, params, compute)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        table = run_grid(points, params, Path(tmp) / "grid.parts", workers=workers, progress=False)
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
    params, configs, compute = table1_grid_inputs()
    result = {"c_vs_twin": c_vs_twin(params, configs, args.twin_runs, args.c_runs)}
    r = result["c_vs_twin"]
    print(f"C {r['c_handshakes_per_s']:.0f}/s, twin {r['twin_handshakes_per_s']:.1f}/s, ratio {r['ratio']:.0f}x",
          file=sys.stderr)
    if not args.skip_grid:
        result["full_grid"] = full_grid(params, configs, compute, args.workers)
        g = result["full_grid"]
        print(f"grid: {g['handshakes']} handshakes in {g['wall_s']:.1f} s on {g['workers']} workers", file=sys.stderr)
    result["machine"] = machine.run_metadata()
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
