"""The prover (PLC) side of AMORT-V1: epoch acceptance, two-tag reports, commitment tracking and key disclosure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pqlab.amort import kdf, merkle
from pqlab.amort.chain import DisclosureChain
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import KEM_ALGORITHM, PublicKey, SigningKey
from pqlab.amort.messages import (
    Checkpoint,
    Disclosure,
    EpochConfirm,
    EpochOpen,
    EpochReq,
    Record,
    Report,
    SubCheckpoint,
)
from pqlab.crypto import get_kem
from pqlab.crypto.base import KeyPair

Entropy = Callable[[int], bytes]


@dataclass
class _Pending:
    epoch: int
    transcript_hash: bytes
    k_evid: bytes
    chain: DisclosureChain


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
                  k_evid: bytes, tag_len: int, chain: DisclosureChain | None) -> bytes:
    """One encoded report: the canonical record, its evidence tag under K_evid and, when ``chain`` is given,
    its disclosure tag under K_seq (CHAIN_FAIL beyond the chain). Field errors name the record field."""
    record = Record(dev_id, epoch, seq, timestamp, digest, policy_id, flags)
    octets = record.encode()
    dtag = kdf.mac(chain.key(seq), octets, tag_len) if chain is not None else b""
    return Report(record, kdf.mac(k_evid, octets, tag_len), dtag).encode()


class Device:
    """One device: its certified ML-KEM key, its own entropy for the disclosure seed, and per-epoch state.

    ``entropy`` is the device's randomness (seeded in experiments); the disclosure seed drawn from it never
    leaves this object. ``controller`` is the controller's public key, provisioned with the certificate.
    """

    def __init__(self, dev_id: bytes, kem_keys: KeyPair, controller: PublicKey, entropy: Entropy, *,
                 chain_length: int = 1024, min_tag_len: int = 16, sign_key: SigningKey | None = None,
                 kem_backend: str = "auto") -> None:
        self.dev_id = dev_id
        self._kem_keys = kem_keys
        self._kem = get_kem(KEM_ALGORITHM, kem_backend)
        self.controller = controller
        self._entropy = entropy
        self.chain_length = chain_length
        self.min_tag_len = min_tag_len
        self.sign_key = sign_key
        self.epoch_number = 0  # highest accepted epoch; survives restart (it is the device's durable state)
        self._pending: _Pending | None = None
        self.current: _Epoch | None = None

    # --- §IV-A epoch establishment -------------------------------------------------------------------
    def respond(self, req_bytes: bytes) -> bytes:
        """Decapsulate an EPOCH_REQ, draw a fresh disclosure seed, and return EPOCH_CONFIRM."""
        req = EpochReq.decode(req_bytes)
        if req.dev_id != self.dev_id:
            raise AmortError(Code.DEVICE_UNKNOWN, "EPOCH_REQ is addressed to another device", field="EpochReq.dev_id")
        if req.epoch <= self.epoch_number:
            raise AmortError(Code.EPOCH_STALE, f"epoch {req.epoch} does not exceed current {self.epoch_number}",
                             field="EpochReq.epoch")
        shared = self._kem.decaps(self._kem_keys.secret, req.ciphertext)
        chain = DisclosureChain(self._entropy(32), self.chain_length)
        body = EpochConfirm(self.dev_id, req.epoch, chain.anchor)
        th = kdf.transcript_hash(req_bytes, body.tbs())
        k_confirm, k_evid = kdf.epoch_keys(th, shared, self.dev_id, req.epoch)
        self._pending = _Pending(req.epoch, th, k_evid, chain)
        return body.replace(mac=kdf.mac(k_confirm, th)).encode()

    def accept_open(self, open_bytes: bytes) -> EpochOpen:
        """Accept EPOCH_OPEN only if signed by the controller, newer than the current epoch, and on our transcript."""
        opened = EpochOpen.decode(open_bytes)
        self.controller.verify(opened, opened.sig, "EpochOpen")
        if opened.dev_id != self.dev_id:
            raise AmortError(Code.DEVICE_UNKNOWN, "EPOCH_OPEN names another device", field="EpochOpen.dev_id")
        if opened.epoch <= self.epoch_number:
            raise AmortError(Code.EPOCH_STALE, f"epoch {opened.epoch} does not exceed current {self.epoch_number}",
                             field="EpochOpen.epoch")
        pending = self._pending
        if pending is None or pending.epoch != opened.epoch or pending.transcript_hash != opened.transcript_hash:
            raise AmortError(Code.SIG_FAIL, "EPOCH_OPEN signs a transcript this device did not observe",
                             field="EpochOpen.transcript_hash")
        if opened.k0 != pending.chain.anchor:
            raise AmortError(Code.CHAIN_FAIL, "EPOCH_OPEN commits a different chain anchor", field="EpochOpen.k0")
        if opened.tag_len < self.min_tag_len:
            raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag length {opened.tag_len} is below the device minimum "
                             f"{self.min_tag_len}", field="EpochOpen.tag_len")
        self.epoch_number = opened.epoch
        self.current = _Epoch(opened.epoch, pending.k_evid, pending.chain, opened.tag_len, opened.policy_id)
        self._pending = None
        return opened

    # --- §IV-B reports --------------------------------------------------------------------------------
    def _active(self) -> _Epoch:
        if self.current is None:
            raise AmortError(Code.EPOCH_STALE, "no open epoch", field="epoch")
        return self.current

    def report(self, digest: bytes, timestamp: int, *, flags: int = 0, disclosure_tag: bool = True) -> bytes:
        """The next report: canonical record, evidence tag under K_evid, disclosure tag under K_seq."""
        ep = self._active()
        seq = ep.seq + 1
        data = encode_report(self.dev_id, ep.epoch, seq, timestamp, digest, ep.policy_id, flags, ep.k_evid,
                             ep.tag_len, ep.chain if disclosure_tag else None)
        ep.seq = seq
        ep.reports[seq] = data
        return data

    # --- §IV-C/D commitment and disclosure ------------------------------------------------------------
    def receive_checkpoint(self, ckpt_bytes: bytes, *, check_subtree: bool = True) -> Checkpoint:
        """Verify a checkpoint receipt and learn which of our reports it commits.

        A span for an older epoch is a replayed checkpoint: EPOCH_STALE. With ``check_subtree`` the device
        recomputes the subtree root over its own reports (detects omit-and-substitute, PROOF_FAIL).
        """
        ckpt = Checkpoint.decode(ckpt_bytes)
        self.controller.verify(ckpt, ckpt.sig, "Checkpoint")
        ep = self._active()
        for span in ckpt.spans:
            if span.dev_id != self.dev_id:
                continue
            if span.epoch != ep.epoch:
                raise AmortError(Code.EPOCH_STALE, f"checkpoint commits epoch {span.epoch}, current is {ep.epoch}",
                                 field="Checkpoint.spans.epoch")
            if span.seq_lo != ep.committed_hi + 1 or span.seq_hi > ep.seq:
                raise AmortError(Code.SEQ_GAP, f"span {span.seq_lo}..{span.seq_hi} does not continue "
                                 f"{ep.committed_hi} within sent {ep.seq}", field="Checkpoint.spans")
            if check_subtree:
                mine = [ep.reports[s] for s in range(span.seq_lo, span.seq_hi + 1)]
                if merkle.root(mine) != span.subtree:
                    raise AmortError(Code.PROOF_FAIL, "subtree root differs from the device's own reports",
                                     field="Checkpoint.spans.subtree")
            ep.committed_hi = span.seq_hi
        return ckpt

    def disclose(self, j: int) -> bytes:
        """Release K_j, only once a verified checkpoint has committed report j (else DISCLOSE_EARLY)."""
        ep = self._active()
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
        return sub.replace(sig=self.sign_key.sign(sub)).encode()

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
                              seq=next_seq - 1, sub_lo=next_seq)
        self._pending = None

    def restart(self) -> None:
        """Fresh-epoch recovery (§IV-E): volatile state — sequence, chain, keys — is lost; the epoch number is not."""
        self.current = None
        self._pending = None
