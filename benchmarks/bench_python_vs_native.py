"""Benchmark: harness overhead per call, and Python-side vs native-loop medians for HMAC-SHA-256 and ML-DSA-65.

Writes benchmarks/results/python_vs_native.json. Ratios are taken within this one run, because
absolute times drift on shared machines. The native side is benchmarks/native/oploop.c, built
here with the system C compiler and pointed at every libcrypto this machine has (the system's
and any bundled in installed wheels); ML-DSA needs OpenSSL >= 3.5.
"""

from __future__ import annotations

import argparse
import glob
import hmac
import json
import ssl
import statistics
import subprocess
import sys
import sysconfig
import time
from ctypes.util import find_library
from pathlib import Path

import numpy as np

from pqlab import crypto, machine
from pqlab.experiments.harness import empty_call_overhead_ns, time_calls
from pqlab.io import write_json

HERE = Path(__file__).resolve().parent
RECORD_OCTETS, CHECKPOINT_OCTETS = 83, 4096


def build_native() -> Path:
    """Compile oploop.c (needs only a C compiler and libdl) and return the binary."""
    binary = HERE / "native" / "build" / "oploop"
    source = HERE / "native" / "oploop.c"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        binary.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-O2", "-o", str(binary), str(source), "-ldl"], check=True)
    return binary


def libcrypto_candidates() -> list[str]:
    """The system libcrypto and any libcrypto shipped inside installed wheels."""
    found = [name for name in [find_library("crypto")] if name]
    site = sysconfig.get_paths()["purelib"]
    found += sorted(glob.glob(f"{site}/*.libs/libcrypto*.so*"))
    return found


def native(binary: Path, library: str, operation: str, reps: int, octets: int) -> dict:
    done = subprocess.run([str(binary), library, operation, str(reps), str(octets)],
                          capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout) | {"path": library}


def python_median_ns(call, reps: int, overhead: float) -> float:
    return float(np.median(time_calls(call, reps, warmup=min(reps, 1000))) - overhead)


def import_time_s(runs: int = 5) -> dict:
    """Wall time of `python -c "import pqlab.crypto"` beside a bare interpreter start."""
    def timed(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    bare = statistics.median(timed("pass") for _ in range(runs))
    full = statistics.median(timed("import pqlab.crypto") for _ in range(runs))
    return {"python_start_s": round(bare, 4), "import_pqlab_crypto_s": round(full, 4),
            "import_cost_s": round(full - bare, 4)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps-fast", type=int, default=20000)
    parser.add_argument("--reps-sign", type=int, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "python_vs_native.json")
    args = parser.parse_args()

    binary = build_native()
    overhead = empty_call_overhead_ns(reps=20000)
    key, record, message = b"k" * 32, bytes(range(RECORD_OCTETS)), bytes(4096)
    results: dict = {
        "machine": machine.run_metadata(),
        "harness": {"empty_call_overhead_ns": overhead,
                    "empty_call_overhead_ns_batch100": empty_call_overhead_ns(reps=2000, batch=100)},
        "import": import_time_s(),
        "hmac_sha256_83B": {"python": {"median_ns": python_median_ns(
            lambda: hmac.digest(key, record, "sha256"), args.reps_fast, overhead), "library": ssl.OPENSSL_VERSION,
            "call": "hmac.digest"}, "native": []},
        "mldsa65_sign_4KiB": {"python": [], "native": []},
    }
    for library in libcrypto_candidates():
        results["hmac_sha256_83B"]["native"].append(native(binary, library, "hmac", args.reps_fast, RECORD_OCTETS))
        results["mldsa65_sign_4KiB"]["native"].append(
            native(binary, library, "mldsa65", args.reps_sign, CHECKPOINT_OCTETS))
    for backend in crypto.backends_offering("ML-DSA-65"):
        signer = crypto.get_signer("ML-DSA-65", backend)
        secret = signer.keygen().secret
        results["mldsa65_sign_4KiB"]["python"].append({
            "backend": backend, "version": crypto.backend_status(backend).version,
            "median_ns": python_median_ns(lambda s=signer, k=secret: s.sign(k, message),
                                          args.reps_sign if backend != "pqcrypto" else max(20, args.reps_sign // 10),
                                          overhead)})
    ratios = {}
    for name, entry in (("hmac_sha256_83B", results["hmac_sha256_83B"]), ("mldsa65_sign_4KiB",
                                                                          results["mldsa65_sign_4KiB"])):
        pythons = entry["python"] if isinstance(entry["python"], list) else [entry["python"]]
        for py in pythons:
            for nat in entry["native"]:
                if nat.get("available"):
                    label = f"{py.get('backend', py.get('call'))} / native {nat['library']}"
                    ratios.setdefault(name, {})[label] = round(py["median_ns"] / nat["median_ns"], 3)
    results["ratios_python_over_native"] = ratios
    write_json(args.out, results)
    print(json.dumps({"harness": results["harness"], "import": results["import"], "ratios": ratios}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
