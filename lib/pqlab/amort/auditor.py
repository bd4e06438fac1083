"""The cold auditor (§IV-D): holds no secret; checks checkpoints, proofs, continuity and disclosed origin."""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.amort import chain, kdf, merkle
from pqlab.amort.controller import GENESIS, link_hash
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import PublicKey
from pqlab.amort.messages import (
    Checkpoint,
    ConsistencyProof,
    Disclosure,
    EpochClose,
    EpochOpen,
    InclusionProof,
    Report,
    SubCheckpoint,
)


@dataclass(frozen=True)
class _Head:
    index: int
    link: bytes
    tree_size: int
    root: bytes


class ColdAuditor:
    """Mechanism (a) over the checkpoint chain, (b) over disclosed keys, (c) over device sub-checkpoints.

    State is only public material: the controller's public key, accepted checkpoints, and anchors K0 taken
    from controller-signed EPOCH_OPEN messages.
    """

    def __init__(self, controller: PublicKey) -> None:
        self.controller = controller
        self.heads: dict[int, _Head] = {}
        self.last: _Head | None = None
        self.committed: dict[tuple[bytes, int], int] = {}
        self.anchors: dict[tuple[bytes, int], bytes] = {}
        self.tag_lens: dict[tuple[bytes, int], int] = {}
        self.closes: dict[tuple[bytes, int], tuple[int, int]] = {}
        self._in_order: dict[tuple[bytes, int], chain.InOrderVerifier] = {}

    # --- mechanism (a): the checkpoint chain -----------------------------------------------------------
    def ingest_checkpoint(self, data: bytes, consistency: bytes | None = None) -> Checkpoint:
        """Accept the next checkpoint: signature, fork, link, tree growth, spans, EPOCH_CLOSE entries.

        The checkpoint is recorded before ERR_EVIDENCE_INCOMPLETE is raised: it is authentic, and the
        error reports that an epoch it closes ended with evidence that was never committed.
        """
        ckpt = Checkpoint.decode(data)
        self.controller.verify(ckpt, ckpt.sig, "Checkpoint")
        link = link_hash(data)
        seen = self.heads.get(ckpt.index)
        if seen is not None:
            if seen.link != link:
                raise AmortError(Code.CKPT_FORK, f"two signed checkpoints at position {ckpt.index}",
                                 field="Checkpoint.index")
            return ckpt
        last = self.last
        expected_index, expected_prev = (0, GENESIS) if last is None else (last.index + 1, last.link)
        if ckpt.index != expected_index or ckpt.prev_hash != expected_prev:
            raise AmortError(Code.CKPT_DISCONTINUITY, f"checkpoint {ckpt.index} does not follow "
                             f"{expected_index - 1}", field="Checkpoint.prev_hash")
        old_size = 0 if last is None else last.tree_size
        if ckpt.tree_size < old_size:
            raise AmortError(Code.CKPT_DISCONTINUITY, f"tree shrank from {old_size} to {ckpt.tree_size}",
                             field="Checkpoint.tree_size")
        if old_size:
            self._check_consistency(last, ckpt, consistency)
        committed = dict(self.committed)
        seen_keys: set[tuple[bytes, int]] = set()
        for i, span in enumerate(ckpt.spans):
            where = f"Checkpoint.spans[{i}]"
            key = (span.dev_id, span.epoch)
            if span.seq_lo < 1 or span.seq_hi < span.seq_lo:
                raise AmortError(Code.SEQ_GAP, f"empty or inverted span {span.seq_lo}..{span.seq_hi}", field=where)
            if key in seen_keys:
                raise AmortError(Code.SEQ_DUPLICATE, "device appears twice in one checkpoint", field=where)
            seen_keys.add(key)
            expected = committed.get(key, 0) + 1
            if span.seq_lo < expected:
                raise AmortError(Code.SEQ_DUPLICATE, f"span starts at {span.seq_lo}, {expected - 1} already "
                                 "committed", field=where)
            if span.seq_lo > expected:
                raise AmortError(Code.SEQ_GAP, f"span starts at {span.seq_lo}, expected {expected}", field=where)
            committed[key] = span.seq_hi
        declared = sum(s.seq_hi - s.seq_lo + 1 for s in ckpt.spans)
        if declared != ckpt.tree_size - old_size:
            raise AmortError(Code.SEQ_GAP, f"spans declare {declared} reports, tree grew by "
                             f"{ckpt.tree_size - old_size}", field="Checkpoint.tree_size")
        incomplete = []
        for entry in ckpt.closes:
            key = (entry.dev_id, entry.epoch)
            if entry.last_committed != committed.get(key, 0):
                raise AmortError(Code.SEQ_GAP, f"EPOCH_CLOSE claims {entry.last_committed} committed, chain "
                                 f"shows {committed.get(key, 0)}", field="Checkpoint.closes")
            if entry.last_seen != entry.last_committed:
                incomplete.append(entry)
        head = _Head(ckpt.index, link, ckpt.tree_size, ckpt.root)
        self.heads[ckpt.index] = head
        self.last = head
        self.committed = committed
        for entry in ckpt.closes:
            self.closes[(entry.dev_id, entry.epoch)] = (entry.last_committed, entry.last_seen)
        if incomplete:
            lost = ", ".join(f"{e.dev_id.hex()}/{e.epoch}: {e.last_seen - e.last_committed} lost" for e in incomplete)
            raise AmortError(Code.ERR_EVIDENCE_INCOMPLETE, f"epochs closed with uncommitted evidence ({lost})",
                             field="Checkpoint.closes")
        return ckpt

    def _check_consistency(self, last: _Head, ckpt: Checkpoint, consistency: bytes | None) -> None:
        if consistency is None:
            raise AmortError(Code.PROOF_FAIL, "no consistency proof from the previous tree head",
                             field="ConsistencyProof")
        proof = ConsistencyProof.decode(consistency)
        if (proof.old_size, proof.new_size) != (last.tree_size, ckpt.tree_size):
            raise AmortError(Code.PROOF_FAIL, f"proof is for {proof.old_size}->{proof.new_size}, needed "
                             f"{last.tree_size}->{ckpt.tree_size}", field="ConsistencyProof")
        merkle.verify_consistency(last.tree_size, ckpt.tree_size, last.root, ckpt.root, proof.path)

    def compare(self, other: ColdAuditor) -> None:
        """Gossip: two auditors' views of the same chain must agree at every common position (else CKPT_FORK)."""
        for index, head in self.heads.items():
            theirs = other.heads.get(index)
            if theirs is not None and theirs.link != head.link:
                raise AmortError(Code.CKPT_FORK, f"views differ at checkpoint {index}", field="Checkpoint.index")

    def check_epoch_close(self, data: bytes) -> EpochClose:
        """A standalone EPOCH_CLOSE: its committed count must match the chain; lost evidence is an error."""
        close = EpochClose.decode(data)
        committed = self.committed.get((close.dev_id, close.epoch), 0)
        if close.last_committed != committed:
            raise AmortError(Code.SEQ_GAP, f"claims {close.last_committed} committed, chain shows {committed}",
                             field="EpochClose.last_committed")
        if close.last_seen != close.last_committed:
            raise AmortError(Code.ERR_EVIDENCE_INCOMPLETE, f"{close.last_seen - close.last_committed} reports seen "
                             "but never committed", field="EpochClose.last_seen")
        return close

    def verify_inclusion(self, leaf: bytes, proof_bytes: bytes, checkpoint_index: int | None = None) -> int:
        """Check a leaf is in an accepted checkpoint's tree (default: the latest); returns its leaf index."""
        head = self._head(checkpoint_index)
        proof = InclusionProof.decode(proof_bytes)
        if proof.tree_size != head.tree_size:
            raise AmortError(Code.PROOF_FAIL, f"proof is for a tree of {proof.tree_size}, checkpoint has "
                             f"{head.tree_size}", field="InclusionProof.tree_size")
        merkle.verify_inclusion(leaf, proof.leaf_index, proof.tree_size, proof.path, head.root)
        return proof.leaf_index

    def _head(self, index: int | None) -> _Head:
        head = self.last if index is None else self.heads.get(index)
        if head is None:
            raise AmortError(Code.CKPT_DISCONTINUITY, "no accepted checkpoint to check against",
                             field="checkpoint_index")
        return head

    # --- mechanism (b): disclosure chain ---------------------------------------------------------------
    def ingest_epoch_open(self, data: bytes) -> EpochOpen:
        """Take K0 and the tag length from a controller-signed EPOCH_OPEN."""
        opened = EpochOpen.decode(data)
        self.controller.verify(opened, opened.sig, "EpochOpen")
        self.anchors[(opened.dev_id, opened.epoch)] = opened.k0
        self.tag_lens[(opened.dev_id, opened.epoch)] = opened.tag_len
        return opened

    def verify_origin(self, report_bytes: bytes, disclosure: bytes, proof_bytes: bytes, *,
                      in_order: bool = True) -> None:
        """Public device-origin check: committed, key on the chain, leaf included, disclosure tag recomputed."""
        disc = Disclosure.decode(disclosure)
        report = Report.decode(report_bytes)
        rec = report.record
        key = (disc.dev_id, disc.epoch)
        if (rec.dev_id, rec.epoch, rec.seq) != (disc.dev_id, disc.epoch, disc.j):
            raise AmortError(Code.CHAIN_FAIL, f"K_{disc.j} is disclosed for another report than seq {rec.seq}",
                             field="Disclosure.j")
        anchor = self.anchors.get(key)
        if anchor is None:
            raise AmortError(Code.DEVICE_UNKNOWN, "no signed EPOCH_OPEN for this device and epoch",
                             field="Disclosure.epoch")
        if disc.j > self.committed.get(key, 0):
            raise AmortError(Code.DISCLOSE_EARLY, f"K_{disc.j} disclosed before any checkpoint committed report "
                             f"{disc.j}", field="Disclosure.j")
        if in_order:
            self._in_order.setdefault(key, chain.InOrderVerifier(anchor)).verify(disc.j, disc.key)
        else:
            chain.verify_independent(anchor, disc.j, disc.key)
        self.verify_inclusion(report_bytes, proof_bytes)
        if len(report.dtag) != self.tag_lens[key] or not kdf.mac_ok(disc.key, rec.encode(), report.dtag):
            raise AmortError(Code.MAC_FAIL, "disclosure tag does not verify under the disclosed key",
                             field="Report.dtag")

    # --- per-device commitments --------------------------------------------------------------------------
    def verify_subtree(self, checkpoint: bytes, dev_id: bytes, epoch: int, reports: list[bytes]) -> None:
        """A verifier holding a device's reports recomputes its committed subtree root (detects substitution)."""
        ckpt = Checkpoint.decode(checkpoint)
        self.controller.verify(ckpt, ckpt.sig, "Checkpoint")
        for span in ckpt.spans:
            if (span.dev_id, span.epoch) == (dev_id, epoch):
                if merkle.root(reports) != span.subtree:
                    raise AmortError(Code.PROOF_FAIL, "device reports do not match the committed subtree root",
                                     field="Checkpoint.spans.subtree")
                return
        raise AmortError(Code.SEQ_GAP, "checkpoint commits nothing for this device", field="Checkpoint.spans")

    def verify_sub_checkpoint(self, data: bytes, device: PublicKey, reports: list[bytes]) -> SubCheckpoint:
        """Mechanism (c): the device's own signature over the Merkle root of its reports."""
        sub = SubCheckpoint.decode(data)
        device.verify(sub, sub.sig, "SubCheckpoint")
        if len(reports) != sub.seq_hi - sub.seq_lo + 1 or merkle.root(reports) != sub.root:
            raise AmortError(Code.PROOF_FAIL, "reports do not match the device-signed root", field="SubCheckpoint.root")
        return sub
