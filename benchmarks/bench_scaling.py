"""Benchmark: controller µs per report at one identity count on every controller path present (reference, native).

Writes benchmarks/results/scaling_paths.json: per path, the per-trial cost per report and its phases (ingest,
checkpoint body, ML-DSA-65 signature, commit, fsync), the checkpoint size and the process's peak RSS, each trial in
a fresh process exactly as stage ``scaling`` runs it; and the load average before and after.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from pqlab import machine, params
from pqlab.amort.fastpath.api import PATHS, native_status
from pqlab.experiments import scaling
from pqlab.io import write_json
from pqlab.pipeline.raw_provenance import load_average

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--identities", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--params", default=str(HERE.parent / "params" / "params.yaml"))
    args = parser.parse_args()
    base = params.load_raw(args.params)
    base["scaling"] = {**base.get("scaling", {}), "identities": [args.identities], "trials": args.trials}
    settings = params.resolve(base, "quick")
    load_before = load_average()
    results = {}
    for path in PATHS:
        if path == "native" and not native_status()[0]:
            results[path] = {"skipped": native_status()[1]}
            continue
        with tempfile.TemporaryDirectory() as scratch:
            _, trials, _ = scaling.measure(settings, path, Path(scratch), progress=False)
        costs = trials["us_per_report"].tolist()
        results[path] = {
            "us_per_report": costs, "us_per_report_median": statistics.median(costs),
            **{f"{phase}_us_per_report_median": float(trials[f"{phase}_us_per_report"].median())
               for phase in ("ingest", "body", "sign", "commit", "durable")},
            "checkpoint_octets": int(trials["checkpoint_octets"].iloc[0]),
            "rss_peak_mib_median": float(trials["rss_peak_kib"].median()) / 1024,
        }
    result = {"identities": args.identities, "trials": args.trials, "paths": results,
              "load_average": {"before": load_before, "after": load_average()}, "machine": machine.run_metadata()}
    target = write_json(HERE / "results" / "scaling_paths.json", result)
    for path, values in results.items():
        print(path, values.get("us_per_report_median", values.get("skipped")))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
