"""The prover (PLC) side of AMORT-V1: epoch acceptance, two-tag reports, commitment tracking and key disclosure."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pqlab.amort import kdf, merkle
from pqlab.amort.chain import DisclosureChain
from pqlab.amort.controller import link_hash
from pqlab.amort.deployment import Deployment
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import KEM_ALGORITHM, SigningKey, check_profile
from pqlab.amort.messages import (
    AnchorStatement,
    Checkpoint,
    Disclosure,
    EpochConfirm,
    EpochOpen,
    EpochReq,
    HardenedEpochConfirm,
    HardenedEpochOpen,
    HardenedEpochReq,
    ReceiptEntry,
    Receipts,
    Record,
    Report,
    SubCheckpoint,
    decode_for_variant,
)
from pqlab.amort.profile import Profile
from pqlab.crypto import get_kem
from pqlab.crypto.base import KeyPair
from pqlab.errors import PqlabError

Entropy = Callable[[int], bytes]
MAX_PENDING = 4
"""Epoch exchanges a device keeps open at once, matched to EPOCH_OPEN by transcript hash. Paper variant: an
unauthenticated EPOCH_REQ from the network adds one instead of replacing the controller's (N15); hardened, every
EPOCH_REQ is controller-signed and an injected one never gets this far."""
DISPLACED_REMEMBERED = 16
"""Paper variant: transcript hashes of exchanges pushed out by later EPOCH_REQs that the device remembers, so an
EPOCH_OPEN for one of them is reported as a displaced exchange (a denial by injected requests), not a bad signature."""
RETAINED_EPOCHS = 2
"""Previous epochs a device keeps after a re-key (their chains and receipts), so that what was committed in them
can still be disclosed and audited (issue 35); older ones are dropped, oldest first."""
MAX_SEQ = (1 << 64) - 1


@dataclass
class _Pending:
    epoch: int
    transcript_hash: bytes
    k_evid: bytes
    chain: DisclosureChain
    controller_id: bytes
    anchor_sig: bytes = b""


@dataclass
class _Epoch:
    epoch: int
    k_evid: bytes
    chain: DisclosureChain
    tag_len: int
    policy_id: int
    seq: int = 0
    committed_hi: int = 0
    reports: dict[int, bytes] = field(default_factory=dict)  # seq -> encoded report (the Merkle leaf)
    sub_lo: int = 1
    controller_id: bytes = b""
    receipts: list[ReceiptEntry] = field(default_factory=list)  # hardened: receipts accepted while it was live


@dataclass(frozen=True)
class EpochSecrets:
    """What a device must keep to resume its current epoch after a restart (§IV-E rollback-protected path)."""

    epoch: int
    k_evid: bytes
    chain_seed: bytes
    chain_length: int
    tag_len: int
    policy_id: int


def encode_report(dev_id: bytes, epoch: int, seq: int, timestamp: int, digest: bytes, policy_id: int, flags: int,
                  k_evid: bytes, tag_len: int, chain: DisclosureChain | None, *, profile: Profile) -> bytes:
    """One encoded report: the canonical record, its disclosure tag under K_seq when ``chain`` is given (CHAIN_FAIL
    beyond the chain), and its evidence tag under K_evid (over the record; hardened: record and disclosure tag).
    Field errors name the record field."""
    record = Record(dev_id, epoch, seq, timestamp, digest, policy_id, flags)
    octets = record.encode()
    dtag = kdf.mac(chain.key(seq), octets, tag_len) if chain is not None else b""
    tag = kdf.mac(k_evid, kdf.evidence_input(octets, dtag, profile.hardened), tag_len)
    return Report(record, tag, dtag, profile.wire_format).encode()


class Device:
    """One device: its certified ML-KEM key, its own entropy for the disclosure seed, and per-epoch state.

    ``deployment`` gives the controller's identifier and public key and the profile; ``entropy`` is the device's
    randomness (seeded in experiments); the disclosure seed drawn from it never leaves this object. ``sign_key`` is
    the device's certified ML-DSA key: mechanism (c) and, hardened, the anchor and receipt signatures need it, so a
    hardened device refuses to be built without it.
    """

    def __init__(self, deployment: Deployment, dev_id: bytes, kem_keys: KeyPair, entropy: Entropy, *,
                 sign_key: SigningKey | None = None, chain_length: int = 1024, min_tag_len: int = 16,
                 kem_backend: str = "auto") -> None:
        if not isinstance(deployment, Deployment):
            raise PqlabError(f"must be a Deployment, got {type(deployment).__name__}", field="deployment")
        self.deployment = deployment
        self.controller = deployment.need("controller_key", "device")
        self.controller_id = deployment.controller_id
        self.profile = deployment.profile
        if self.profile.hardened and sign_key is None:
            raise PqlabError("the hardened variant needs the device's signing key (anchor and receipt signatures)",
                             field="sign_key")
        self.dev_id = dev_id
        self._kem_keys = kem_keys
        self._kem = get_kem(KEM_ALGORITHM, kem_backend)
        self._entropy = entropy
        self.chain_length = chain_length
        self.min_tag_len = min_tag_len
        self.sign_key = sign_key
        self.epoch_number = 0  # highest accepted epoch; survives restart (it is the device's durable state)
        self._pending: dict[bytes, _Pending] = {}  # transcript hash -> an open epoch exchange
        self._displaced: deque[bytes] = deque(maxlen=DISPLACED_REMEMBERED)
        self.current: _Epoch | None = None
        self.retained: dict[int, _Epoch] = {}  # previous epochs still disclosable, oldest first

    # --- §IV-A epoch establishment -------------------------------------------------------------------
    def respond(self, req_bytes: bytes) -> bytes:
        """Decapsulate an EPOCH_REQ, draw a fresh disclosure seed, and return EPOCH_CONFIRM (hardened: with the
        device's signature over its anchor).

        Hardened: the request must carry the deployment controller's signature (SIG_FAIL), checked before the
        device decapsulates, signs or keeps anything — an injected request costs it one verification."""
        hardened = self.profile.hardened
        req = decode_for_variant(req_bytes, EpochReq, HardenedEpochReq, hardened)
        if req.dev_id != self.dev_id:
            raise AmortError(Code.DEVICE_UNKNOWN, "EPOCH_REQ is addressed to another device", field="EpochReq.dev_id")
        if req.controller_id != self.controller_id:
            raise AmortError(Code.SIG_FAIL, f"EPOCH_REQ names controller {req.controller_id.hex()}, this device's is "
                             f"{self.controller_id.hex()}", field="EpochReq.controller_id")
        if hardened:
            self.controller.verify(req, req.sig, "HardenedEpochReq", self.profile)
        if req.epoch <= self.epoch_number:
            raise AmortError(Code.EPOCH_STALE, f"epoch {req.epoch} does not exceed current {self.epoch_number}",
                             field="EpochReq.epoch")
        shared = self._kem.decaps(self._kem_keys.secret, req.ciphertext)
        chain = DisclosureChain(self._entropy(32), self.chain_length)
        anchor_sig = b""
        if hardened:
            anchor_sig = self.sign_key.sign(AnchorStatement(req.controller_id, self.dev_id, req.epoch, chain.anchor),
                                            self.profile)
            body: EpochConfirm = HardenedEpochConfirm(self.dev_id, req.epoch, chain.anchor, anchor_sig=anchor_sig)
        else:
            body = EpochConfirm(self.dev_id, req.epoch, chain.anchor)
        th = kdf.transcript_hash(req_bytes, body.tbs())
        k_confirm, k_evid = kdf.epoch_keys(th, shared, self.dev_id, req.epoch)
        if hardened:  # every request is the controller's: a newer epoch supersedes the exchanges before it
            self._pending = {t: p for t, p in self._pending.items() if p.epoch > req.epoch}
        if len(self._pending) >= MAX_PENDING:
            self._displaced.append(next(iter(self._pending)))
            self._pending.pop(next(iter(self._pending)))
        self._pending[th] = _Pending(req.epoch, th, k_evid, chain, req.controller_id, anchor_sig)
        return body.replace(mac=kdf.mac(k_confirm, th)).encode()

    def accept_open(self, open_bytes: bytes) -> EpochOpen:
        """Accept EPOCH_OPEN only if it states this deployment's profile (PROFILE_MISMATCH), is signed by the
        controller, newer than the current epoch, on a transcript this device observed, and from the controller that
        sent that EPOCH_REQ (N07). The current epoch, if any, is retained (its committed reports stay disclosable)."""
        opened = decode_for_variant(open_bytes, EpochOpen, HardenedEpochOpen, self.profile.hardened)
        check_profile(opened.profile, self.profile, "EpochOpen.profile")
        self.controller.verify(opened, opened.sig, "EpochOpen", self.profile)
        if opened.dev_id != self.dev_id:
            raise AmortError(Code.DEVICE_UNKNOWN, "EPOCH_OPEN names another device", field="EpochOpen.dev_id")
        if opened.epoch <= self.epoch_number:
            raise AmortError(Code.EPOCH_STALE, f"epoch {opened.epoch} does not exceed current {self.epoch_number}",
                             field="EpochOpen.epoch")
        pending = self._pending.get(opened.transcript_hash)
        if pending is None and opened.transcript_hash in self._displaced:
            raise AmortError(Code.EPOCH_STALE, "EPOCH_OPEN for an exchange this device dropped when later, "
                             "unauthenticated EPOCH_REQs arrived (injected requests can do this): the controller must "
                             "open the epoch again", field="EpochOpen.transcript_hash")
        if pending is None or pending.epoch != opened.epoch:
            raise AmortError(Code.SIG_FAIL, "EPOCH_OPEN signs a transcript this device did not observe",
                             field="EpochOpen.transcript_hash")
        if opened.controller_id != pending.controller_id:
            raise AmortError(Code.SIG_FAIL, f"EPOCH_OPEN names controller {opened.controller_id.hex()}, the exchange "
                             f"was with {pending.controller_id.hex()}", field="EpochOpen.controller_id")
        if opened.k0 != pending.chain.anchor:
            raise AmortError(Code.CHAIN_FAIL, "EPOCH_OPEN commits a different chain anchor", field="EpochOpen.k0")
        if self.profile.hardened and opened.anchor_sig != pending.anchor_sig:
            raise AmortError(Code.SIG_FAIL, "EPOCH_OPEN carries another anchor signature than this device's",
                             field="EpochOpen.anchor_sig")
        if opened.tag_len < self.min_tag_len:
            raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag length {opened.tag_len} is below the device minimum "
                             f"{self.min_tag_len}", field="EpochOpen.tag_len")
        self.epoch_number = opened.epoch
        if self.current is not None:
            self.retained[self.current.epoch] = self.current
            while len(self.retained) > RETAINED_EPOCHS:
                self.retained.pop(next(iter(self.retained)))
        self.current = _Epoch(opened.epoch, pending.k_evid, pending.chain, opened.tag_len, opened.policy_id,
                              controller_id=opened.controller_id)
        self._pending = {th: p for th, p in self._pending.items() if p.epoch > opened.epoch}
        return opened

    # --- §IV-B reports --------------------------------------------------------------------------------
    def _active(self) -> _Epoch:
        if self.current is None:
            raise AmortError(Code.EPOCH_STALE, "no open epoch", field="epoch")
        return self.current

    def _live(self, epoch: int | None, where: str) -> _Epoch:
        """The current epoch (``epoch`` None or its number) or a retained one; EPOCH_STALE otherwise."""
        if epoch is None or (self.current is not None and epoch == self.current.epoch):
            return self._active()
        ep = self.retained.get(epoch)
        if ep is None:
            raise AmortError(Code.EPOCH_STALE, f"epoch {epoch} is neither current nor retained by this device",
                             field=where)
        return ep

    def report(self, digest: bytes, timestamp: int, *, flags: int = 0, disclosure_tag: bool = True) -> bytes:
        """The next report: canonical record, evidence tag under K_evid, disclosure tag under K_seq. After sequence
        number 2^64 - 1 the epoch cannot go on: EPOCH_STALE (N11)."""
        ep = self._active()
        if ep.seq >= MAX_SEQ:
            raise AmortError(Code.EPOCH_STALE, f"sequence numbers of epoch {ep.epoch} are exhausted; open a new "
                             "epoch", field="seq")
        seq = ep.seq + 1
        data = encode_report(self.dev_id, ep.epoch, seq, timestamp, digest, ep.policy_id, flags, ep.k_evid,
                             ep.tag_len, ep.chain if disclosure_tag else None, profile=self.profile)
        ep.seq = seq
        ep.reports[seq] = data
        return data

    # --- §IV-C/D commitment and disclosure ------------------------------------------------------------
    def receive_checkpoint(self, ckpt_bytes: bytes, *, check_subtree: bool = True) -> Checkpoint:
        """Verify a checkpoint receipt and learn which of our reports it commits.

        It must come from this deployment's controller (SIG_FAIL, N07). A span for an epoch that is neither current
        nor retained is a replayed checkpoint: EPOCH_STALE. With ``check_subtree`` the device recomputes the subtree
        root over its own reports (detects omit-and-substitute, PROOF_FAIL). Hardened: every receipt must continue
        the last one of the current epoch — index + 1 and its link as ``prev_hash`` (CKPT_DISCONTINUITY) — and is
        kept, in every live epoch, for comparison (N04).
        """
        ckpt = Checkpoint.decode(ckpt_bytes, wire_format=self.profile.wire_format)
        self.controller.verify(ckpt, ckpt.sig, "Checkpoint", self.profile)
        ep = self._active()
        if ckpt.controller_id != self.controller_id:
            raise AmortError(Code.SIG_FAIL, f"checkpoint of controller {ckpt.controller_id.hex()}, this device's is "
                             f"{self.controller_id.hex()}", field="Checkpoint.controller_id")
        committed = {}
        for span in ckpt.spans:
            if span.dev_id != self.dev_id:
                continue
            live = self._live(span.epoch, "Checkpoint.spans.epoch")
            low = committed.get(span.epoch, live.committed_hi)
            if span.seq_hi <= low:
                raise AmortError(Code.EPOCH_STALE, f"span {span.seq_lo}..{span.seq_hi} of epoch {span.epoch} was "
                                 f"committed already (up to {low}): a replayed checkpoint", field="Checkpoint.spans")
            if span.seq_lo != low + 1 or span.seq_hi > live.seq:
                raise AmortError(Code.SEQ_GAP, f"span {span.seq_lo}..{span.seq_hi} does not continue "
                                 f"{low} within sent {live.seq}", field="Checkpoint.spans")
            if check_subtree:
                mine = [live.reports[s] for s in range(span.seq_lo, span.seq_hi + 1)]
                if merkle.root(mine) != span.subtree:
                    raise AmortError(Code.PROOF_FAIL, "subtree root differs from the device's own reports",
                                     field="Checkpoint.spans.subtree")
            committed[span.epoch] = span.seq_hi
        if self.profile.hardened and ep.receipts:
            last = ep.receipts[-1]
            if ckpt.index != last.index + 1 or ckpt.prev_hash != last.link:
                raise AmortError(Code.CKPT_DISCONTINUITY, f"receipt {ckpt.index} does not continue receipt "
                                 f"{last.index}", field="Checkpoint.prev_hash")
        if self.profile.hardened:
            entry = ReceiptEntry(ckpt.index, link_hash(ckpt.tbs()))
            for live in (*self.retained.values(), ep):
                live.receipts.append(entry)
        for epoch, hi in committed.items():
            self._live(epoch, "Checkpoint.spans.epoch").committed_hi = hi
        return ckpt

    def receipts(self, epoch: int | None = None) -> bytes:
        """Hardened variant: the receipts accepted while ``epoch`` (default: the current one) was live, signed with
        the device's key, for an auditor to compare with the public chain (``ColdAuditor.compare_receipts``). The
        paper's device keeps none."""
        if not self.profile.hardened:
            raise PqlabError("the paper's device keeps no receipts (hardened variant only)", field="variant")
        ep = self._live(epoch, "epoch")
        body = Receipts(self.dev_id, ep.epoch, tuple(ep.receipts))
        return body.replace(sig=self.sign_key.sign(body, self.profile)).encode()

    def disclose(self, j: int, epoch: int | None = None) -> bytes:
        """Release K_j of ``epoch`` (default: the current one, or a retained one), only once a verified checkpoint
        has committed report j (else DISCLOSE_EARLY)."""
        ep = self._live(epoch, "epoch")
        if not 1 <= j <= ep.committed_hi:
            raise AmortError(Code.DISCLOSE_EARLY, f"report {j} is not committed (committed up to {ep.committed_hi})",
                             field="j")
        return Disclosure(self.dev_id, ep.epoch, j, ep.chain.key(j)).encode()

    def sub_checkpoint(self) -> bytes:
        """Mechanism (c): sign the Merkle root of our reports since the last sub-checkpoint with ML-DSA."""
        ep = self._active()
        if self.sign_key is None or ep.seq < ep.sub_lo:
            raise AmortError(Code.SIG_FAIL, "no device signing key or no new reports", field="sub_checkpoint")
        lo, hi = ep.sub_lo, ep.seq
        sub = SubCheckpoint(self.dev_id, ep.epoch, lo, hi, merkle.root([ep.reports[s] for s in range(lo, hi + 1)]))
        ep.sub_lo = hi + 1
        return sub.replace(sig=self.sign_key.sign(sub, self.profile)).encode()

    def epoch_secrets(self) -> EpochSecrets:
        """The current epoch's evidence key, disclosure seed and parameters (for a durable state file)."""
        ep = self._active()
        return EpochSecrets(ep.epoch, ep.k_evid, ep.chain.key(ep.chain.length), ep.chain.length, ep.tag_len,
                            ep.policy_id)

    def resume(self, secrets: EpochSecrets, next_seq: int) -> None:
        """Re-enter an epoch from stored secrets; the next report gets ``next_seq``.

        Reports sent before the restart are gone from memory, so nothing counts as committed until a new
        receipt arrives (no key is disclosed on the strength of a pre-restart receipt) and sub-checkpoints
        start at ``next_seq``.
        """
        if next_seq < 1:
            raise ValueError(f"next_seq must be >= 1, got {next_seq}")
        self.epoch_number = max(self.epoch_number, secrets.epoch)
        chain = DisclosureChain(secrets.chain_seed, secrets.chain_length)
        self.current = _Epoch(secrets.epoch, secrets.k_evid, chain, secrets.tag_len, secrets.policy_id,
                              seq=next_seq - 1, sub_lo=next_seq, controller_id=self.controller_id)
        self._pending = {}

    def restart(self) -> None:
        """Fresh-epoch recovery (§IV-E): volatile state — sequence, chains, keys, retained epochs, receipts — is lost;
        the epoch number is not."""
        self.current = None
        self.retained = {}
        self._pending = {}
