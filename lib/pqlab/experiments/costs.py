"""AMORT-V1 §V-C cost characterisation: time every Table I operation (pqlab.analysis.costs summarises them)."""

from __future__ import annotations

import hmac
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab import crypto
from pqlab.amort.fastpath import native
from pqlab.amort.merkle import leaf_hash, node_hash
from pqlab.amort.messages import RECORD_OCTETS
from pqlab.experiments import symmetric_timing as symmetric
from pqlab.experiments.harness import empty_call_overhead_ns, time_calls
from pqlab.params import CostsParams, StudyParams
from pqlab.raw_labels import (
    C_LOOP_BACKEND,
    NATIVE_BACKEND,
    PER_CHECKPOINT,
    PER_EPOCH,
    PER_REPORT,
    PYTHON_BACKEND,
)

# op_id -> (label, algorithm, the fields of amort_native.time_primitives summed into one sample)
NATIVE_OPERATIONS = {
    "hmac_sha256_native": ("HMAC-SHA-256, 83-octet record (C fast path, keyed context)", "HMAC-SHA-256",
                           ("hmac_ns",)),
    "merkle_leaf_interior_native": ("Merkle leaf (117-octet report) and interior hash (C fast path)", "SHA-256",
                                    ("leaf_ns", "node_ns")),
}
# the C rows: op_id -> (label, algorithm, in Table I)
C_LOOP_OPERATIONS = {
    symmetric.HMAC: ("HMAC-SHA-256, {record}-octet record", "HMAC-SHA-256", True),  # key applied per call
    symmetric.LEAF_INTERIOR: ("Merkle leaf and interior hash", "SHA-256 (RFC 6962)", True),
    symmetric.HMAC_KEYED: ("HMAC-SHA-256, {record}-octet record (C loop, keyed context restarted per record)",
                           "HMAC-SHA-256", False),
    symmetric.HMAC_ONESHOT: ("HMAC-SHA-256, {record}-octet record (C loop, EVP_Q_mac one-shot call)",
                             "HMAC-SHA-256", False),
}

Prepared = tuple[Callable[[], object], Callable[[], None]]


@dataclass(frozen=True)
class Operation:
    """One timed protocol operation; ``prepare`` makes fresh keys/inputs and returns (call, cleanup)."""

    op_id: str
    label: str
    frequency: str
    algorithm: str | None
    backend: str
    slow: bool
    prepare: Callable[[np.random.Generator, Path], Prepared]


def _nothing() -> None:
    return None


def _hmac_op(cfg: CostsParams) -> Operation:
    def prepare(rng: np.random.Generator, _: Path) -> Prepared:
        key, record = rng.bytes(32), rng.bytes(RECORD_OCTETS)
        return (lambda: hmac.digest(key, record, "sha256")), _nothing

    return Operation("hmac_sha256", f"HMAC-SHA-256, {RECORD_OCTETS}-octet record (Python hmac.digest)",
                     PER_REPORT, "HMAC-SHA-256", PYTHON_BACKEND, False, prepare)


def _merkle_op(cfg: CostsParams) -> Operation:
    def prepare(rng: np.random.Generator, _: Path) -> Prepared:
        record, sibling = rng.bytes(RECORD_OCTETS), rng.bytes(32)
        return (lambda: node_hash(sibling, leaf_hash(record))), _nothing

    return Operation("merkle_leaf_interior", "Merkle leaf and interior hash (Python hashlib)", PER_REPORT,
                     "SHA-256 (RFC 6962)", PYTHON_BACKEND, False, prepare)


def _kem_ops(cfg: CostsParams) -> list[Operation]:
    backend = crypto.resolve_backend(cfg.kem, cfg.backend, kind="kem")
    kem = crypto.get_kem(cfg.kem, backend)

    def encaps(_: np.random.Generator, __: Path) -> Prepared:
        public = kem.keygen().public
        return (lambda: kem.encaps(public)), _nothing

    def decaps(_: np.random.Generator, __: Path) -> Prepared:
        pair = kem.keygen()
        ciphertext, _shared = kem.encaps(pair.public)
        return (lambda: kem.decaps(pair.secret, ciphertext)), _nothing

    return [
        Operation(f"encaps_{cfg.kem}", f"{cfg.kem} encapsulate", PER_EPOCH, cfg.kem, backend, False, encaps),
        Operation(f"decaps_{cfg.kem}", f"{cfg.kem} decapsulate", PER_EPOCH, cfg.kem, backend, False, decaps),
    ]


