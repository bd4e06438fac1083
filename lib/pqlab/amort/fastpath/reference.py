"""The reference side of the batch fast path: thin adapters over the reference Controller and Device logic."""

from __future__ import annotations

import hashlib
from typing import Any

from pqlab.amort import merkle
from pqlab.amort.chain import DisclosureChain
from pqlab.amort.controller import Clock, Controller, ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import encode_report
from pqlab.amort.errors import AmortError, Code, FastpathError
from pqlab.amort.fastpath.base import (
    MAX_BATCH,
    BatchController,
    BatchInput,
    ReportDevice,
    Verdicts,
    check_octets,
    code_number,
    epoch_arguments,
    unframe,
)
from pqlab.amort.messages import Checkpoint
from pqlab.amort.profile import Profile
from pqlab.errors import PqlabError

MAX_SEQ = (1 << 64) - 1

_NEVER = 1 << 62  # the wrapped Controller never checkpoints by itself: checkpoint_body() decides


class ReferenceBatchController(BatchController):
    """Runs every report through ``Controller.ingest`` and every checkpoint through its builder."""

    path = "reference"

    def __init__(self, deployment: Deployment, sig_alg: int, clock: Clock | None) -> None:
        super().__init__(deployment, sig_alg, clock)
        self._ctl = Controller(deployment, None, None, ControllerConfig(k=_NEVER))
        self._body: Checkpoint | None = None

    # --- epochs and revocation -------------------------------------------------------------------------
    def register_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, not_before: int, tag_len: int = 16,
                       expiry: int = (1 << 64) - 1, policy_id: int = 1) -> None:
        dev_id, epoch, k_evid, tag_len, expiry, policy_id, not_before = epoch_arguments(
            dev_id, epoch, k_evid, tag_len, expiry, policy_id, not_before)
        self._ctl.enroll(dev_id)
        self._ctl.install_epoch(dev_id, epoch, k_evid, tag_len=tag_len, policy_id=policy_id, expiry=expiry,
                                not_before=not_before)

    def revoke(self, dev_id: bytes) -> None:
        self._ctl.revoke(check_octets(dev_id, 8, "dev_id"))

    # --- reports and checkpoints -------------------------------------------------------------------------
    def ingest(self, batch: BatchInput, *, now: int | None = None) -> Verdicts:
        now = self.now(now)
        reports = unframe(batch) if isinstance(batch, (bytes, bytearray, memoryview)) else list(batch)
        if len(reports) > MAX_BATCH:
            raise FastpathError(f"more than {MAX_BATCH} reports in one batch", field="batch")
        codes = bytearray(len(reports))
        fields: dict[int, str] = {}
        for i, report in enumerate(reports):
            if isinstance(report, (bytearray, memoryview)):
                report = bytes(report)  # the pending leaf must not change after it was verified
            try:
                self._ctl.ingest(report, now)
            except AmortError as exc:
                codes[i] = code_number(exc.reason)
                fields[i] = exc.field or ""
        return Verdicts(bytes(codes), fields)

    def checkpoint_body(self) -> bytes:
        if self._body is not None:
            raise FastpathError("a checkpoint body is awaiting commit", field="checkpoint_body")
        batch, self._ctl.batch = self._ctl.batch, []
        self._body = self._ctl.build_checkpoint(batch, sig_alg=self.sig_alg)
        return self._body.tbs()

    def commit(self, signature: bytes) -> bytes:
        if self._body is None:
            raise FastpathError("no checkpoint body to commit", field="commit")
        if not isinstance(signature, (bytes, bytearray)) or len(signature) > 0xFFFF:
            raise PqlabError("must be bytes shorter than 65536 octets", field="signature")
        body, self._body = self._body, None
        data = body.replace(sig=bytes(signature)).encode()
        self._ctl.record_checkpoint(data, body)
        return data

    # --- state -------------------------------------------------------------------------------------------
    @property
    def tree_size(self) -> int:
        return len(self._ctl.tree)

    @property
    def root(self) -> bytes:
        return self._ctl.tree.root()

    @property
    def index(self) -> int:
        return len(self._ctl.checkpoints) + (self._body is not None)

    @property
    def prev_hash(self) -> bytes:
        return self._ctl.prev_hash

    @property
    def pending(self) -> int:
        return len(self._ctl.batch)

    @property
    def awaiting_commit(self) -> bool:
        return self._body is not None

    def _device(self, dev_id: bytes) -> Any:
        state = self._ctl._devices.get(check_octets(dev_id, 8, "dev_id"))
        if state is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"device {bytes(dev_id).hex()} is not registered", field="dev_id")
        return state

    def device(self, dev_id: bytes) -> dict[str, Any]:
        return _device_state(bytes(dev_id), self._device(dev_id))

    def state(self) -> dict[str, Any]:
        ctl = self._ctl
        pending = hashlib.sha256(b"".join(merkle.leaf_hash(p.leaf) for p in ctl.batch)).hexdigest()
        return {
            "index": self.index,
            "prev_hash": ctl.prev_hash.hex(),
            "tree_size": self.tree_size,
            "root": self.root.hex(),
            "pending": self.pending,
            "pending_leaves": pending,
            "awaiting_commit": self.awaiting_commit,
            "closes": [[d.hex(), e, s] for d, e, s in ctl._closes],
            "devices": [_device_state(d, s) for d, s in sorted(ctl._devices.items())],
        }


def _device_state(dev_id: bytes, s: Any) -> dict[str, Any]:
    keys = s.current
    return {"dev_id": dev_id.hex(), "revoked": s.revoked, "epoch": s.epoch,
            "tag_len": keys.tag_len if keys else 16, "policy_id": keys.policy_id if keys else 0,
            "expiry": keys.expiry if keys else 0, "not_before": keys.not_before if keys else 0,
            "last_seen": s.last_seen, "last_committed": s.last_committed, "last_timestamp": s.last_timestamp}


class ReferenceDevice(ReportDevice):
    """The device's per-report path with the reference model's record encoder, MAC and precomputed chain."""

    path = "reference"

    def __init__(self, dev_id: bytes, epoch: int, k_evid: bytes, chain_seed: bytes, tag_len: int, policy_id: int,
                 chain_length: int, next_seq: int, profile: Profile) -> None:
        super().__init__(dev_id, epoch, tag_len, policy_id, chain_length, profile)
        self._k_evid = k_evid
        self._chain = DisclosureChain(chain_seed, chain_length)
        self._seq = next_seq - 1

    def report(self, digest: bytes, timestamp: int, *, flags: int = 0, disclosure_tag: bool = True) -> bytes:
        if self._seq >= MAX_SEQ:  # Device.report's check: the epoch cannot go on (N11)
            raise AmortError(Code.EPOCH_STALE, "sequence numbers are exhausted; open a new epoch", field="seq")
        data = encode_report(self.dev_id, self.epoch, self._seq + 1, timestamp, digest, self.policy_id, flags,
                             self._k_evid, self.tag_len, self._chain if disclosure_tag else None,
                             profile=self.profile)
        self._seq += 1
        return data

    def chain_key(self, j: int) -> bytes:
        if isinstance(j, bool) or not isinstance(j, int):
            raise AmortError(Code.CHAIN_FAIL, f"key index must be an integer, got {j!r}", field="j")
        return self._chain.key(j)

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def anchor(self) -> bytes:
        return self._chain.anchor
