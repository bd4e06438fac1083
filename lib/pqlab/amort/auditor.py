"""The cold auditor (§IV-D): holds no secret; checks checkpoints, proofs, continuity and disclosed origin."""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.amort import chain, kdf, merkle
from pqlab.amort.controller import GENESIS, link_hash
from pqlab.amort.deployment import Deployment
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import PublicKey, check_profile, context, verify_certificate
from pqlab.amort.messages import (
    SIG_ALGORITHM_IDS,
    SIGNATURE_OCTETS,
    AnchorStatement,
    Certificate,
    Checkpoint,
    ConsistencyProof,
    Disclosure,
    EpochClose,
    EpochOpen,
    HardenedEpochOpen,
    InclusionProof,
    Receipts,
    Report,
    SubCheckpoint,
    decode_for_variant,
)
from pqlab.amort.profile import EXPLICIT
from pqlab.errors import PqlabError

DEFAULT_MAX_CHECKPOINT_OCTETS = 16 * 1024 * 1024
"""The largest checkpoint an auditor reads (about 300,000 identities in the implied wire format); larger input is
refused before any work (N12)."""
DEFAULT_MAX_CHECKPOINT_REPORTS = 1 << 20
"""The most reports one checkpoint may add to the tree (a batch of 1,048,576: over ten times Table III's largest
round of 100,000 identities); a checkpoint declaring more is refused before its spans are read, so a signed claim of
2^62 reports cannot make later disclosures cost billions of hashes (issue 35)."""

Key = tuple[bytes, int]  # (dev_id, epoch)


@dataclass(frozen=True)
class _Head:
    index: int
    link: bytes
    tree_size: int
    root: bytes


