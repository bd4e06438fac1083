"""Benchmark: the transport stage at the paper profile — the paper's grid of 432,000 handshakes per model variant.

Runs ``pqlab.studies.transport.run`` (what ``pqlab transport --profile paper`` runs: the paper's model and the
source_accurate variant, plus the channel_priority rerun) into a scratch project, and records its wall time, the
grid time per variant, and the peak resident memory of the parent and its worker processes (sampled every
0.25 s: the largest sum over the process tree, and the largest single worker), with the headline numbers it
produced and the load average. Writes benchmarks/results/paper_transport_run.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from pqlab import machine
from pqlab import params as params_module
from pqlab.io import write_json
from pqlab.paths import ProjectPaths
from pqlab.pipeline.raw_provenance import load_average

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


class TreeMemory:
    """Samples the resident memory of this process and all its descendants until stopped."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.peak_total = self.peak_parent = self.peak_worker = 0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                parent = me.memory_info().rss
                workers = []
                for child in me.children(recursive=True):
                    try:
                        workers.append(child.memory_info().rss)
                    except psutil.Error:
                        continue
            except psutil.Error:
                continue
            self.peak_parent = max(self.peak_parent, parent)
            self.peak_worker = max([self.peak_worker, *workers])
            self.peak_total = max(self.peak_total, parent + sum(workers))
            self.peak_processes = max(self.peak_processes, 1 + len(workers))
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    parser.add_argument("--out", default=str(HERE / "results" / "paper_transport_run.json"))
    args = parser.parse_args(argv)
    from pqlab.studies import transport

    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "params", root / "params")
        settings = params_module.load(root / "params" / "params.yaml", args.profile)
        start = time.perf_counter()
        with TreeMemory() as memory:
            result = transport.run(settings, ProjectPaths(root), workers=args.workers, progress=sys.stderr.isatty())
        wall = time.perf_counter() - start
        metrics = json.loads((root / "data" / "derived" / "transport_metrics.json").read_text())
    mib = 1024 * 1024
    report = {
        "profile": args.profile, "runs_per_scenario": settings.transport.runs,
        "fitting_under_every_transport": settings.transport.fitting_under_every_transport,
        "handshakes": result.data["handshakes"], "workers": args.workers or os.cpu_count(),
        "wall_s": wall, "grid_seconds": result.data["grid_seconds"],
        "peak_rss_total_mib": memory.peak_total / mib, "peak_rss_parent_mib": memory.peak_parent / mib,
        "peak_rss_largest_worker_mib": memory.peak_worker / mib, "processes_at_peak_count": memory.peak_processes,
        "load_average": {"before": load_before, "after": load_average()}, "headline": metrics,
        "machine": machine.run_metadata(),
    }
    write_json(args.out, report)
    r = report
    print(f"{sum(r['handshakes'].values())} handshakes in {wall:.0f} s; peak RSS {r['peak_rss_total_mib']:.0f} MiB "
          f"(parent {r['peak_rss_parent_mib']:.0f}, largest worker {r['peak_rss_largest_worker_mib']:.0f}); "
          f"load {load_before[0]:.2f} -> {r['load_average']['after'][0]:.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
