"""Benchmark: the TPM operations of a reservation through tpm2-pytss (ESAPI, one connection) against the
tpm2-tools CLI (a process and a connection per command), on a private swtpm.

Writes benchmarks/results/recovery_tpm.json with medians per operation and the load average. This is why the
prover talks to the TPM through the binding: the CLI's process start would dominate the quantity measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pqlab import machine
from pqlab.amort.device import EpochSecrets
from pqlab.amort.recovery.reservation import Reserver, TpmReserver
from pqlab.amort.recovery.tpm import NvCounter, binding_problem, parse_tcti
from pqlab.experiments.recovery.swtpm import Swtpm, swtpm_problem
from pqlab.io import write_json
from pqlab.pipeline.raw_provenance import load_average

HERE = Path(__file__).resolve().parent
INDEX = 0x01800500


def _ms(samples: list[int]) -> float:
    return statistics.median(samples) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    problem = swtpm_problem() or binding_problem()
    if problem:
        print(f"bench_recovery: skipped, no TPM stack: {problem}")
        return
    load = load_average()
    secrets = EpochSecrets(1, bytes(32), bytes(range(32)), 64, 16, 1)
    result: dict = {"samples": args.samples}
    with tempfile.TemporaryDirectory() as tmp, Swtpm(Path(tmp) / "tpm") as tpm:
        with NvCounter(tpm.tcti, INDEX) as counter:
            counter.define()
            inc, read = [], []
            for _ in range(args.samples):
                t0 = time.perf_counter_ns()
                counter.increment()
                t1 = time.perf_counter_ns()
                counter.read()
                inc.append(t1 - t0)
                read.append(time.perf_counter_ns() - t1)
            tpm_res = TpmReserver(Path(tmp) / "tpm.bin", 64, counter)
            naive = Reserver(Path(tmp) / "naive.bin", 64)
            full = [tpm_res.reserve(b"PLC-BNCH", secrets, 64 * i).total_ns for i in range(args.samples)]
            plain = [naive.reserve(b"PLC-BNCH", secrets, 64 * i).total_ns for i in range(args.samples)]
        result["pytss"] = {"nv_increment_ms": _ms(inc), "nv_read_ms": _ms(read), "tpm_reservation_ms": _ms(full),
                           "naive_reservation_ms": _ms(plain)}
        if shutil.which("tpm2_nvincrement"):
            name, conf = parse_tcti(tpm.tcti)
            env = dict(os.environ, TPM2TOOLS_TCTI=f"{name}:{conf}")
            cli = []
            for _ in range(min(args.samples, 50)):
                t0 = time.perf_counter_ns()
                subprocess.run(["tpm2_nvincrement", "-C", "o", hex(INDEX)], env=env, check=True,
                               capture_output=True)
                cli.append(time.perf_counter_ns() - t0)
            result["tpm2_tools"] = {"nv_increment_ms": _ms(cli), "samples": len(cli)}
        with NvCounter(tpm.tcti, INDEX) as counter:
            counter.undefine()
    result |= {"tpm": "swtpm (software TPM: timings differ from a discrete TPM)",
               "load_average": {"before": load, "after": load_average()},
               "machine": machine.run_metadata()}
    path = write_json(HERE / "results" / "recovery_tpm.json", result)
    cli = result.get("tpm2_tools", {}).get("nv_increment_ms")
    print(f"NV_Increment: {result['pytss']['nv_increment_ms']:.3f} ms via tpm2-pytss"
          + (f", {cli:.1f} ms via tpm2_nvincrement" if cli else "")
          + f"; TPM reservation {result['pytss']['tpm_reservation_ms']:.3f} ms; wrote {path}")


if __name__ == "__main__":
    main()
