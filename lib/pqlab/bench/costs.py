"""AMORT-V1 §V-C cost characterisation: time every Table I operation, summarise, compare backends."""

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
from pqlab.amort import native
from pqlab.amort.merkle import leaf_hash, node_hash
from pqlab.amort.messages import RECORD_OCTETS
from pqlab.bench import symmetric_timing as symmetric
from pqlab.bench.harness import empty_call_overhead_ns, time_calls
from pqlab.params import CostsParams, StudyParams
from pqlab.stats import compare, quantile_cis

PER_REPORT, PER_EPOCH, PER_CHECKPOINT = "per report", "per epoch", "per checkpoint"
NATIVE_BACKEND = "amort_native"
# op_id -> (label, algorithm, the fields of amort_native.time_primitives summed into one sample)
NATIVE_OPERATIONS = {
    "hmac_sha256_native": ("HMAC-SHA-256, 83-octet record (C fast path, keyed context)", "HMAC-SHA-256",
                           ("hmac_ns",)),
    "merkle_leaf_interior_native": ("Merkle leaf (117-octet report) and interior hash (C fast path)", "SHA-256",
                                    ("leaf_ns", "node_ns")),
}
FREQUENCIES = (PER_REPORT, PER_EPOCH, PER_CHECKPOINT)
C_LOOP_BACKEND = "libcrypto"  # Table I's symmetric rows timed in a C loop (pqlab.bench.symmetric_timing)
PYTHON_BACKEND = "hashlib"    # the same operations timed from Python: Table I's second, labelled column
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


def summarise(raw: pd.DataFrame, settings: StudyParams) -> pd.DataFrame:
    """Median, p95 and p99 (µs, empty-call overhead removed) with bootstrap CIs per operation and backend."""
    cfg = settings.costs
    rows = []
    groups = raw.groupby(["op_id", "backend"], sort=False)
    for index, ((op_id, backend), group) in enumerate(groups):
        first = group.iloc[0]
        summary = quantile_cis(group["net_ns"].to_numpy() / 1000.0, cfg.bootstrap_resamples,
                               cfg.confidence, settings.seed + index)
        rows.append({
            "op_id": op_id, "operation": first["operation"], "frequency": first["frequency"],
            "algorithm": first["algorithm"], "backend": backend, "in_table1": bool(first["in_table1"]),
            "trials": int(group["trial"].nunique()), **summary,
            "overhead_us": float(group["overhead_ns"].median() / 1000.0),
        })
    stats = pd.DataFrame(rows)
    stats["n"] = stats["n"].astype(int)
    return stats


def compare_all_backends(raw: pd.DataFrame, algorithms: list[str]) -> pd.DataFrame:
    """:func:`compare_backends` for every algorithm signed on more than one backend, one table."""
    frames = [compare_backends(raw, algorithm) for algorithm in dict.fromkeys(algorithms)]
    return pd.concat(frames, ignore_index=True)


def compare_backends(raw: pd.DataFrame, algorithm: str) -> pd.DataFrame:
    """Every pair of backends that signed with ``algorithm``: median ratio, Mann–Whitney U, Cliff's δ."""
    samples = raw[raw["op_id"] == f"sign_{algorithm}"]
    by_backend = {name: group["net_ns"].to_numpy() / 1000.0 for name, group in samples.groupby("backend")}
    names = sorted(by_backend, key=lambda n: np.median(by_backend[n]))
    rows = []
    for i, fast in enumerate(names):
        for slow in names[i + 1:]:
            result = compare(by_backend[slow], by_backend[fast])
            rows.append({
                "algorithm": algorithm, "slower": slow, "faster": fast,
                "median_slower_us": float(np.median(by_backend[slow])),
                "median_faster_us": float(np.median(by_backend[fast])),
                "ratio": result.median_ratio, "mann_whitney_u": result.u_statistic,
                "p_value": result.p_value, "cliffs_delta": result.cliffs_delta,
            })
    return pd.DataFrame(rows, columns=["algorithm", "slower", "faster", "median_slower_us", "median_faster_us",
                                       "ratio", "mann_whitney_u", "p_value", "cliffs_delta"])


def table1(stats: pd.DataFrame) -> pd.DataFrame:
    """The Table I view: one row per operation on its chosen backend, in µs; the symmetric rows (timed in C)
    carry the same operation timed from Python as a second, labelled column."""
    view = stats[stats["in_table1"]]
    columns = {
        "operation": "Operation", "frequency": "Frequency", "backend": "Backend", "n": "n",
        "median": "Median [µs]", "median_lo": "Median CI low", "median_hi": "Median CI high",
        "p95": "p95 [µs]", "p99": "p99 [µs]", "p99_lo": "p99 CI low", "p99_hi": "p99 CI high",
    }
    out = view[list(columns)].rename(columns=columns).reset_index(drop=True)
    python = stats[(stats["backend"] == PYTHON_BACKEND) & ~stats["in_table1"]].set_index("op_id")
    ids = view["op_id"].reset_index(drop=True)
    out["Python-timed median [µs]"] = ids.map(python["median"]) if len(python) else np.nan
    out["Python-timed p99 [µs]"] = ids.map(python["p99"]) if len(python) else np.nan
    return out


