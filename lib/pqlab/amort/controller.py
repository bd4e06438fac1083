"""The controller (verifier) of AMORT-V1: epochs, evidence-tag checks, the Merkle log and signed checkpoints."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from pqlab.amort import kdf, merkle
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import KEM_ALGORITHM, PublicKey, SigningKey, verify_certificate
from pqlab.amort.messages import (
    Certificate,
    Checkpoint,
    CloseEntry,
    ConsistencyProof,
    EpochConfirm,
    EpochOpen,
    EpochReq,
    InclusionProof,
    Report,
    Span,
)
from pqlab.crypto import get_kem
from pqlab.errors import PqlabError

GENESIS = bytes(32)
LINK_DOMAIN = b"AMORT.LINK"


def link_hash(checkpoint: bytes) -> bytes:
    """The hash the next checkpoint carries as ``prev_hash``: SHA-256(dom ‖ encoded signed checkpoint)."""
    return hashlib.sha256(LINK_DOMAIN + checkpoint).digest()


@dataclass(frozen=True)
class Pending:
    """One verified report waiting for the next checkpoint."""

    dev_id: bytes
    epoch: int
    seq: int
    leaf: bytes


@dataclass
class _DeviceState:
    cert: Certificate | None  # None: enrolled without a certificate (fast-path harnesses install K_evid directly)
    revoked: bool = False
    epoch: int = 0
    k_evid: bytes | None = None
    k0: bytes = b""
    tag_len: int = 16
    policy_id: int = 0
    expiry: int = 0
    last_seen: int = 0
    last_committed: int = 0
    opens: list[int] = field(default_factory=list)
    pending_req: tuple[int, bytes, bytes] | None = None  # (epoch, EPOCH_REQ octets, shared secret)
    open_messages: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class ControllerConfig:
    """Policy knobs of one controller (defaults follow §IV: 16-octet tags, k reports per checkpoint)."""

    k: int = 64
    tag_len: int = 16
    policy_id: int = 1
    epoch_lifetime: int = 86_400_000  # expiry = open time + lifetime (same clock as record timestamps)
    max_restarts: int = 3  # more epoch opens than this within restart_window -> ERR_RESTART_RATE
    restart_window: int = 60_000
    reference_digests: frozenset[bytes] = frozenset()  # policy: digests considered trustworthy (empty: any)


class Controller:
    """Verifies reports before any policy check, accumulates them, and commits each batch with one signature
    and exactly one durable write (append + fsync to the checkpoint log)."""

    def __init__(self, controller_id: bytes, key: SigningKey | None, ca: PublicKey | None, log: DurableLog | None,
                 config: ControllerConfig | None = None) -> None:
        # key, ca and log may be None for a controller that only verifies reports and builds checkpoint bodies
        # (the reference side of pqlab.amort.fastpath): it then cannot sign, register certificates or persist.
        self.controller_id = controller_id
        self.key = key
        self.public = PublicKey.of(key) if key is not None else None
        self.ca = ca
        self.log = log
        self.config = config or ControllerConfig()
        self._kem = get_kem(KEM_ALGORITHM)
        self._devices: dict[bytes, _DeviceState] = {}
        self.batch: list[Pending] = []
        self._closes: list[tuple[bytes, int, int]] = []  # (dev_id, epoch, last_seen) awaiting commitment
        self.tree = merkle.IncrementalTree()
        self.leaves: list[bytes] = []
        self.leaf_index: dict[tuple[bytes, int, int], int] = {}
        self.checkpoints: list[bytes] = []
        self.prev_hash = GENESIS
        self.verdicts: dict[bytes, bool] = {}
        self._committed_hi: dict[tuple[bytes, int], int] = {}

    # --- registration and revocation ------------------------------------------------------------------
    def register(self, cert_bytes: bytes) -> bytes:
        """Accept a CA-signed device certificate; returns its dev_id."""
        if self.ca is None:
            raise PqlabError("this controller holds no CA key to check certificates with", field="ca")
        cert = verify_certificate(cert_bytes, self.ca)
        self._devices[cert.dev_id] = _DeviceState(cert)
        return cert.dev_id

    def enroll(self, dev_id: bytes) -> None:
        """Know a device without a certificate: its epochs can only be installed with :meth:`install_epoch`
        (the batch fast path and its differential vectors, which take K_evid as input)."""
        if dev_id not in self._devices:
            self._devices[dev_id] = _DeviceState(None)

    def revoke(self, dev_id: bytes) -> None:
        """Revoke one identity; every other identity keeps attesting."""
        self._state(dev_id, "dev_id").revoked = True

    def _state(self, dev_id: bytes, where: str) -> _DeviceState:
        state = self._devices.get(dev_id)
        if state is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"device {dev_id.hex()} is not registered", field=where)
        if state.revoked:
            raise AmortError(Code.REVOKED, f"device {dev_id.hex()} is revoked", field=where)
        return state

    # --- §IV-A epochs ------------------------------------------------------------------------------------
    def open_epoch(self, dev_id: bytes, now: int) -> bytes:
        """EPOCH_REQ: encapsulate to the certified ML-KEM key for epoch current+1."""
        state = self._state(dev_id, "dev_id")
        recent = [t for t in state.opens if now - t < self.config.restart_window]
        if len(recent) >= self.config.max_restarts:
            raise AmortError(Code.ERR_RESTART_RATE, f"{len(recent)} epochs opened within "
                             f"{self.config.restart_window} ms", field="dev_id")
        if state.cert is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"device {dev_id.hex()} has no certificate to encapsulate to",
                             field="dev_id")
        state.opens = [*recent, now]
        epoch = state.epoch + 1
        ciphertext, shared = self._kem.encaps(state.cert.kem_pk)
        req = EpochReq(self.controller_id, dev_id, epoch, state.cert.serial, ciphertext).encode()
        state.pending_req = (epoch, req, shared)
        return req

    def confirm(self, confirm_bytes: bytes, now: int) -> bytes:
        """Check EPOCH_CONFIRM's MAC, derive K_evid, and return the signed EPOCH_OPEN."""
        conf = EpochConfirm.decode(confirm_bytes)
        state = self._state(conf.dev_id, "EpochConfirm.dev_id")
        if state.pending_req is None or state.pending_req[0] != conf.epoch:
            raise AmortError(Code.EPOCH_STALE, "no EPOCH_REQ outstanding for this epoch", field="EpochConfirm.epoch")
        epoch, req, shared = state.pending_req
        th = kdf.transcript_hash(req, conf.tbs())
        k_confirm, k_evid = kdf.epoch_keys(th, shared, conf.dev_id, epoch)
        if not kdf.mac_ok(k_confirm, th, conf.mac):
            raise AmortError(Code.MAC_FAIL, "EPOCH_CONFIRM MAC does not verify", field="EpochConfirm.mac")
        opened = EpochOpen(self.controller_id, conf.dev_id, epoch, self.config.tag_len, self.config.policy_id,
                           conf.k0, now + self.config.epoch_lifetime, state.cert.serial, th, self._sig_alg())
        data = opened.replace(sig=self.key.sign(opened)).encode()
        self.install_epoch(conf.dev_id, epoch, k_evid, k0=conf.k0, tag_len=self.config.tag_len,
                           policy_id=self.config.policy_id, expiry=opened.expiry)
        state.pending_req = None
        state.open_messages[epoch] = data
        return data

    def install_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, k0: bytes = b"", tag_len: int,
                      policy_id: int, expiry: int) -> None:
        """Make ``epoch`` the device's current epoch under ``k_evid`` (what :meth:`confirm` does once the
        EPOCH_CONFIRM MAC verifies); closes the previous epoch, if any. EPOCH_STALE unless the epoch is newer."""
        state = self._state(dev_id, "dev_id")
        if epoch <= state.epoch:
            raise AmortError(Code.EPOCH_STALE, f"epoch {epoch} does not exceed current {state.epoch}", field="epoch")
        if state.k_evid is not None:
            self._close_epoch(dev_id, state)
        state.epoch, state.k_evid, state.k0 = epoch, k_evid, k0
        state.tag_len, state.policy_id, state.expiry = tag_len, policy_id, expiry
        state.last_seen = state.last_committed = 0

    def _close_epoch(self, dev_id: bytes, state: _DeviceState) -> None:
        """Fresh-epoch recovery: uncommitted reports of the old epoch are lost; EPOCH_CLOSE makes that visible."""
        self.batch = [p for p in self.batch if not (p.dev_id == dev_id and p.epoch == state.epoch)]
        self._closes.append((dev_id, state.epoch, state.last_seen))

    def evidence_key(self, dev_id: bytes) -> tuple[bytes, int]:
        """(K_evid, tag length) of the device's current epoch. The controller holds the evidence key — which is
        exactly why an evidence tag proves nothing about origin to a third party (§IV-D); the attack matrix
        uses this to play the malicious controller."""
        state = self._state(dev_id, "dev_id")
        if state.k_evid is None:
            raise AmortError(Code.EPOCH_STALE, "device has no open epoch", field="dev_id")
        return state.k_evid, state.tag_len

    def epoch_open(self, dev_id: bytes, epoch: int) -> bytes:
        """The signed EPOCH_OPEN of one epoch (auditors take K0 from it)."""
        return self._devices[dev_id].open_messages[epoch]

    def opened_epochs(self, dev_id: bytes) -> list[int]:
        """The epochs this controller opened for a device, oldest first (none for an unknown device)."""
        state = self._devices.get(dev_id)
        return sorted(state.open_messages) if state is not None else []

    # --- §IV-B/C reports -------------------------------------------------------------------------------
    def ingest(self, report_bytes: bytes) -> Report:
        """Decode, authenticate (evidence tag first), sequence-check, evaluate policy, then accumulate."""
        report = Report.decode(report_bytes)
        rec = report.record
        state = self._state(rec.dev_id, "Record.dev_id")
        if state.k_evid is None or rec.epoch != state.epoch:
            raise AmortError(Code.EPOCH_STALE, f"record epoch {rec.epoch}, device is in epoch {state.epoch}",
                             field="Record.epoch")
        if rec.timestamp > state.expiry:
            raise AmortError(Code.EPOCH_STALE, f"record time {rec.timestamp} is past the epoch expiry {state.expiry}",
                             field="Record.timestamp")
        if len(report.tag) != state.tag_len:
            raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag of {len(report.tag)} octets, epoch fixes {state.tag_len}",
                             field="Report.tag_len")
        if not kdf.mac_ok(state.k_evid, rec.encode(), report.tag):
            raise AmortError(Code.MAC_FAIL, "evidence tag does not verify under K_evid", field="Report.tag")
        if rec.seq <= state.last_seen:
            raise AmortError(Code.SEQ_DUPLICATE, f"seq {rec.seq} already seen (last {state.last_seen})",
                             field="Record.seq")
        if rec.seq != state.last_seen + 1:
            raise AmortError(Code.SEQ_GAP, f"seq {rec.seq} skips after {state.last_seen}", field="Record.seq")
        refs = self.config.reference_digests
        self.verdicts[rec.dev_id] = not refs or rec.digest in refs
        state.last_seen = rec.seq
        self.batch.append(Pending(rec.dev_id, rec.epoch, rec.seq, report_bytes))
        if len(self.batch) >= self.config.k:
            self.checkpoint()
        return report

    # --- §IV-C checkpoints -----------------------------------------------------------------------------
    def checkpoint(self) -> bytes:
        """Commit the current batch: append leaves, sign, one durable write."""
        batch, self.batch = self.batch, []
        return self.commit(batch)

    def commit(self, batch: list[Pending], spans: tuple[Span, ...] | None = None) -> bytes:
        """Append ``batch`` to the log and sign a checkpoint over it (``spans`` default: derived from the batch)."""
        if self.log is None:
            raise PqlabError("this controller has no checkpoint log to commit to", field="log")
        body = self.build_checkpoint(batch, spans)
        data = self.sign(body)
        self.log.append(data)
        self.record_checkpoint(data, body.spans)
        return data

    def build_checkpoint(self, batch: list[Pending], spans: tuple[Span, ...] | None = None,
                         sig_alg: int | None = None) -> Checkpoint:
        """The unsigned checkpoint over ``batch``: its leaves are appended to the tree and the pending
        EPOCH_CLOSE entries are taken; :meth:`record_checkpoint` must follow with the signed encoding."""
        for item in batch:
            self.leaf_index[(item.dev_id, item.epoch, item.seq)] = self.tree.append(item.leaf)
            self.leaves.append(item.leaf)
        spans = spans if spans is not None else spans_of(batch)
        closes = []
        for dev_id, epoch, last_seen in self._closes:
            committed = max([s.seq_hi for s in spans if s.dev_id == dev_id and s.epoch == epoch],
                            default=self._committed_hi.get((dev_id, epoch), 0))
            closes.append(CloseEntry(dev_id, epoch, committed, last_seen))
        self._closes = []
        return Checkpoint(self.controller_id, len(self.checkpoints), self.prev_hash, len(self.tree), self.tree.root(),
                          spans, tuple(closes), self._sig_alg() if sig_alg is None else sig_alg)

    def _sig_alg(self) -> int:
        if self.key is None:
            raise PqlabError("no signing key: pass the checkpoint's sig_alg", field="sig_alg")
        return self.key.alg_id

    def record_checkpoint(self, data: bytes, spans: tuple[Span, ...]) -> None:
        """Chain the signed checkpoint ``data`` (already durable) and advance the committed ranges of ``spans``."""
        self.checkpoints.append(data)
        self.prev_hash = link_hash(data)
        for span in spans:
            key = (span.dev_id, span.epoch)
            self._committed_hi[key] = max(self._committed_hi.get(key, 0), span.seq_hi)
            state = self._devices.get(span.dev_id)
            if state is not None and state.epoch == span.epoch:
                state.last_committed = self._committed_hi[key]

    def sign(self, body: Checkpoint) -> bytes:
        """Sign a checkpoint body with the controller key (also how a malicious controller equivocates)."""
        if self.key is None:
            raise PqlabError("this controller holds no signing key", field="key")
        return body.replace(sig=self.key.sign(body)).encode()

    # --- proofs for auditors ---------------------------------------------------------------------------
    def inclusion(self, dev_id: bytes, epoch: int, seq: int, tree_size: int | None = None) -> tuple[bytes, bytes]:
        """(leaf octets, encoded InclusionProof) for one committed report."""
        index = self.leaf_index[(dev_id, epoch, seq)]
        size = len(self.tree) if tree_size is None else tree_size
        path = tuple(self.tree.inclusion_proof(index, size))
        return self.leaves[index], InclusionProof(index, size, path).encode()

    def consistency(self, old_size: int, new_size: int) -> bytes:
        """An encoded ConsistencyProof between two committed tree sizes."""
        return ConsistencyProof(old_size, new_size, tuple(self.tree.consistency_proof(old_size, new_size))).encode()


def spans_of(batch: list[Pending]) -> tuple[Span, ...]:
    """One span per (dev_id, epoch) in the batch, in canonical (dev_id, epoch) order, with its subtree root."""
    groups: dict[tuple[bytes, int], list[Pending]] = {}
    for item in batch:
        groups.setdefault((item.dev_id, item.epoch), []).append(item)
    spans = []
    for (dev_id, epoch), items in sorted(groups.items()):
        spans.append(Span(dev_id, epoch, items[0].seq, items[-1].seq, merkle.root([i.leaf for i in items])))
    return tuple(spans)
