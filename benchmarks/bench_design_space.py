"""Benchmark: wall time to compute the whole CASE design space (target < 5 s), as JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pqlab import machine, params
from pqlab.case.configurations import clear_chain_cache
from pqlab.case.design_tables import build_space
from pqlab.case.device_compute import load_cycles
from pqlab.io import write_json

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "design_space.json")
    args = parser.parse_args()
    settings = params.load(REPO / "params" / "params.yaml")
    cycles = load_cycles(REPO / "params" / settings.inputs.cycles_file)
    seconds = []
    for _ in range(args.runs):
        clear_chain_cache()  # every run starts cold
        start = time.perf_counter()
        space = build_space(settings.design_space, cycles, settings.framing.max_app_payload)
        seconds.append(time.perf_counter() - start)
    result = {"machine": machine.run_metadata(), "points": len(space), "seconds": seconds,
              "best_seconds": min(seconds), "target_seconds": 5.0, "meets_target": min(seconds) < 5.0}
    write_json(args.out, result)
    print(json.dumps({k: result[k] for k in ("points", "seconds", "meets_target")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
