"""The AMORT-V1 batch fast path: one interface over two implementations, the Python reference and C (§V-A).

The paper separates protocol correctness (the reference model) from performance measurement (a C
implementation of the per-report path) and ties them with 149 differential vectors
(``tests/vectors/amort_differential/``, ``pqlab amort-vectors``). Both implementations here take the same
calls and must give the same outputs and state, byte for byte. Pick one with ``path``:
``"reference"`` (a thin adapter over :class:`pqlab.amort.controller.Controller`'s own checks, tree and
checkpoint builder) or ``"native"`` (``pqlab.amort.fastpath.native``: C + OpenSSL libcrypto). Params select it with
``amort.controller_path``; :func:`resolve_controller_path` says which path is actually used and why.

Both take the deployment (:class:`pqlab.amort.deployment.Deployment`: controller identifier, profile, freshness
window) — the one object that says which variant and wire format every party runs.

Controller (verifier) side::

    ctl = open_controller("native", deployment, sig_alg="ML-DSA-65", clock=lambda: now_ms())
    ctl.register_epoch(dev_id, epoch, k_evid, not_before=open_time, tag_len=16, expiry=2**64 - 1, policy_id=1)
    verdicts = ctl.ingest([report_1, report_2, ...])   # or ctl.ingest(frame(reports)): one bytes buffer
    verdicts = ctl.ingest(reports, now=t)              # the time given instead of read from the clock
    verdicts[0].accepted, verdicts[0].code, verdicts[0].field   # code: an AmortError Code, or None
    verdicts.codes                                     # one octet per report: 0 accepted, else code_number()
    body = ctl.checkpoint_body()                       # the to-be-signed Checkpoint octets (leaves appended)
    signed = ctl.commit(signature)                     # the signed Checkpoint encoding; chains prev_hash
    signed = sign_and_commit(ctl, key, log)            # the same with one signature and one DurableLog fsync
    ctl.tree_size, ctl.root, ctl.index, ctl.prev_hash, ctl.pending, ctl.awaiting_commit
    ctl.last_seen(dev_id), ctl.last_committed(dev_id), ctl.epoch(dev_id), ctl.state()
    ctl.revoke(dev_id)

``ingest`` needs the time (``now``, else the ``clock``; with neither it refuses the whole batch with
:class:`pqlab.amort.errors.ClockRequired` rather than accept reports of any age) and checks every report exactly as
``Controller.ingest`` does and in the same order — decoding (TRUNCATED, TRAILING, BAD_DOMAIN, BAD_VERSION,
TAGLEN_DOWNGRADE), DEVICE_UNKNOWN / REVOKED, EPOCH_STALE (epoch, then expiry), TAGLEN_DOWNGRADE (tag length of the
epoch), MAC_FAIL, SEQ_DUPLICATE / SEQ_GAP, EPOCH_STALE (timestamp: before the open, backwards, too old) — and
returns one :class:`Verdict` per report instead of raising; ``field`` is the reference model's field name
(with the byte offset for decoding errors, e.g. ``Report.digest@45``). Accepted reports wait in the pending
batch; ``checkpoint_body`` appends them to the RFC 6962 tree, builds one span per (device, epoch) with its
subtree root and up to 65,535 pending EPOCH_CLOSE entries — the rest wait for the next body (a device's previous
epoch is closed when ``register_epoch`` installs a newer one, and its uncommitted reports are dropped) — and returns
the octets
to sign. Until ``commit`` (one per body) a second body is refused; ingesting, registering and revoking go
on meanwhile into the next batch. A batch holds at most :data:`MAX_BATCH` reports. The signature is never
checked here: the controller signs its own body, auditors verify it.

Device (prover) side — the unit a control-cycle study times::

    dev = open_device("native", deployment, dev_id, epoch, k_evid, chain_seed, tag_len=16, chain_length=1024)
    report = dev.report(digest, timestamp, flags=0, disclosure_tag=True)
    dev.seq, dev.anchor, dev.chain_key(j), dev.state()

``report`` builds the 83-octet record with the next sequence number, its evidence tag under K_evid and its
disclosure tag under K_seq, and advances the disclosure chain; its output equals
:meth:`pqlab.amort.device.Device.report`'s for the same keys. The C functions behind it are a plain C API
in ``pqlab/amort/fastpath/native/amort_core.h`` for harnesses written in C.

Errors: a report's rejection is a verdict; a bad argument is a :class:`pqlab.errors.PqlabError` naming the
field (protocol-level ones an :class:`AmortError`: REVOKED, DEVICE_UNKNOWN, EPOCH_STALE, TAGLEN_DOWNGRADE,
CHAIN_FAIL); calls out of order, bad framing and oversized batches are :class:`FastpathError`.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

from pqlab.amort.controller import Clock
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import FastpathError
from pqlab.amort.fastpath import native
from pqlab.amort.fastpath.base import (  # noqa: F401  (the public names of the fast path live here too)
    MAX_BATCH,
    MAX_CHAIN_LENGTH,
    NO_EXPIRY,
    PATHS,
    BatchController,
    BatchInput,
    ReportDevice,
    Verdict,
    Verdicts,
    check_octets,
    check_tag_len,
    check_uint,
    checkpoint_context,
    code_number,
    controller_arguments,
    device_arguments,
    epoch_arguments,
    frame,
    sig_alg_id,
    unframe,
)
from pqlab.amort.fastpath.native.adapter import NativeBatchController, NativeDevice
from pqlab.amort.fastpath.reference import ReferenceBatchController, ReferenceDevice
from pqlab.amort.identity import SigningKey
from pqlab.amort.messages import SIG_ALGORITHMS
from pqlab.errors import ParamsError, PqlabError


class ResolvedPath(NamedTuple):
    """The controller path a run actually uses and why (record both in run metadata)."""

    path: str
    reason: str


def native_status() -> tuple[bool, str]:
    """(available, description) of the C extension."""
    return native.status()


def resolve_controller_path(choice: str) -> ResolvedPath:
    """The path used for ``choice`` (``amort.controller_path``): native falls back to reference only with a
    reason and a RuntimeWarning, never silently."""
    if choice not in PATHS:
        raise ParamsError(f"must be one of {PATHS}, got {choice!r}", field="amort.controller_path")
    if choice == "reference":
        return ResolvedPath("reference", "reference requested")
    ok, why = native_status()
    if ok:
        return ResolvedPath("native", f"native requested and loaded: {why}")
    reason = f"native requested but unavailable ({why}); using the reference model"
    warnings.warn(f"pqlab.amort.fastpath: {reason}", RuntimeWarning, stacklevel=2)
    return ResolvedPath("reference", reason)


def open_controller(path: str, deployment: Deployment, *, sig_alg: int | str = "ML-DSA-65",
                    clock: Clock | None = None) -> BatchController:
    """A fresh batch controller on ``path`` ("reference" or "native"; native raises FastpathError if not built)
    for ``deployment`` (its identifier, profile and freshness window). ``clock`` (ms) gives ``ingest`` the time
    when a call does not pass ``now``."""
    args = controller_arguments(deployment, sig_alg, clock)
    if path == "reference":
        return ReferenceBatchController(*args)
    if path == "native":
        return NativeBatchController(*args)
    raise FastpathError(f"unknown path {path!r}; one of {PATHS}", field="path")


def open_device(path: str, deployment: Deployment, dev_id: bytes, epoch: int, k_evid: bytes, chain_seed: bytes, *,
                tag_len: int = 16, policy_id: int = 1, chain_length: int = 1024, next_seq: int = 1) -> ReportDevice:
    """A device of ``deployment`` (its profile) in ``epoch`` with evidence key ``k_evid`` and a disclosure chain
    from ``chain_seed`` (K_L); its next report gets ``next_seq`` (above 1: an epoch resumed after a restart)."""
    if not isinstance(deployment, Deployment):
        raise PqlabError(f"must be a Deployment, got {type(deployment).__name__}", field="deployment")
    args = device_arguments(dev_id, epoch, k_evid, chain_seed, tag_len, policy_id, chain_length, next_seq)
    profile = deployment.profile
    if path == "reference":
        return ReferenceDevice(*args, profile)
    if path == "native":
        return NativeDevice(*args, profile)
    raise FastpathError(f"unknown path {path!r}; one of {PATHS}", field="path")


def sign_and_commit(ctl: BatchController, key: SigningKey, log: DurableLog | None = None) -> bytes:
    """One checkpoint: body, one signature (pqlab.crypto via ``key``), commit, one durable write."""
    if key.alg_id != ctl.sig_alg:
        raise PqlabError(f"key is {key.algorithm}, the controller signs with {SIG_ALGORITHMS[ctl.sig_alg]}",
                         field="key")
    body = ctl.checkpoint_body()
    data = ctl.commit(key.signer.sign(key.secret, body, checkpoint_context(ctl.profile)))
    if log is not None:
        log.append(data)
    return data
