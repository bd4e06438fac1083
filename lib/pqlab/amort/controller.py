"""The controller (verifier) of AMORT-V1: epochs, evidence-tag checks, the Merkle log and signed checkpoints."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from pqlab.amort import kdf, merkle
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, ClockRequired, Code
from pqlab.amort.identity import KEM_ALGORITHM, PublicKey, SigningKey, verify_certificate
from pqlab.amort.messages import (
    RECORD_OCTETS,
    AnchorStatement,
    Certificate,
    Checkpoint,
    CloseEntry,
    ConsistencyProof,
    EpochConfirm,
    EpochOpen,
    EpochReq,
    HardenedEpochConfirm,
    HardenedEpochOpen,
    HardenedEpochReq,
    InclusionProof,
    Report,
    Span,
    decode_for_variant,
)
from pqlab.amort.profile import EXPLICIT
from pqlab.crypto import get_kem
from pqlab.errors import PqlabError

GENESIS = bytes(32)
LINK_DOMAIN = b"AMORT.LINK"
MAX_EPOCH = (1 << 32) - 1
CLOSES_PER_CHECKPOINT = 0xFFFF
"""Most EPOCH_CLOSE entries one checkpoint carries (its 2-octet count); more wait for the next checkpoint."""
Clock = Callable[[], int]


def link_hash(tbs: bytes) -> bytes:
    """The hash the next checkpoint carries as ``prev_hash``: SHA-256(dom ‖ the checkpoint's signed octets).

    The signature is not hashed: ML-DSA and SLH-DSA signatures are randomised, and re-signing an identical
    body is the same checkpoint, not a fork (N08)."""
    return hashlib.sha256(LINK_DOMAIN + tbs).digest()


@dataclass(frozen=True)
class Pending:
    """One verified report waiting for the next checkpoint."""

    dev_id: bytes
    epoch: int
    seq: int
    leaf: bytes


@dataclass(frozen=True)
class EpochKeys:
    """One epoch as the controller holds it: evidence key, anchor and the EPOCH_OPEN parameters."""

    epoch: int
    k_evid: bytes
    k0: bytes
    tag_len: int
    policy_id: int
    expiry: int
    not_before: int = 0  # the open time: a record stamped earlier is not from this epoch (N09)


@dataclass
class _DeviceState:
    cert: Certificate | None  # None: enrolled without a certificate (fast-path harnesses install K_evid directly)
    revoked: bool = False
    current: EpochKeys | None = None
    staged: EpochKeys | None = None  # confirmed, installed when the device first uses it (N15)
    last_seen: int = 0
    last_committed: int = 0
    last_timestamp: int = 0
    highest_epoch: int = 0  # the highest epoch number ever requested: numbers are never reused
    opens: list[int] = field(default_factory=list)
    pending_req: tuple[int, bytes, bytes] | None = None  # (epoch, EPOCH_REQ octets, shared secret)
    open_messages: dict[int, bytes] = field(default_factory=dict)

    @property
    def epoch(self) -> int:
        return self.current.epoch if self.current else 0


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
    and exactly one durable write (append + fsync to the checkpoint log).

    ``deployment`` gives the identifier, the CA key, the profile and the freshness window. ``clock`` (ms, the
    timestamps' clock) is how :meth:`ingest` learns the time when it is not given ``now``; with neither, a report
    is not judged at all (:class:`ClockRequired`): freshness is never skipped silently."""

    def __init__(self, deployment: Deployment, key: SigningKey | None, log: DurableLog | None,
                 config: ControllerConfig | None = None, *, clock: Clock | None = None) -> None:
        # key and log may be None for a controller that only verifies reports and builds checkpoint bodies
        # (the reference side of pqlab.amort.fastpath): it then cannot sign or persist.
        if not isinstance(deployment, Deployment):
            raise PqlabError(f"must be a Deployment, got {type(deployment).__name__}", field="deployment")
        self.deployment = deployment
        self.controller_id = deployment.controller_id
        self.key = key
        self.public = PublicKey.of(key) if key is not None else None
        if self.public is not None and deployment.controller_key is not None \
                and self.public.public != deployment.controller_key.public:
            raise PqlabError("the signing key is not the deployment's controller key", field="key")
        self.ca = deployment.ca
        self.log = log
        self.config = config or ControllerConfig()
        self.profile = deployment.profile
        self.clock = clock
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
        """Accept a CA-signed device certificate; returns its dev_id.

        Registering a known identity again keeps its epochs and counters (a renewed certificate with a higher
        serial replaces the old one); a revoked identity stays revoked: REVOKED (N10)."""
        cert = verify_certificate(cert_bytes, self.deployment.need("ca", "controller that registers certificates"),
                                  self.profile)
        state = self._devices.get(cert.dev_id)
        if state is None:
            self._devices[cert.dev_id] = _DeviceState(cert)
        elif state.revoked:
            raise AmortError(Code.REVOKED, f"device {cert.dev_id.hex()} is revoked; registering it again does not "
                             "restore it", field="Certificate.dev_id")
        elif state.cert is None or cert.serial > state.cert.serial:
            state.cert = cert
        return cert.dev_id

    def enroll(self, dev_id: bytes) -> None:
        """Know a device without a certificate: its epochs can only be installed with :meth:`install_epoch`
        (the batch fast path and its differential vectors, which take K_evid as input)."""
        if dev_id not in self._devices:
            self._devices[dev_id] = _DeviceState(None)

    def revoke(self, dev_id: bytes) -> None:
        """Revoke one identity; every other identity keeps attesting."""
        state = self._state(dev_id, "dev_id")
        state.revoked, state.staged = True, None

    def _state(self, dev_id: bytes, where: str) -> _DeviceState:
        state = self._devices.get(dev_id)
        if state is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"device {dev_id.hex()} is not registered", field=where)
        if state.revoked:
            raise AmortError(Code.REVOKED, f"device {dev_id.hex()} is revoked", field=where)
        return state

    # --- §IV-A epochs ------------------------------------------------------------------------------------
    def open_epoch(self, dev_id: bytes, now: int) -> bytes:
        """EPOCH_REQ: encapsulate to the certified ML-KEM key for a new epoch number (hardened: signed by the
        controller, so the device can tell it from an injected one before doing any work).

        The number is one above any this controller requested for the device, so an epoch whose EPOCH_OPEN never
        reached the device is not opened twice; beyond 2^32 - 1 no epoch can follow: EPOCH_STALE (N11)."""
        state = self._state(dev_id, "dev_id")
        recent = [t for t in state.opens if now - t < self.config.restart_window]
        if len(recent) >= self.config.max_restarts:
            raise AmortError(Code.ERR_RESTART_RATE, f"{len(recent)} epochs opened within "
                             f"{self.config.restart_window} ms", field="dev_id")
        if state.cert is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"device {dev_id.hex()} has no certificate to encapsulate to",
                             field="dev_id")
        epoch = max(state.epoch, state.highest_epoch) + 1
        if epoch > MAX_EPOCH:
            raise AmortError(Code.EPOCH_STALE, f"epoch numbers of {dev_id.hex()} are exhausted ({MAX_EPOCH}); "
                             "the device needs a new identity", field="epoch")
        state.opens = [*recent, now]
        state.highest_epoch = epoch
        ciphertext, shared = self._kem.encaps(state.cert.kem_pk)
        if self.profile.hardened:
            body = HardenedEpochReq(self.controller_id, dev_id, epoch, state.cert.serial, ciphertext, self._sig_alg())
            req = body.replace(sig=self.key.sign(body, self.profile)).encode()
        else:
            req = EpochReq(self.controller_id, dev_id, epoch, state.cert.serial, ciphertext).encode()
        state.pending_req = (epoch, req, shared)
        return req

    def confirm(self, confirm_bytes: bytes, now: int) -> bytes:
        """Check EPOCH_CONFIRM's MAC (hardened: and the device's anchor signature), derive K_evid, stage the epoch
        and return the signed EPOCH_OPEN.

        The epoch is installed when the device's first report under it verifies — the device has then accepted
        EPOCH_OPEN — so a lost or refused EPOCH_OPEN leaves both sides in the old epoch (N15)."""
        hardened = self.profile.hardened
        conf = decode_for_variant(confirm_bytes, EpochConfirm, HardenedEpochConfirm, hardened)
        state = self._state(conf.dev_id, "EpochConfirm.dev_id")
        if state.pending_req is None or state.pending_req[0] != conf.epoch:
            raise AmortError(Code.EPOCH_STALE, "no EPOCH_REQ outstanding for this epoch", field="EpochConfirm.epoch")
        epoch, req, shared = state.pending_req
        th = kdf.transcript_hash(req, conf.tbs())
        k_confirm, k_evid = kdf.epoch_keys(th, shared, conf.dev_id, epoch)
        if not kdf.mac_ok(k_confirm, th, conf.mac):
            raise AmortError(Code.MAC_FAIL, "EPOCH_CONFIRM MAC does not verify", field="EpochConfirm.mac")
        fields = (self.profile.octet, self.controller_id, conf.dev_id, epoch, self.config.tag_len,
                  self.config.policy_id, conf.k0, now + self.config.epoch_lifetime, state.cert.serial, th,
                  self._sig_alg())
        if hardened:
            statement = AnchorStatement(self.controller_id, conf.dev_id, epoch, conf.k0)
            PublicKey.of_device(state.cert).verify_device_statement(statement, conf.anchor_sig, "EpochConfirm",
                                                                     self.profile)
            opened: EpochOpen = HardenedEpochOpen(*fields, anchor_sig=conf.anchor_sig)
        else:
            opened = EpochOpen(*fields)
        data = opened.replace(sig=self.key.sign(opened, self.profile)).encode()
        state.staged = EpochKeys(epoch, k_evid, conf.k0, self.config.tag_len, self.config.policy_id, opened.expiry,
                                 not_before=now)
        state.pending_req = None
        state.open_messages[epoch] = data
        return data

    def install_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, k0: bytes = b"", tag_len: int,
                      policy_id: int, expiry: int, not_before: int = 0) -> None:
        """Make ``epoch`` the device's current epoch under ``k_evid`` now (what the device's first report under a
        staged epoch does; the fast path installs directly); closes the previous epoch, if any. EPOCH_STALE unless
        the epoch is newer."""
        state = self._state(dev_id, "dev_id")
        self._install(dev_id, state, EpochKeys(epoch, k_evid, k0, tag_len, policy_id, expiry, not_before))

    def _install(self, dev_id: bytes, state: _DeviceState, keys: EpochKeys) -> None:
        if keys.epoch <= state.epoch:
            raise AmortError(Code.EPOCH_STALE, f"epoch {keys.epoch} does not exceed current {state.epoch}",
                             field="epoch")
        if state.current is not None:
            self._close_epoch(dev_id, state)
        state.current = keys
        if state.staged is not None and state.staged.epoch <= keys.epoch:
            state.staged = None
        state.highest_epoch = max(state.highest_epoch, keys.epoch)
        state.last_seen = state.last_committed = state.last_timestamp = 0

    def _close_epoch(self, dev_id: bytes, state: _DeviceState) -> None:
        """Fresh-epoch recovery: uncommitted reports of the old epoch are lost; EPOCH_CLOSE makes that visible."""
        self.batch = [p for p in self.batch if not (p.dev_id == dev_id and p.epoch == state.epoch)]
        self._closes.append((dev_id, state.epoch, state.last_seen))

    def evidence_key(self, dev_id: bytes) -> tuple[bytes, int]:
        """(K_evid, tag length) of the device's newest confirmed epoch. The controller holds the evidence key — which
        is exactly why an evidence tag proves nothing about origin to a third party (§IV-D); the attack matrix
        uses this to play the malicious controller."""
        keys = self.epoch_keys(dev_id)
        return keys.k_evid, keys.tag_len

    def epoch_keys(self, dev_id: bytes) -> EpochKeys:
        """The newest confirmed epoch of a device (staged or current): what a fast path installs for it."""
        state = self._state(dev_id, "dev_id")
        keys = state.staged or state.current
        if keys is None:
            raise AmortError(Code.EPOCH_STALE, "device has no open epoch", field="dev_id")
        return keys

    def epoch_open(self, dev_id: bytes, epoch: int) -> bytes:
        """The signed EPOCH_OPEN of one epoch (auditors take K0 from it)."""
        return self._devices[dev_id].open_messages[epoch]

    def opened_epochs(self, dev_id: bytes) -> list[int]:
        """The epochs this controller opened for a device, oldest first (none for an unknown device)."""
        state = self._devices.get(dev_id)
        return sorted(state.open_messages) if state is not None else []

    # --- §IV-B/C reports -------------------------------------------------------------------------------
    def _keys_for(self, state: _DeviceState, epoch: int) -> EpochKeys:
        if state.staged is not None and epoch == state.staged.epoch:
            return state.staged
        if state.current is not None and epoch == state.current.epoch:
            return state.current
        raise AmortError(Code.EPOCH_STALE, f"record epoch {epoch}, device is in epoch {state.epoch}",
                         field="Record.epoch")

    def now(self, now: int | None = None) -> int:
        """The time a report is judged at: ``now`` if given, else the controller's clock; ClockRequired without
        either (a report is never accepted with its freshness unchecked)."""
        if now is not None:
            return now
        if self.clock is None:
            raise ClockRequired("this controller has no clock: pass now= to ingest or clock= to the controller",
                                field="now")
        return self.clock()

    def ingest(self, report_bytes: bytes, now: int | None = None) -> Report:
        """Decode, authenticate (evidence tag first), sequence-check, check the timestamp (monotonic, after the
        epoch opened, no older than the deployment's ``max_report_age`` at ``now``, N09), evaluate policy, then
        accumulate. ``now`` (ms): the controller's clock when not given; ClockRequired with neither."""
        now = self.now(now)
        explicit = self.profile.wire_format == EXPLICIT
        if explicit:
            report = Report.decode(report_bytes, wire_format=EXPLICIT)
            rec = report.record
        else:
            rec = Report.decode_record(report_bytes)
        state = self._state(rec.dev_id, "Record.dev_id")
        keys = self._keys_for(state, rec.epoch)
        if rec.timestamp > keys.expiry:
            raise AmortError(Code.EPOCH_STALE, f"record time {rec.timestamp} is past the epoch expiry {keys.expiry}",
                             field="Record.timestamp")
        if not explicit:
            report = Report.decode(report_bytes, tag_len=keys.tag_len)
        elif len(report.tag) != keys.tag_len:
            raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag of {len(report.tag)} octets, epoch fixes {keys.tag_len}",
                             field="Report.tag_len")
        signed = kdf.evidence_input(bytes(report_bytes[:RECORD_OCTETS]), report.dtag, self.profile.hardened)
        if not kdf.mac_ok(keys.k_evid, signed, report.tag):
            raise AmortError(Code.MAC_FAIL, "evidence tag does not verify under K_evid", field="Report.tag")
        if keys is state.staged:  # the device reports under the new epoch: it has accepted EPOCH_OPEN
            self._install(rec.dev_id, state, keys)
        if rec.seq <= state.last_seen:
            raise AmortError(Code.SEQ_DUPLICATE, f"seq {rec.seq} already seen (last {state.last_seen})",
                             field="Record.seq")
        if rec.seq != state.last_seen + 1:
            raise AmortError(Code.SEQ_GAP, f"seq {rec.seq} skips after {state.last_seen}", field="Record.seq")
        self._check_time(rec.timestamp, keys, state, now)
        refs = self.config.reference_digests
        self.verdicts[rec.dev_id] = not refs or rec.digest in refs
        state.last_seen = rec.seq
        state.last_timestamp = rec.timestamp
        self.batch.append(Pending(rec.dev_id, rec.epoch, rec.seq, bytes(report_bytes)))
        if len(self.batch) >= self.config.k:
            self.checkpoint()
        return report

    def _check_time(self, timestamp: int, keys: EpochKeys, state: _DeviceState, now: int) -> None:
        """Monotonic timestamps from the epoch's opening on, and no older than max_report_age at ``now``."""
        if timestamp < keys.not_before:
            raise AmortError(Code.EPOCH_STALE, f"record time {timestamp} is before its epoch opened "
                             f"({keys.not_before})", field="Record.timestamp")
        if timestamp < state.last_timestamp:
            raise AmortError(Code.EPOCH_STALE, f"record time {timestamp} runs backwards (last {state.last_timestamp})",
                             field="Record.timestamp")
        if now - timestamp > self.deployment.max_report_age:
            raise AmortError(Code.EPOCH_STALE, f"record time {timestamp} is {now - timestamp} ms old, more than "
                             f"{self.deployment.max_report_age}", field="Record.timestamp")

    # --- §IV-C checkpoints -----------------------------------------------------------------------------
    def checkpoint(self) -> bytes:
        """Commit the current batch: append leaves, sign, one durable write. A controller that cannot commit (no log
        or no key) refuses before the batch leaves it."""
        self._can_commit()
        batch, self.batch = self.batch, []
        return self.commit(batch)

    def _can_commit(self) -> None:
        if self.log is None:
            raise PqlabError("this controller has no checkpoint log to commit to", field="log")
        if self.key is None:
            raise PqlabError("this controller holds no signing key", field="key")

    def commit(self, batch: list[Pending], spans: tuple[Span, ...] | None = None) -> bytes:
        """Append ``batch`` to the log and sign a checkpoint over it (``spans`` default: derived from the batch)."""
        self._can_commit()
        body = self.build_checkpoint(batch, spans)
        data = self.sign(body)
        self.log.append(data)
        self.record_checkpoint(data, body)
        return data

    def build_checkpoint(self, batch: list[Pending], spans: tuple[Span, ...] | None = None,
                         sig_alg: int | None = None) -> Checkpoint:
        """The unsigned checkpoint over ``batch``: its leaves are appended to the tree and up to
        :data:`CLOSES_PER_CHECKPOINT` pending EPOCH_CLOSE entries are taken (the rest wait for the next checkpoint,
        so no number of closes stops the chain); :meth:`record_checkpoint` must follow with the signed encoding.
        Everything that can fail is checked before the tree or the pending state changes."""
        sig_alg = self._sig_alg() if sig_alg is None else sig_alg
        spans = spans if spans is not None else spans_of(batch)
        taken, rest = self._closes[:CLOSES_PER_CHECKPOINT], self._closes[CLOSES_PER_CHECKPOINT:]
        closes = []
        for dev_id, epoch, last_seen in taken:
            committed = max([s.seq_hi for s in spans if s.dev_id == dev_id and s.epoch == epoch],
                            default=self._committed_hi.get((dev_id, epoch), 0))
            closes.append(CloseEntry(dev_id, epoch, committed, last_seen))
        for item in batch:
            self.leaf_index[(item.dev_id, item.epoch, item.seq)] = self.tree.append(item.leaf)
            self.leaves.append(item.leaf)
        self._closes = rest
        return Checkpoint(self.controller_id, len(self.checkpoints), self.prev_hash, len(self.tree), self.tree.root(),
                          spans, tuple(closes), sig_alg, wire_format=self.profile.wire_format)

    def _sig_alg(self) -> int:
        if self.key is None:
            raise PqlabError("no signing key: pass the checkpoint's sig_alg", field="sig_alg")
        return self.key.alg_id

    def record_checkpoint(self, data: bytes, body: Checkpoint) -> None:
        """Chain the signed checkpoint ``data`` (already durable) of ``body`` and advance the committed ranges."""
        self.checkpoints.append(data)
        self.prev_hash = link_hash(body.tbs())
        for span in body.spans:
            key = (span.dev_id, span.epoch)
            self._committed_hi[key] = max(self._committed_hi.get(key, 0), span.seq_hi)
            state = self._devices.get(span.dev_id)
            if state is not None and state.epoch == span.epoch:
                state.last_committed = self._committed_hi[key]

    def sign(self, body: Checkpoint) -> bytes:
        """Sign a checkpoint body with the controller key (also how a malicious controller equivocates)."""
        if self.key is None:
            raise PqlabError("this controller holds no signing key", field="key")
        return body.replace(sig=self.key.sign(body, self.profile)).encode()

    def decode_checkpoint(self, data: bytes) -> Checkpoint:
        """A checkpoint in this controller's wire format."""
        return Checkpoint.decode(data, wire_format=self.profile.wire_format)

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
