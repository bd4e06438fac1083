"""`pqlab whatif case` wall time: one deployment and three side by side (target: about two seconds for one), each a
fresh `pqlab` process as a user runs it, plus `pqlab whatif amort` with typed costs; JSON with the load average."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from pqlab.pipeline.raw_provenance import load_average

OUT = Path(__file__).resolve().parent / "results" / "whatif.json"
COMMANDS = {
    "case, one deployment (300 runs per transport)": ["whatif", "case", "--preset", "D3", "--hops", "4",
                                                      "--interference", "heavy_wifi", "--clock-mhz", "128"],
    "case, three deployments": ["whatif", "case", "--preset", "D3", "--preset", "C5", "--preset", "S2", "--hops", "4",
                                "--interference", "heavy_wifi", "--clock-mhz", "128"],
    "amort, one fleet, typed costs": ["whatif", "amort", "--identities", "1000", "--rate", "10", "--window-s", "30",
                                      "--storage", "none", "--c-mac", "0.25", "--c-leaf", "0.3", "--c-sign", "600"],
}
REPEATS = 3


def main() -> None:
    results: dict = {"load_average": {"before": load_average()}, "repeats": REPEATS, "commands": {}}
    for label, argv in COMMANDS.items():
        walls = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pqlab.cli", *argv], check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
        results["commands"][label] = {"argv": argv, "wall_s": walls, "median_wall_s": sorted(walls)[REPEATS // 2]}
        print(f"{label}: median {sorted(walls)[REPEATS // 2]:.2f} s of {REPEATS}")
    results["load_average"]["after"] = load_average()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    load = results["load_average"]
    print(f"wrote {OUT} (load average before {load['before']}, after {load['after']})")


if __name__ == "__main__":
    main()