class ColdAuditor:
    """Mechanism (a) over the checkpoint chain, (b) over disclosed keys, (c) over device sub-checkpoints.

    State is only public material, all of it from ``deployment``: the controller's identifier and public key, the
    CA's public key, the profile; then accepted checkpoints, device certificates, and anchors K0 from
    controller-signed EPOCH_OPEN messages. Every check is on: each span and close entry must name an epoch whose
    EPOCH_OPEN this auditor holds (DEVICE_UNKNOWN otherwise, N14), and an EPOCH_OPEN is taken only for a device
    whose certificate it holds. ``unsafe_spans_without_opens=True`` turns the first off, for a log-only auditor
    (mechanism (a)) that is never given the opens: it then accepts spans of devices that never opened an epoch.
    """

    def __init__(self, deployment: Deployment, *, max_checkpoint_octets: int = DEFAULT_MAX_CHECKPOINT_OCTETS,
                 max_checkpoint_reports: int = DEFAULT_MAX_CHECKPOINT_REPORTS,
                 unsafe_spans_without_opens: bool = False) -> None:
        if not isinstance(deployment, Deployment):
            raise PqlabError(f"must be a Deployment, got {type(deployment).__name__}", field="deployment")
        self.deployment = deployment
        self.controller = deployment.need("controller_key", "cold auditor")
        self.controller_id = deployment.controller_id
        self.ca = deployment.need("ca", "cold auditor")
        self.profile = deployment.profile
        self.require_opens = not unsafe_spans_without_opens
        self.max_checkpoint_octets = max_checkpoint_octets
        self.max_checkpoint_reports = max_checkpoint_reports
        self.heads: dict[int, _Head] = {}
        self.signed_at: dict[int, bytes] = {}  # index -> link of every checkpoint whose signature verified here
        self._incomplete: dict[int, AmortError] = {}  # index -> the ERR_EVIDENCE_INCOMPLETE it raised
        self.forks: set[Key] = set()  # (device, epoch) whose kept receipts contradicted this auditor's chain
        self.last: _Head | None = None
        self.committed: dict[Key, int] = {}
        self.anchors: dict[Key, bytes] = {}
        self.tag_lens: dict[Key, int] = {}
        self.closes: dict[Key, tuple[int, int]] = {}
        self.certificates: dict[bytes, Certificate] = {}
        self._open_links: dict[Key, bytes] = {}
        self._spans_at: dict[Key, list[tuple[int, int]]] = {}  # (checkpoint index, seq_hi) per committed span
        self._receipt_cover: dict[Key, int] = {}
        self._in_order: dict[Key, chain.InOrderVerifier] = {}

    # --- mechanism (a): the checkpoint chain -----------------------------------------------------------
    def _signed_octets(self, data: bytes) -> bytes:
        """The to-be-signed octets of a signed checkpoint, after checking the signature over them — before
        anything is decoded, so unauthenticated input costs one hash and one verification (N12)."""
        if not isinstance(data, (bytes, bytearray)):
            raise AmortError(Code.TRUNCATED, f"Checkpoint must be bytes, not {type(data).__name__}",
                             field="Checkpoint")
        if len(data) > self.max_checkpoint_octets:
            raise AmortError(Code.TRAILING, f"{len(data)} octets, this auditor reads at most "
                             f"{self.max_checkpoint_octets}", field=f"Checkpoint@{self.max_checkpoint_octets}")
        alg_id = SIG_ALGORITHM_IDS[self.controller.algorithm]
        size = SIGNATURE_OCTETS[alg_id]
        tail = len(data) - size - 3
        if tail < 0 or data[tail] != alg_id or int.from_bytes(data[tail + 1:tail + 3], "big") != size:
            raise AmortError(Code.SIG_FAIL, f"does not end in a {self.controller.algorithm} signature",
                             field="Checkpoint.sig")
        signed = bytes(data[:tail + 1])
        self.controller.verify_octets(signed, bytes(data[tail + 3:]), context(Checkpoint, self.profile), "Checkpoint")
        return signed

    def _check_controller(self, controller_id: bytes, what: str) -> None:
        if controller_id != self.controller_id:
            raise AmortError(Code.SIG_FAIL, f"names controller {controller_id.hex()}, this auditor follows "
                             f"{self.controller_id.hex()}", field=f"{what}.controller_id")

    def _check_epoch_known(self, key: Key, where: str) -> None:
        if self.require_opens and key not in self.anchors:
            raise AmortError(Code.DEVICE_UNKNOWN, f"no signed EPOCH_OPEN for {key[0].hex()} epoch {key[1]}",
                             field=where)
        if key[1] == 0:
            raise AmortError(Code.EPOCH_STALE, "epoch 0 is never opened (epochs start at 1)", field=where)

    def ingest_checkpoint(self, data: bytes, consistency: bytes | None = None) -> Checkpoint:
        """Accept the next checkpoint: signature, fork, link, tree growth, spans, EPOCH_CLOSE entries.

        The checkpoint is recorded before ERR_EVIDENCE_INCOMPLETE is raised: it is authentic, and the
        error reports that an epoch it closes ended with evidence that was never committed; the same checkpoint fed
        again raises it again. A closed epoch is final: a later span or close entry for it is EPOCH_STALE (N01).
        Two different signed bodies at one index are CKPT_FORK even when the first was refused for its content: the
        controller signed both.
        """
        signed = self._signed_octets(data)
        ckpt = Checkpoint.decode(data, wire_format=self.profile.wire_format)
        self._check_controller(ckpt.controller_id, "Checkpoint")
        link = link_hash(signed)
        if self.signed_at.setdefault(ckpt.index, link) != link:
            raise AmortError(Code.CKPT_FORK, f"two signed checkpoints at position {ckpt.index}",
                             field="Checkpoint.index")
        if ckpt.index in self.heads:  # the same checkpoint again (also re-signed: the link does not cover the sig)
            if ckpt.index in self._incomplete:
                raise self._incomplete[ckpt.index]
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
        if ckpt.tree_size - old_size > self.max_checkpoint_reports:
            raise AmortError(Code.TRAILING, f"checkpoint adds {ckpt.tree_size - old_size} reports, this auditor takes "
                             f"at most {self.max_checkpoint_reports} per checkpoint", field="Checkpoint.tree_size")
        if old_size:
            self._check_consistency(last, ckpt, consistency)
        committed = dict(self.committed)
        seen_keys: set[Key] = set()
        for i, span in enumerate(ckpt.spans):
            where = f"Checkpoint.spans[{i}]"
            key = (span.dev_id, span.epoch)
            self._check_epoch_known(key, where)
            if key in self.closes:
                raise AmortError(Code.EPOCH_STALE, f"span for epoch {span.epoch}, closed earlier in the chain",
                                 field=where)
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
        incomplete, closed_here = [], set()
        for i, entry in enumerate(ckpt.closes):
            where = f"Checkpoint.closes[{i}]"
            key = (entry.dev_id, entry.epoch)
            self._check_epoch_known(key, where)
            if key in self.closes or key in closed_here:
                raise AmortError(Code.EPOCH_STALE, f"epoch {entry.epoch} of {entry.dev_id.hex()} is closed already",
                                 field=where)
            closed_here.add(key)
            if entry.last_committed != committed.get(key, 0):
                raise AmortError(Code.SEQ_GAP, f"EPOCH_CLOSE claims {entry.last_committed} committed, chain "
                                 f"shows {committed.get(key, 0)}", field=where)
            if entry.last_seen != entry.last_committed:
                incomplete.append(entry)
        head = _Head(ckpt.index, link, ckpt.tree_size, ckpt.root)
        self.heads[ckpt.index] = head
        self.last = head
        self.committed = committed
        for span in ckpt.spans:
            self._spans_at.setdefault((span.dev_id, span.epoch), []).append((ckpt.index, span.seq_hi))
        for entry in ckpt.closes:
            self.closes[(entry.dev_id, entry.epoch)] = (entry.last_committed, entry.last_seen)
        if incomplete:
            lost = ", ".join(f"{e.dev_id.hex()}/{e.epoch}: {e.last_seen - e.last_committed} lost" for e in incomplete)
            error = AmortError(Code.ERR_EVIDENCE_INCOMPLETE, f"epochs closed with uncommitted evidence ({lost})",
                               field="Checkpoint.closes")
            self._incomplete[ckpt.index] = error
            raise error
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
        """A standalone (unsigned) EPOCH_CLOSE: it must repeat the close entry the signed chain committed for that
        epoch (N02): SEQ_GAP for an epoch the chain never opened, has not closed, or closed with other counts;
        lost evidence is ERR_EVIDENCE_INCOMPLETE."""
        close = EpochClose.decode(data)
        signed = self.closes.get((close.dev_id, close.epoch))
        if signed is None:  # never opened, or still open
            raise AmortError(Code.SEQ_GAP, f"the signed chain has no EPOCH_CLOSE for epoch {close.epoch} of "
                             f"{close.dev_id.hex()}", field="EpochClose.epoch")
        if (close.last_committed, close.last_seen) != signed:
            raise AmortError(Code.SEQ_GAP, f"claims {close.last_committed} committed and {close.last_seen} seen, the "
                             f"signed close says {signed[0]} and {signed[1]}", field="EpochClose.last_seen")
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

    # --- device identities ----------------------------------------------------------------------------
    def ingest_certificate(self, data: bytes) -> bytes:
        """Learn a device's signing key from its CA-signed certificate: SIG_FAIL unless the CA signed it,
        PROFILE_MISMATCH unless it binds the device to this auditor's profile; returns its dev_id."""
        cert = verify_certificate(data, self.ca, self.profile)
        self.certificates[cert.dev_id] = cert
        return cert.dev_id

    def _certificate(self, dev_id: bytes, where: str) -> Certificate:
        cert = self.certificates.get(dev_id)
        if cert is None:
            raise AmortError(Code.DEVICE_UNKNOWN, f"no certificate of {dev_id.hex()}", field=where)
        return cert

    def _device_key(self, dev_id: bytes, where: str) -> PublicKey:
        """The signing key the CA bound to ``dev_id`` (DEVICE_UNKNOWN without its certificate, SIG_FAIL if the
        certificate holds none)."""
        return PublicKey.of_device(self._certificate(dev_id, where))

    # --- mechanism (b): disclosure chain ---------------------------------------------------------------
    def ingest_epoch_open(self, data: bytes) -> EpochOpen:
        """Take K0 and the tag length from a controller-signed EPOCH_OPEN of a device whose certificate this auditor
        holds (DEVICE_UNKNOWN) — the certificate binds the device to a profile, so an open in another variant's form
        or stating another profile is PROFILE_MISMATCH, however this auditor was configured.

        Two different EPOCH_OPENs for one (device, epoch) are equivocation (CKPT_FORK). Hardened: the anchor must
        carry the device's signature (SIG_FAIL), N03 — the paper's design has nothing that shows an auditor given
        only a substituted open that it is one."""
        hardened = self.profile.hardened
        opened = decode_for_variant(data, EpochOpen, HardenedEpochOpen, hardened)
        check_profile(opened.profile, self.profile, "EpochOpen.profile")
        self.controller.verify(opened, opened.sig, "EpochOpen", self.profile)
        self._check_controller(opened.controller_id, "EpochOpen")
        key = (opened.dev_id, opened.epoch)
        if opened.epoch == 0:
            raise AmortError(Code.EPOCH_STALE, "epoch 0 is never opened (epochs start at 1)", field="EpochOpen.epoch")
        self._certificate(opened.dev_id, "EpochOpen.dev_id")
        if hardened:
            statement = AnchorStatement(opened.controller_id, opened.dev_id, opened.epoch, opened.k0)
            self._device_key(opened.dev_id, "EpochOpen.dev_id").verify_device_statement(
                statement, opened.anchor_sig, "EpochOpen.anchor_sig", self.profile)
        link = link_hash(opened.tbs())
        if self._open_links.setdefault(key, link) != link:
            raise AmortError(Code.CKPT_FORK, f"two different EPOCH_OPENs for {opened.dev_id.hex()} epoch "
                             f"{opened.epoch}", field="EpochOpen")
        self.anchors[key] = opened.k0
        self.tag_lens[key] = opened.tag_len
        self._in_order.pop(key, None)
        return opened

    def compare_receipts(self, data: bytes) -> None:
        """Hardened: compare a device's kept receipts with this auditor's chain — a receipt that differs from the
        accepted checkpoint at its index is CKPT_FORK (the controller showed the device a private history, N04),
        and the (device, epoch) stays forked: no disclosure of it is accepted afterwards. Matching receipts let
        :meth:`verify_origin` accept disclosures of the reports they commit.

        The list must be signed by the device it names, with its certified key (SIG_FAIL), for an epoch whose
        EPOCH_OPEN this auditor holds (DEVICE_UNKNOWN; epoch 0 is EPOCH_STALE): a list assembled from the public
        chain, or relabelled from another epoch, is refused."""
        if not self.profile.hardened:
            raise AmortError(Code.PROFILE_MISMATCH, "receipt lists belong to the hardened variant; this deployment "
                             "runs the paper's design", field="Receipts")
        receipts = Receipts.decode(data)
        key = (receipts.dev_id, receipts.epoch)
        self._device_key(receipts.dev_id, "Receipts.dev_id").verify_device_statement(
            receipts, receipts.sig, "Receipts", self.profile)
        if receipts.epoch == 0:
            raise AmortError(Code.EPOCH_STALE, "epoch 0 is never opened (epochs start at 1)", field="Receipts.epoch")
        if key not in self.anchors:
            raise AmortError(Code.DEVICE_UNKNOWN, f"no signed EPOCH_OPEN for {receipts.dev_id.hex()} epoch "
                             f"{receipts.epoch}", field="Receipts.epoch")
        matched = -1
        for entry in receipts.entries:
            head = self.heads.get(entry.index)
            if head is None:
                continue  # not accepted here yet: compared when the device shows it again
            if head.link != entry.link:
                self.forks.add(key)
                raise AmortError(Code.CKPT_FORK, f"the device accepted another checkpoint {entry.index} than the "
                                 "public chain holds", field="Receipts.entries")
            matched = max(matched, entry.index)
        cover = max((hi for index, hi in self._spans_at.get(key, []) if index <= matched), default=0)
        self._receipt_cover[key] = max(self._receipt_cover.get(key, 0), cover)

    def verify_origin(self, report_bytes: bytes, disclosure: bytes, proof_bytes: bytes, *,
                      in_order: bool = True) -> None:
        """Public device-origin check: committed, key on the chain, leaf included, disclosure tag recomputed.

        The disclosed index must be a key's (1..2^24, N06/N13). Hardened: the device's compared, signed receipts
        must show the commitment of the report (DISCLOSE_EARLY otherwise) and must never have contradicted this
        auditor's chain (CKPT_FORK) — both checked before the chain walk, the only step whose cost grows with j."""
        disc = Disclosure.decode(disclosure)
        explicit = self.profile.wire_format == EXPLICIT
        rec = (Report.decode(report_bytes, wire_format=EXPLICIT).record if explicit
               else Report.decode_record(report_bytes))
        key = (disc.dev_id, disc.epoch)
        if (rec.dev_id, rec.epoch, rec.seq) != (disc.dev_id, disc.epoch, disc.j):
            raise AmortError(Code.CHAIN_FAIL, f"K_{disc.j} is disclosed for another report than seq {rec.seq}",
                             field="Disclosure.j")
        chain.check_index(disc.j)
        anchor = self.anchors.get(key)
        if anchor is None:
            raise AmortError(Code.DEVICE_UNKNOWN, "no signed EPOCH_OPEN for this device and epoch",
                             field="Disclosure.epoch")
        report = Report.decode(report_bytes, wire_format=self.profile.wire_format, tag_len=self.tag_lens[key])
        if disc.j > self.committed.get(key, 0):
            raise AmortError(Code.DISCLOSE_EARLY, f"K_{disc.j} disclosed before any checkpoint committed report "
                             f"{disc.j}", field="Disclosure.j")
        if self.profile.hardened:
            if key in self.forks:
                raise AmortError(Code.CKPT_FORK, "this device's receipts contradicted the public chain: none of its "
                                 "disclosures for the epoch is accepted", field="Receipts")
            if self._receipt_cover.get(key, 0) < disc.j:
                raise AmortError(Code.DISCLOSE_EARLY, f"no device receipt compared here commits report {disc.j}",
                                 field="Receipts")
        if in_order:
            self._in_order.setdefault(key, chain.InOrderVerifier(anchor)).verify(disc.j, disc.key)
        else:
            chain.verify_independent(anchor, disc.j, disc.key)
        self.verify_inclusion(report_bytes, proof_bytes)
        if len(report.dtag) != self.tag_lens[key] or not kdf.mac_ok(disc.key, report.record.encode(), report.dtag):
            raise AmortError(Code.MAC_FAIL, "disclosure tag does not verify under the disclosed key",
                             field="Report.dtag")

    # --- per-device commitments --------------------------------------------------------------------------
    def verify_subtree(self, checkpoint: bytes, dev_id: bytes, epoch: int, reports: list[bytes]) -> None:
        """A verifier holding a device's reports recomputes its committed subtree root (detects substitution)."""
        ckpt = Checkpoint.decode(checkpoint, wire_format=self.profile.wire_format)
        self.controller.verify(ckpt, ckpt.sig, "Checkpoint", self.profile)
        for span in ckpt.spans:
            if (span.dev_id, span.epoch) == (dev_id, epoch):
                if merkle.root(reports) != span.subtree:
                    raise AmortError(Code.PROOF_FAIL, "device reports do not match the committed subtree root",
                                     field="Checkpoint.spans.subtree")
                return
        raise AmortError(Code.SEQ_GAP, "checkpoint commits nothing for this device", field="Checkpoint.spans")

    def verify_sub_checkpoint(self, data: bytes, device: PublicKey | None, reports: list[bytes]) -> SubCheckpoint:
        """Mechanism (c): the device's own signature over the Merkle root of its reports.

        The key is the claimed device's: ``device`` bound to it by its certificate (``PublicKey.of_device``), or,
        with None, the one this auditor learnt from that device's certificate — never the sender's (N16). Each
        report must be the signer's own, of the signed epoch, with the signed range's sequence numbers in order
        (PROOF_FAIL naming the report): the root alone would let a device vouch for records that claim another
        device, epoch or sequence number."""
        sub = SubCheckpoint.decode(data)
        key = device if device is not None else self._device_key(sub.dev_id, "SubCheckpoint.dev_id")
        key.verify_device_statement(sub, sub.sig, "SubCheckpoint", self.profile)
        if len(reports) != sub.seq_hi - sub.seq_lo + 1 or merkle.root(reports) != sub.root:
            raise AmortError(Code.PROOF_FAIL, "reports do not match the device-signed root", field="SubCheckpoint.root")
        for i, report in enumerate(reports):
            rec = (Report.decode(report, wire_format=EXPLICIT).record if self.profile.wire_format == EXPLICIT
                   else Report.decode_record(report))
            claimed = (rec.dev_id, rec.epoch, rec.seq)
            if claimed != (sub.dev_id, sub.epoch, sub.seq_lo + i):
                raise AmortError(Code.PROOF_FAIL, f"report {i} is ({rec.dev_id.hex()}, epoch {rec.epoch}, seq "
                                 f"{rec.seq}), the sub-checkpoint signs {sub.dev_id.hex()} epoch {sub.epoch} seq "
                                 f"{sub.seq_lo + i}", field=f"SubCheckpoint.reports[{i}]")
        return sub
