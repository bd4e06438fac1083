"""Benchmark: wall time of the whole AMORT-V1 attack matrix (target: under 60 s on this machine).

Writes benchmarks/results/attack_matrix.json: key generation time, per-run matrix time, and the slowest
scenarios. Each run uses fresh keys and its own seed, as the study does.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from pqlab import machine
from pqlab.attacks import run_matrix
from pqlab.experiments.amort_lab import KeySet
from pqlab.io import write_json

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    keygen, matrix, frames = [], [], []
    for run in range(args.runs):
        start = time.perf_counter()
        keys, slh = KeySet.generate(4), KeySet.generate(2, checkpoint_signer="SLH-DSA-SHA2-128f")
        keygen.append(time.perf_counter() - start)
        start = time.perf_counter()
        frame = run_matrix(keys, args.seed + run, slh_keys=slh)
        matrix.append(time.perf_counter() - start)
        frames.append(frame)
    slowest = (frames[0].nlargest(5, "seconds")[["case", "seconds"]]).to_dict("records")
    result = {
        "cases_per_run": len(frames[0]), "all_passed": all(bool(f["pass"].all()) for f in frames),
        "keygen_seconds": keygen, "matrix_seconds": matrix, "matrix_seconds_median": statistics.median(matrix),
        "target_seconds": TARGET_SECONDS, "within_target": max(k + m for k, m in zip(keygen, matrix, strict=True))
        < TARGET_SECONDS, "slowest_cases_first_run": slowest, "machine": machine.run_metadata(),
    }
    path = write_json(HERE / "results" / "attack_matrix.json", result)
    print(f"{len(frames[0])} cases, median {result['matrix_seconds_median']:.2f} s per matrix; wrote {path}")


if __name__ == "__main__":
    main()