def sign_operation(cfg: CostsParams, algorithm: str, backend: str) -> Operation:
    """Signing a checkpoint-sized message with a fresh key pair per trial."""
    signer = crypto.get_signer(algorithm, backend)

    def prepare(rng: np.random.Generator, _: Path) -> Prepared:
        secret = signer.keygen().secret
        message = rng.bytes(cfg.sign_message_octets)
        return (lambda: signer.sign(secret, message)), _nothing

    return Operation(f"sign_{algorithm}", f"{algorithm} sign", PER_CHECKPOINT, algorithm, backend,
                     algorithm.startswith("SLH-DSA"), prepare)


def _fsync_op(cfg: CostsParams) -> Operation:
    def prepare(rng: np.random.Generator, data_dir: Path) -> Prepared:
        block = rng.bytes(cfg.fsync_block_octets)
        path = data_dir / f".fsync-probe-{os.getpid()}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)

        def call() -> None:
            os.write(fd, block)
            os.fsync(fd)

        def cleanup() -> None:
            os.close(fd)
            path.unlink(missing_ok=True)

        return call, cleanup

    kib = cfg.fsync_block_octets / 1024
    size = f"{kib:g} KiB" if kib >= 1 else f"{cfg.fsync_block_octets} B"
    return Operation("write_fsync", f"{size} write+fsync", PER_CHECKPOINT, None, "os", True, prepare)


def table1_operations(cfg: CostsParams) -> list[Operation]:
    """The operations of AMORT-V1 Table I, in the paper's row order."""
    signers = [sign_operation(cfg, alg, crypto.resolve_backend(alg, cfg.backend)) for alg in cfg.signers]
    return [_hmac_op(cfg), _merkle_op(cfg), *_kem_ops(cfg), *signers, _fsync_op(cfg)]


def comparison_operations(cfg: CostsParams, already: list[Operation]) -> list[Operation]:
    """Every Table I signer (and ``comparison_signer``) on every other backend present: the paper's library is
    the main row when present, the others are timed beside it for the claims that depend on the library."""
    timed = {(op.algorithm, op.backend) for op in already}
    signers = list(dict.fromkeys([*cfg.signers, cfg.comparison_signer]))
    return [
        sign_operation(cfg, algorithm, name)
        for algorithm in signers for name in crypto.backends_offering(algorithm)
        if (algorithm, name) not in timed
    ]


def backend_versions(operations: list[Operation]) -> dict[str, str]:
    """Version string of every backend the operations use."""
    versions: dict[str, str] = {}
    for op in operations:
        if op.backend == PYTHON_BACKEND:
            versions[PYTHON_BACKEND] = ssl.OPENSSL_VERSION
        elif op.backend == "os":
            versions["os"] = os.uname().release
        else:
            versions[op.backend] = crypto.backend_status(op.backend).version or "unknown"
    return versions


def native_samples(cfg: CostsParams, module: Any, trial: int) -> list[pd.DataFrame]:
    """One trial of the native fast path's per-report primitives, timed in C by the module itself.

    Each sample is the mean over ``native_iterations`` calls in a C loop (a single call is too short for
    perf_counter_ns through the binding), so these rows carry batch means, not single-call times."""
    batches = [module.time_primitives(cfg.native_iterations) for _ in range(cfg.native_batches)]
    return [pd.DataFrame({
        "op_id": op_id, "operation": label, "frequency": PER_REPORT, "algorithm": algorithm,
        "backend": NATIVE_BACKEND, "in_table1": False, "trial": trial, "rep": np.arange(len(batches)),
        "ns": [sum(batch[f] for f in fields) for batch in batches], "overhead_ns": 0.0,
    }) for op_id, (label, algorithm, fields) in NATIVE_OPERATIONS.items()]


def c_loop_samples(cfg: CostsParams, rng: np.random.Generator, trial: int) -> list[pd.DataFrame]:
    """One trial of Table I's symmetric operations timed in the C loop: ``reps`` samples per operation, each the
    mean of ``c_loop_batch`` calls; ``overhead_ns`` is the loop's own cost per call measured in the same rounds."""
    inputs = symmetric.Inputs(rng.bytes(32), rng.bytes(RECORD_OCTETS), rng.bytes(32))
    gross = symmetric.measure(tuple(C_LOOP_OPERATIONS), inputs, cfg.c_loop_batch, cfg.reps)
    loop = float(np.median(gross[symmetric.EMPTY]))
    return [pd.DataFrame({
        "op_id": op_id, "operation": label.format(record=RECORD_OCTETS), "frequency": PER_REPORT,
        "algorithm": algorithm, "backend": C_LOOP_BACKEND, "in_table1": in_table1, "trial": trial,
        "rep": np.arange(cfg.reps), "ns": gross[op_id], "overhead_ns": loop,
    }) for op_id, (label, algorithm, in_table1) in C_LOOP_OPERATIONS.items()]


