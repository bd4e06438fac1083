"""AMORT-V1 §V-D timing: the checkpoint-interval sweep on the controller fast path, and the backend/storage probe.

Each sweep point runs the real per-report path (``pqlab.amort.fastpath``, reference or native) with real keys:
device evidence keys from ML-KEM-768 exchanges (HKDF as §IV-A), reports built by fast-path devices, every
report verified by the controller, one checkpoint body per ``k`` reports signed with pqlab.crypto, and — for
the baselines with a durable log — one append + fsync per checkpoint (``DurableLog``). Report generation is
not timed; everything the controller does is, per checkpoint and per phase.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab import crypto
from pqlab.amort import kdf
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError
from pqlab.amort.fastpath.api import MAX_BATCH, Verdicts, checkpoint_context, frame, open_controller, open_device
from pqlab.amort.identity import KEM_ALGORITHM, SigningKey
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.experiments.harness import empty_call_overhead_ns, time_calls

CONTROLLER_ID = b"CTRL-001"
DEPLOYMENT = Deployment(CONTROLLER_ID, profile=PAPER_PROFILE)  # Fig. 3 measures the paper's design
REPORT_SPACING_MS = 1  # one report per ms across the devices: a 65,536-report segment spans about a minute


@dataclass(frozen=True)
class Baseline:
    """One curve of Fig. 3: a checkpoint signer on a backend, with or without a durable log on ``storage``."""

    scheme: str
    label: str
    signer: str
    backend: str
    durable_log: bool
    storage: str = ""          # name of the storage target the log is written to ("" without a log)
    storage_path: Path | None = None


def reports_per_point(k: int, min_reports: int, min_checkpoints: int) -> tuple[int, int]:
    """(reports, checkpoints) for interval ``k``: at least ``min_checkpoints`` checkpoints and ``min_reports``
    reports, in whole batches of ``k``."""
    if k < 1 or min_reports < 1 or min_checkpoints < 1:
        raise ValueError("k, min_reports and min_checkpoints must be >= 1")
    checkpoints = max(min_checkpoints, math.ceil(min_reports / k))
    return k * checkpoints, checkpoints


def device_id(n: int) -> bytes:
    return f"PLC-{n:04d}".encode()


def epoch_keys(n_devices: int, epoch: int = 1) -> dict[bytes, bytes]:
    """K_evid per device from a real ML-KEM-768 exchange each (encapsulate, decapsulate, HKDF as §IV-A)."""
    kem = crypto.get_kem(KEM_ALGORITHM)
    keys = {}
    for n in range(1, n_devices + 1):
        pair = kem.keygen()
        ciphertext, shared = kem.encaps(pair.public)
        if kem.decaps(pair.secret, ciphertext) != shared:
            raise AmortError("MAC_FAIL", "ML-KEM shared secrets disagree", field="epoch")
        _, k_evid = kdf.epoch_keys(hashlib.sha256(ciphertext).digest(), shared, device_id(n), epoch)
        keys[device_id(n)] = k_evid
    return keys


class ReportSource:
    """Up to ``total`` reports in order, round-robin over fast-path devices in epoch 1, built on demand between
    timed checkpoints (never inside a timed interval), so a long sweep point holds one segment in memory.
    ``latest`` is the newest report's time stamp: the controller's clock when it ingests what was taken."""

    def __init__(self, path: str, keys: dict[bytes, bytes], total: int, rng: np.random.Generator,
                 disclosure_tag: bool = True) -> None:
        n = len(keys)
        self.devices = [open_device(path, DEPLOYMENT, dev, 1, k_evid, rng.bytes(32),
                                             chain_length=total // n + 2)
                        for dev, k_evid in keys.items()]
        self.digests = [rng.bytes(32) for _ in range(16)]
        self.disclosure_tag = disclosure_tag
        self.total, self.made = total, 0

    def take(self, count: int) -> list[bytes]:
        """The next ``count`` reports (ValueError beyond ``total``)."""
        if count < 0 or self.made + count > self.total:
            raise ValueError(f"{count} more reports requested, {self.total - self.made} left")
        n, start = len(self.devices), self.made
        self.made += count
        return [self.devices[i % n].report(self.digests[i % 16], self.stamp(i), disclosure_tag=self.disclosure_tag)
                for i in range(start, start + count)]

    @staticmethod
    def stamp(i: int) -> int:
        """The time stamp of report ``i`` (0-based)."""
        return REPORT_SPACING_MS * (i + 1)

    @property
    def latest(self) -> int:
        return self.stamp(self.made - 1)


def framed(reports: list[bytes], k: int) -> list[list[bytes]]:
    """Batches of ``k`` reports, each as framed buffers of at most MAX_BATCH reports (one ``ingest`` call each)."""
    out = []
    for start in range(0, len(reports), k):
        batch = reports[start:start + k]
        out.append([frame(batch[i:i + MAX_BATCH])
                    for i in range(0, len(batch), MAX_BATCH)])
    return out


def _log(baseline: Baseline) -> DurableLog | None:
    if not baseline.durable_log:
        return None
    if baseline.storage_path is None:
        raise ValueError(f"baseline {baseline.scheme} keeps a durable log but names no storage folder")
    handle, name = tempfile.mkstemp(dir=baseline.storage_path, prefix=".amort-sweep-", suffix=".log")
    os.close(handle)
    return DurableLog(name)


SEGMENT_REPORTS = 1 << 16  # reports built at a time between timed checkpoints


def run_point(path: str, baseline: Baseline, key: SigningKey | None, keys: dict[bytes, bytes], k: int,
              checkpoints: int, rng: np.random.Generator, *, disclosure_tag: bool = True, warmup_reports: int = 16,
              fixed_signature: bytes | None = None) -> list[dict]:
    """One sweep point: a fresh controller on ``path``; one untimed warm-up checkpoint of min(k, warmup_reports)
    reports, then ``checkpoints`` timed checkpoints of ``k`` reports each. One row per timed checkpoint.

    With ``fixed_signature`` nothing is signed or written: every checkpoint commits those octets (the controller
    never checks its own signature), so the rows time the path's own work — ingest, body and commit — alone."""
    if fixed_signature is None and key is None:
        raise ValueError("run_point signs with key: give a SigningKey or a fixed_signature")
    warm = min(k, warmup_reports)
    source = ReportSource(path, keys, warm + k * checkpoints, rng, disclosure_tag)
    ctl = open_controller(path, DEPLOYMENT, sig_alg=baseline.signer, clock=lambda: source.latest)
    for dev, k_evid in keys.items():
        ctl.register_epoch(dev, 1, k_evid, not_before=0)
    context = checkpoint_context(DEPLOYMENT.profile)

    def sign(body: bytes) -> bytes:
        return fixed_signature if fixed_signature is not None else key.signer.sign(key.secret, body, context)

    clock = time.perf_counter_ns
    log = _log(baseline) if fixed_signature is None else None
    rows = []
    try:
        for chunks in framed(source.take(warm), max(warm, 1)):
            for chunk in chunks:
                _check(ctl.ingest(chunk))
            signed = ctl.commit(sign(ctl.checkpoint_body()))
            if log is not None:
                log.append(signed)
        per_segment = max(1, SEGMENT_REPORTS // k)
        while len(rows) < checkpoints:
            for chunks in framed(source.take(k * min(per_segment, checkpoints - len(rows))), k):
                t0 = clock()
                verdicts = [ctl.ingest(chunk) for chunk in chunks]
                t1 = clock()
                body = ctl.checkpoint_body()
                t2 = clock()
                signature = sign(body)
                t3 = clock()
                signed = ctl.commit(signature)
                t4 = clock()
                if log is not None:
                    log.append(signed)
                t5 = clock()
                for v in verdicts:
                    _check(v)
                rows.append({"checkpoint": len(rows), "reports": k, "ingest_ns": t1 - t0, "body_ns": t2 - t1,
                             "sign_ns": t3 - t2, "commit_ns": t4 - t3, "write_ns": t5 - t4, "total_ns": t5 - t0,
                             "checkpoint_octets": len(signed)})
    finally:
        if log is not None:
            log.close()
            log.path.unlink(missing_ok=True)
    if ctl.tree_size != warm + k * checkpoints:
        raise AmortError("SEQ_GAP", f"tree holds {ctl.tree_size} reports, {warm + k * checkpoints} were sent",
                         field="tree_size")
    return rows


def _check(verdicts: Verdicts) -> None:
    if verdicts.n_accepted != len(verdicts):
        bad = next(v for v in verdicts if not v.accepted)
        raise AmortError(bad.code, "the controller rejected a sweep report", field=bad.field)


def sweep(path: str, baselines: list[Baseline], ks: list[int], trials: int, seed: int, *, n_devices: int,
          min_reports: int, min_checkpoints: int, disclosure_tag: bool = True, warmup_reports: int = 16,
          desc: str = "amortisation sweep", progress: bool = True) -> pd.DataFrame:
    """Every (trial, baseline, k) point; fresh signing and evidence keys per trial and baseline. Raw rows."""
    rng = np.random.default_rng(seed)
    frames = []
    plan = [(trial, baseline) for trial in range(trials) for baseline in baselines]
    with tqdm(total=len(plan) * len(ks), desc=desc, disable=not progress) as bar:
        for trial, baseline in plan:
            key = SigningKey.generate(baseline.signer, baseline.backend)
            keys = epoch_keys(n_devices)
            order = list(rng.permutation(len(ks)))  # shuffled per trial: machine drift does not follow k
            for position in order:
                k = ks[position]
                bar.set_postfix_str(f"trial {trial + 1}: {baseline.label}, k = {k}")
                _, checkpoints = reports_per_point(k, min_reports, min_checkpoints)
                rows = run_point(path, baseline, key, keys, k, checkpoints, rng, disclosure_tag=disclosure_tag,
                                 warmup_reports=warmup_reports)
                frames.append(point_frame(rows, baseline, k, trial))
                bar.update()
    raw = pd.concat(frames, ignore_index=True)
    raw["path"] = path
    return raw


def point_frame(rows: list[dict], baseline: Baseline, k: int, trial: int) -> pd.DataFrame:
    """One point's checkpoint rows with the baseline's columns in front."""
    frame = pd.DataFrame(rows)
    frame.insert(0, "k", k)
    frame.insert(0, "trial", trial)
    for name, value in (("storage", baseline.storage), ("durable_log", baseline.durable_log),
                        ("backend", baseline.backend), ("signer", baseline.signer),
                        ("label", baseline.label), ("scheme", baseline.scheme)):
        frame.insert(0, name, value)
    return frame


# --- where the finding moves: signing backends x storage targets --------------------------------------------------

def probe(signer: str, backend: str, storage: Path, reps: int, message_octets: int, block_octets: int,
          rng: np.random.Generator, warmup: int = 2) -> dict[str, Any]:
    """Median C_sign (one ``signer`` signature over ``message_octets`` on ``backend``) and C_fsync (one
    ``block_octets`` append + fsync in ``storage``), µs, harness overhead removed."""
    overhead = empty_call_overhead_ns(reps=1000)
    key = SigningKey.generate(signer, backend)
    message = rng.bytes(message_octets)
    context = checkpoint_context(DEPLOYMENT.profile)
    sign_ns = time_calls(lambda: key.signer.sign(key.secret, message, context), reps, warmup=warmup)
    block = rng.bytes(block_octets)
    handle, name = tempfile.mkstemp(dir=storage, prefix=".amort-probe-")
    try:
        def write() -> None:
            os.write(handle, block)
            os.fsync(handle)

        write_ns = time_calls(write, reps, warmup=warmup)
    finally:
        os.close(handle)
        os.unlink(name)
    return {"c_sign_us": float(np.median(np.clip(sign_ns - overhead, 0, None))) / 1000.0,
            "c_fsync_us": float(np.median(np.clip(write_ns - overhead, 0, None))) / 1000.0,
            "sign_reps": reps, "write_reps": reps, "overhead_ns": overhead}
