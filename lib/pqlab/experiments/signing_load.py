"""A background signer: pins itself to one CPU and signs continuously until SIGTERM (run as a process).

    python -m pqlab.experiments.signing_load ALGORITHM BACKEND CPU MESSAGE_OCTETS SEED

Prints one JSON line when the first signature is done (``ready``: pid, affinity, policy, backend) and one
when it stops (signatures made, wall and CPU seconds), so the harness can show the load really ran.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import numpy as np

from pqlab import crypto


def main(argv: list[str] | None = None) -> int:
    algorithm, backend, cpu, octets, seed = (argv if argv is not None else sys.argv[1:])
    os.sched_setaffinity(0, {int(cpu)})
    stop = False

    def _stop(_signum: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    name = crypto.resolve_backend(algorithm, backend)
    signer = crypto.get_signer(algorithm, name)
    secret = signer.keygen().secret
    message = np.random.default_rng(int(seed)).bytes(int(octets))
    signer.sign(secret, message)
    print(json.dumps({"ready": True, "pid": os.getpid(), "affinity": sorted(os.sched_getaffinity(0)),
                      "policy": os.sched_getscheduler(0), "backend": name,
                      "version": crypto.backend_status(name).version}), flush=True)
    count, wall, cpu_start = 0, time.perf_counter(), time.process_time()
    while not stop:
        signer.sign(secret, message)
        count += 1
    print(json.dumps({"signatures": count, "seconds": time.perf_counter() - wall,
                      "cpu_seconds": time.process_time() - cpu_start}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