def _native_note(cfg: CostsParams, measured: bool, status: str) -> str:
    if measured:
        return f"timed in C by {status}: batch means of {cfg.native_iterations} calls"
    return "not measured: costs.native_batches is 0" if cfg.native_batches == 0 else f"not measured: {status}"


def operation_samples(op: Operation, cfg: CostsParams, rng: np.random.Generator, folder: Path, *, trial: int,
                      overhead: float, in_table1: bool) -> pd.DataFrame:
    """One trial of one operation: ``reps`` (``reps_slow`` for a slow one) timed calls after ``warmup``, a row each."""
    reps = cfg.reps_slow if op.slow else cfg.reps
    call, cleanup = op.prepare(rng, folder)
    try:
        samples = time_calls(call, reps, warmup=cfg.warmup)
    finally:
        cleanup()
    return pd.DataFrame({
        "op_id": op.op_id, "operation": op.label, "frequency": op.frequency, "algorithm": op.algorithm,
        "backend": op.backend, "in_table1": in_table1, "trial": trial, "rep": np.arange(reps), "ns": samples,
        "overhead_ns": overhead,
    })


def measure(settings: StudyParams, data_dir: Path, progress: bool = True) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run every trial (fresh keys per trial, operations interleaved within a trial) and return raw samples.

    When the native fast path is built, each trial also times its per-report primitives in C (rows
    ``*_native``, not in Table I): Eq. 1 reads them when the amortisation sweep runs on that path."""
    cfg = settings.costs
    table1 = table1_operations(cfg)
    operations = table1 + comparison_operations(cfg, table1)
    c_loop_ok, c_loop_status = symmetric.status()
    in_table1 = {op.op_id + "@" + op.backend for op in table1
                 if not (c_loop_ok and op.backend == PYTHON_BACKEND)}  # the C loop's rows replace them
    native_ok, native_status = native.status()
    module = native.load() if native_ok and cfg.native_batches else None
    rng = np.random.default_rng(settings.seed)
    frames = []
    overheads = []
    data_dir.mkdir(parents=True, exist_ok=True)
    steps = tqdm(total=cfg.trials * (len(operations) + (module is not None) + c_loop_ok),
                 desc="cost characterisation", disable=not progress)
    for trial in range(cfg.trials):
        overhead = empty_call_overhead_ns(reps=max(cfg.reps, 1000))
        overheads.append(overhead)
        if c_loop_ok:  # first, so Table I's rows keep the paper's order
            steps.set_postfix_str(f"trial {trial + 1}: Table I symmetric operations [C loop]")
            frames.extend(c_loop_samples(cfg, rng, trial))
            steps.update()
        for op in operations:
            steps.set_postfix_str(f"trial {trial + 1}: {op.label} [{op.backend}]")
            frames.append(operation_samples(op, cfg, rng, data_dir, trial=trial, overhead=overhead,
                                            in_table1=op.op_id + "@" + op.backend in in_table1))
            steps.update()
        if module is not None:
            steps.set_postfix_str(f"trial {trial + 1}: native fast-path primitives [C loop]")
            frames.extend(native_samples(cfg, module, trial))
            steps.update()
    steps.close()
    raw = pd.concat(frames, ignore_index=True)
    raw["net_ns"] = (raw["ns"] - raw["overhead_ns"]).clip(lower=0.0)
    versions = backend_versions(operations)
    if module is not None:
        versions[NATIVE_BACKEND] = module.openssl_version()
    if c_loop_ok:
        versions[C_LOOP_BACKEND] = c_loop_status
    metadata = {
        "study": "amort_costs",
        "backends": versions,
        "comparison_signer": cfg.comparison_signer,
        "empty_call_overhead_ns_per_trial": overheads,
        "native_primitives": _native_note(cfg, module is not None, native_status),
        "symmetric_rows": (f"timed in a C loop over {c_loop_status}: batch means of {cfg.c_loop_batch} calls, the "
                           "loop's own cost measured in the same rounds and subtracted; Python-timed beside them"
                           if c_loop_ok else f"timed from Python (the C loop is unavailable: {c_loop_status})"),
    }
    return raw, metadata