def _row(row: Any) -> dict[str, Any]:
    return {"median_us": round(row.median, 4), "p95_us": round(row.p95, 4), "p99_us": round(row.p99, 4),
            "backend": row.backend, "n": int(row.n)}


def reference_operations(stats: pd.DataFrame, metadata: dict[str, Any]) -> dict[str, Any]:
    """Table I's symmetric rows as timed in C: the reference operations for comparing timings across machines
    (median and p99 with their bootstrap intervals)."""
    rows = stats[stats["in_table1"] & (stats["backend"] == C_LOOP_BACKEND)]
    return {row.op_id: {"median_us": round(row.median, 4), "median_lo_us": round(row.median_lo, 4),
                        "median_hi_us": round(row.median_hi, 4), "p99_us": round(row.p99, 4),
                        "p99_lo_us": round(row.p99_lo, 4), "p99_hi_us": round(row.p99_hi, 4),
                        "mean_us": round(row.mean, 4), "n": int(row.n), "backend": row.backend,
                        "method": metadata.get("symmetric_rows", "")}
            for row in rows.itertuples()}


def library_dependent(stats: pd.DataFrame, signers: list[str], main: dict[str, str]) -> dict[str, Any]:
    """Per signer and backend: the signing median and mean, and what the paper's "the durable write dominates
    checkpoint cost" claim becomes with that library (4 KiB write+fsync median over the signing median)."""
    write = stats[(stats["op_id"] == "write_fsync") & stats["in_table1"]]
    write_us = float(write["median"].iloc[0]) if len(write) else float("nan")
    out: dict[str, Any] = {"main_backend": dict(main), "write_fsync_median_us": round(write_us, 4), "signers": {}}
    for algorithm in signers:
        rows = stats[stats["op_id"] == f"sign_{algorithm}"]
        out["signers"][algorithm] = {
            row.backend: {"median_us": round(row.median, 4), "mean_us": round(row.mean, 4),
                          "main": row.backend == main.get(algorithm),
                          "write_over_sign": round(write_us / row.median, 4) if row.median > 0 else None,
                          "dominant_with_log": "durable write" if write_us > row.median else "signature"}
            for row in rows.itertuples()}
    return out


def metrics(stats: pd.DataFrame, comparison: pd.DataFrame, metadata: dict[str, Any]) -> dict[str, Any]:
    """Headline numbers for ``dvc metrics show`` and REPORT.md."""
    table = {row.op_id: _row(row) for row in stats[stats["in_table1"]].itertuples()}
    python = stats[(stats["backend"] == PYTHON_BACKEND) & ~stats["in_table1"]]
    c_variants = stats[(stats["backend"] == C_LOOP_BACKEND) & ~stats["in_table1"]]
    signing = stats[stats["op_id"].str.startswith("sign_")]
    by_backend: dict[str, dict[str, Any]] = {}
    for row in signing.itertuples():
        by_backend.setdefault(row.algorithm, {})[row.backend] = {"median_us": round(row.median, 4),
                                                                 "mean_us": round(row.mean, 4),
                                                                 "backend": row.backend}

    def _ratios(frame: pd.DataFrame) -> dict[str, Any]:
        return {f"{r.slower}/{r.faster}": {"ratio": round(r.ratio, 3), "cliffs_delta": round(r.cliffs_delta, 4),
                                            "p_value": float(f"{r.p_value:.3g}")} for r in frame.itertuples()}

    main_comparison = comparison[comparison["algorithm"] == metadata.get("comparison_signer", "ML-DSA-65")]
    native_rows = stats[stats["backend"] == NATIVE_BACKEND]
    main = {row.algorithm: row.backend for row in signing[signing["in_table1"]].itertuples()}
    return {
        "table1": table,
        "table1_python": {row.op_id: _row(row) for row in python.itertuples()},
        "symmetric_c_variants": {row.op_id: _row(row) for row in c_variants.itertuples()},
        "reference_operations": reference_operations(stats, metadata),
        "library_dependent": library_dependent(stats, sorted(set(signing["algorithm"])), main),
        "backend_comparison_by_algorithm": {algorithm: _ratios(group)
                                            for algorithm, group in comparison.groupby("algorithm")},
        "native_per_report": {row.op_id: {"median_us": round(row.median, 4), "p99_of_batch_means_us": round(row.p99, 4),
                                          "n_batches": int(row.n)} for row in native_rows.itertuples()},
        "sign_by_backend": by_backend,
        "backend_comparison": _ratios(main_comparison),
        "empty_call_overhead_ns": round(float(np.median(metadata["empty_call_overhead_ns_per_trial"])), 1),
    }
