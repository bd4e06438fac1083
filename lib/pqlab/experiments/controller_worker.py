"""One controller-scaling trial in a process of its own: ingest, checkpoint, sign, fsync; RSS from /proc/self/status.

Run as ``python -m pqlab.experiments.controller_worker`` with a JSON job on stdin; prints one JSON result on stdout.
The reports arrive in a file (round-major, fixed length), built beforehand on the device path, so this process
holds only the controller, one round of reports and the checkpoint: its resident memory is the controller's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pqlab.amort.durable import DurableLog
from pqlab.amort.fastpath.api import checkpoint_context, open_controller
from pqlab.amort.identity import SigningKey
from pqlab.amort.profile import IMPLIED, PAPER, Profile
from pqlab.experiments.amort_fleet import FIRST_TIME_MS, Fleet, batches, packed_state, round_time

STATUS = Path("/proc/self/status")


def memory_kib() -> dict[str, int]:
    """VmRSS and VmHWM (peak resident set) of this process, in KiB, from /proc/self/status."""
    values = {}
    for line in STATUS.read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values


def read_round(handle: Any, n: int, length: int, r: int) -> list[bytes]:
    """Round ``r``'s ``n`` reports of ``length`` octets each."""
    handle.seek(r * n * length)
    data = handle.read(n * length)
    if len(data) != n * length:
        raise ValueError(f"reports file ends inside round {r}")
    return [data[o:o + length] for o in range(0, n * length, length)]


def run(job: dict[str, Any]) -> dict[str, Any]:
    """Execute one trial; every duration in nanoseconds (perf_counter_ns)."""
    clock = time.perf_counter_ns
    memory = {"start": memory_kib()}
    profile = Profile(job.get("variant", PAPER), job.get("wire_format", IMPLIED))
    fleet = Fleet(job["n"], job["seed"], job["trial"], tag_len=job["tag_len"], profile=profile)
    key = SigningKey.generate(job["signer"], job["backend"])
    ctl = open_controller(job["path"], fleet.deployment(), sig_alg=job["signer"])
    context = checkpoint_context(profile)
    memory["before_fleet"] = memory_kib()
    t0 = clock()
    fleet.register(ctl, not_before=FIRST_TIME_MS)
    register_ns = clock() - t0
    memory["after_register"] = memory_kib()
    rounds, body, signature, data = [], b"", b"", b""
    with DurableLog(job["log"]) as log, open(job["reports"], "rb") as handle:
        for r in range(job["warmup_rounds"] + job["rounds"]):
            chunks = list(batches(read_round(handle, fleet.n, job["report_len"], r)))
            accepted = 0
            t0 = clock()
            for chunk in chunks:
                accepted += ctl.ingest(chunk, now=round_time(r)).n_accepted
            t1 = clock()
            body = ctl.checkpoint_body()
            t2 = clock()
            signature = key.signer.sign(key.secret, body, context)
            t3 = clock()
            data = ctl.commit(signature)
            t4 = clock()
            log.append(data)
            t5 = clock()
            if accepted != fleet.n:
                raise RuntimeError(f"round {r}: {accepted} of {fleet.n} reports accepted")
            rounds.append({"round": r, "warmup": r < job["warmup_rounds"], "ingest_ns": t1 - t0,
                           "body_ns": t2 - t1, "sign_ns": t3 - t2, "commit_ns": t4 - t3, "durable_ns": t5 - t4,
                           "total_ns": t5 - t0, "checkpoint_octets": len(data), "fsyncs": log.fsync_count})
    memory["end"] = memory_kib()
    # Verification of the last checkpoint as an auditor receives it: the signed octets and signature are cut
    # from the encoding (to-be-signed ‖ 2-octet length ‖ signature) and checked with real ML-DSA.
    signed, sig = data[:len(body)], data[len(body) + 2:]
    if signed != body or sig != signature:
        raise RuntimeError("the encoded checkpoint does not frame its body and signature")
    verify = key.signer.verify
    verify_ns = []
    for _ in range(job["verify_reps"]):
        t0 = clock()
        ok = verify(key.public, signed, sig, context)
        verify_ns.append(clock() - t0)
        if not ok:
            raise RuntimeError("checkpoint signature does not verify")
    first = next(d for d in ctl.state()["devices"] if d["dev_id"] == fleet.dev_id(0).hex())
    return {"path": ctl.path, "backend": key.signer.backend,
            "register_ns": register_ns, "rounds": rounds, "verify_ns": verify_ns, "memory_kib": memory,
            "state_octets": len(packed_state(first, fleet.k_evid(0))), "signature_octets": len(signature),
            "checkpoint_hex": data.hex() if job.get("keep_checkpoint") else None}


def main() -> int:
    job = json.loads(sys.stdin.read())
    json.dump(run(job), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
