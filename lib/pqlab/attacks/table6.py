"""AMORT-V1 Table VI as executable scenarios: A01–A27 and the positive controls P1–P5."""

from __future__ import annotations

import dataclasses
import hashlib
import random

from pqlab.amort import kdf, merkle
from pqlab.amort.controller import Pending, spans_of
from pqlab.amort.messages import RECORD_LAYOUT, RECORD_OCTETS, Disclosure, InclusionProof, Record
from pqlab.attacks.registry import ACCEPT, Context, Outcome, attempt, case
from pqlab.attacks.tamper import forge, set_record, two_devices
from pqlab.experiments.amort_lab import Lab


# ---------------------------------------------------------------- Table VI: cryptographic (C)
@case("A01", "C", "Measurement modified after MAC", "MAC_FAIL")
def a01(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = set_record(lab, lab.report(a), digest=hashlib.sha256(b"malicious logic").digest())
    return attempt(lambda: lab.controller.ingest(data))


@case("A02", "C", "Sequence number modified after MAC", "MAC_FAIL")
def a02(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    lab.controller.ingest(lab.report(a))
    lab.report(a)  # the adversary drops seq 2 ...
    data = set_record(lab, lab.report(a), seq=2)  # ... and relabels seq 3 as the expected seq 2
    return attempt(lambda: lab.controller.ingest(data))


@case("A03", "C", "Device identifier modified after MAC", "MAC_FAIL")
def a03(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    data = set_record(lab, lab.report(a), dev_id=b.dev_id)
    return attempt(lambda: lab.controller.ingest(data))


@case("A04", "C", "MAC tag truncated", "TRUNCATED")
def a04(ctx: Context) -> Outcome:
    # The report is cut inside its evidence tag, at 10 of 16 octets: no tag length (8, 12, 16) lands there, so
    # this is a cut, not a shorter tag (a valid shorter length is A18's downgrade) — in either wire format.
    lab, a, _ = two_devices(ctx)
    data = lab.report(a, disclosure_tag=False)
    cut = len(data) - len(lab.decode_report(data).tag) + 10
    return attempt(lambda: lab.controller.ingest(data[:cut]))


@case("A05", "C", "Checkpoint root modified after signing", "SIG_FAIL")
def a05(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    lab.stream([a, b], 4)
    ckpt = lab.decode_checkpoint(lab.controller.checkpoint())
    tampered = ckpt.replace(root=hashlib.sha256(b"other history").digest()).encode()
    auditor = lab.cold_auditor()
    return attempt(lambda: auditor.ingest_checkpoint(tampered))


def _verify_origin(lab: Lab, dev_id: bytes, j: int, disc: bytes) -> Outcome:
    """What an auditor says of the disclosure ``disc`` for report ``j`` of the device's epoch 1, with its proof."""
    leaf, proof = lab.controller.inclusion(dev_id, 1, j)
    auditor = lab.auditor()
    return attempt(lambda: auditor.verify_origin(leaf, disc, proof))


@case("A06", "C", "Disclosed key not on the committed chain", "CHAIN_FAIL")
def a06(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    lab.stream([a, b], 4)
    a.receive_checkpoint(lab.controller.checkpoint())
    disc = Disclosure.decode(a.disclose(2)).replace(key=random.Random(ctx.seed).randbytes(32)).encode()
    return _verify_origin(lab, a.dev_id, 2, disc)


@case("A07", "C", "Forged Merkle inclusion proof", "PROOF_FAIL")
def a07(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    lab.stream([a, b], 8)
    lab.controller.checkpoint()
    leaf, proof_bytes = lab.controller.inclusion(a.dev_id, 1, 3)
    proof = InclusionProof.decode(proof_bytes)
    forged = proof.replace(path=(hashlib.sha256(b"forged sibling").digest(), *proof.path[1:])).encode()
    auditor = lab.auditor()
    return attempt(lambda: auditor.verify_inclusion(leaf, forged))


@case("A08", "C", "Valid record replayed under another device", "MAC_FAIL")
def a08(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    lab.stream([b], 3)
    rec = lab.decode_report(lab.report(a)).record
    data = set_record(lab, lab.report(a), dev_id=b.dev_id, epoch=b.epoch_number, seq=4, timestamp=rec.timestamp)
    return attempt(lambda: lab.controller.ingest(data))


# Hardened: the device never acknowledges the forged commitment (its subtree differs), so no signed receipt covers
# report 3 and the auditor refuses before walking the chain (the receipt check comes first: it is the cheap one).
@case("A22", "C", "Controller state exposes chain material", "CHAIN_FAIL", hardened="DISCLOSE_EARLY")
def a22(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    reports = lab.stream([a, b], 3, ingest=False)
    k_evid, _ = lab.controller.evidence_key(a.dev_id)
    # Everything the controller knows derives from ss / K_ep / K_evid; derive a "chain key" from it.
    guess = kdf.expand(k_evid, kdf.label(b"disclosure", a.dev_id, 1))
    forged = forge(lab.controller, a.dev_id, reports[4], dtag_key=guess, digest=bytes(32))
    for data in reports:
        lab.controller.ingest(forged if data == reports[4] else data)
    lab.controller.checkpoint()
    disc = Disclosure(a.dev_id, 1, 3, guess).encode()
    return _verify_origin(lab, a.dev_id, 3, disc)


# ---------------------------------------------------------------- Table VI: protocol-semantic (S)
@case("A09", "S", "Correctly MACed record replayed", "SEQ_DUPLICATE")
def a09(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = lab.report(a)
    lab.controller.ingest(data)
    lab.controller.ingest(lab.report(a))
    return attempt(lambda: lab.controller.ingest(data))


@case("A10", "S", "Device skips a sequence number", "SEQ_GAP")
def a10(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    lab.controller.ingest(lab.report(a))
    lab.report(a)  # seq 2 never reaches the controller
    data = lab.report(a)
    return attempt(lambda: lab.controller.ingest(data))


@case("A11", "S", "Record from a superseded epoch", "EPOCH_STALE")
def a11(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    old = lab.report(a)
    lab.controller.ingest(old)
    lab.open_epoch(a)  # epoch 2 supersedes epoch 1
    lab.controller.ingest(lab.report(a))
    return attempt(lambda: lab.controller.ingest(old))  # the adversary replays the epoch-1 record


@case("A12", "S", "Evidence from an unregistered device", "DEVICE_UNKNOWN")
def a12(ctx: Context) -> Outcome:
    lab, _, _ = two_devices(ctx)
    stranger = lab.device(3, register=False)
    # The stranger is enrolled with a neighbouring controller, so its report is well formed and tagged.
    neighbour = ctx.lab(seed=ctx.seed + 1).controller
    neighbour.register(lab.cert(3))
    lab.open_epoch(stranger, controller=neighbour)
    data = lab.report(stranger)
    neighbour.ingest(data)
    return attempt(lambda: lab.controller.ingest(data))


@case("A13", "S", "Evidence from a revoked device", "REVOKED")
def a13(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    lab.controller.ingest(lab.report(a))
    lab.controller.revoke(a.dev_id)
    data = lab.report(a)
    return attempt(lambda: lab.controller.ingest(data))


@case("A14", "S", "Controller omits a record mid-batch", "SEQ_GAP")
def a14(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 5)
    batch, lab.controller.batch = lab.controller.batch, []
    declared = spans_of(batch)  # the ranges the honest batch would declare
    omit = random.Random(ctx.seed).choice([p for p in batch if p.dev_id == a.dev_id and 1 < p.seq < 5])
    ckpt = lab.controller.commit([p for p in batch if p is not omit], spans=declared)
    auditor = lab.cold_auditor()
    return attempt(lambda: auditor.ingest_checkpoint(ckpt))


@case("A15", "S", "Controller equivocates between verifiers", "CKPT_FORK")
def a15(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 4)
    batch = list(lab.controller.batch)
    honest = lab.controller.checkpoint()
    alt = batch[:-1]  # the second verifier is shown a history without the last report
    view = lab.decode_checkpoint(honest)
    other = lab.controller.sign(view.replace(tree_size=len(alt), root=merkle.root([p.leaf for p in alt]),
                                             spans=spans_of(alt)))
    first, second = lab.cold_auditor(), lab.cold_auditor()
    first.ingest_checkpoint(honest)
    second.ingest_checkpoint(other)
    return attempt(lambda: first.compare(second))


@case("A16", "S", "Checkpoint withheld from the chain", "CKPT_DISCONTINUITY")
def a16(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=4)
    lab.stream([a, b], 6)
    first, _, third = lab.controller.checkpoints[:3]
    auditor = lab.cold_auditor()
    lab.feed(auditor, first)
    proof = lab.controller.consistency(auditor.last.tree_size, lab.decode_checkpoint(third).tree_size)
    return attempt(lambda: auditor.ingest_checkpoint(third, proof))


@case("A17", "S", "Chain key disclosed before commitment", "DISCLOSE_EARLY")
def a17(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 4)
    a.receive_checkpoint(lab.controller.checkpoint())
    pending = lab.report(a)
    lab.controller.ingest(pending)  # seq 5: verified by the controller, not yet in any checkpoint
    leaked = Disclosure(a.dev_id, a.epoch_number, 5, a.current.chain.key(5)).encode()
    empty_proof = InclusionProof(0, 0, ()).encode()
    auditor = lab.auditor()
    return attempt(lambda: auditor.verify_origin(pending, leaked, empty_proof))


@case("A18", "S", "MAC tag length downgraded", "TAGLEN_DOWNGRADE")
def a18(ctx: Context) -> Outcome:
    # The evidence tag cut to its valid 64-bit prefix. (Two 8-octet prefixes side by side are as long as one
    # 16-octet tag: the implied wire format then reads one 16-octet tag and refuses it as MAC_FAIL.)
    lab, a, _ = two_devices(ctx)
    report = lab.decode_report(lab.report(a, disclosure_tag=False))
    data = report.replace(tag=report.tag[:8]).encode()
    return attempt(lambda: lab.controller.ingest(data))


@case("A19", "S", "Whole batch suppressed for one device", "SEQ_GAP")
def a19(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    commits = []
    for batch_no in range(3):
        lab.stream([a, b], 4)
        batch, lab.controller.batch = lab.controller.batch, []
        if batch_no == 1:
            batch = [p for p in batch if p.dev_id != a.dev_id]
        commits.append(lab.controller.commit(batch))
    auditor = lab.cold_auditor()
    lab.feed(auditor, commits[0])
    lab.feed(auditor, commits[1])
    return attempt(lambda: lab.feed(auditor, commits[2]))


def _forged_batch(lab: Lab, dev_id: bytes, seq: int, state: bytes) -> list[Pending]:
    """The controller's pending batch, taken from it, with the device's report ``seq`` replaced by a record the
    controller forges over the digest of ``state``."""
    batch, lab.controller.batch = lab.controller.batch, []
    victim = next(p for p in batch if p.dev_id == dev_id and p.seq == seq)
    forged = forge(lab.controller, dev_id, victim.leaf, digest=hashlib.sha256(state).digest())
    return [Pending(p.dev_id, p.epoch, p.seq, forged) if p is victim else p for p in batch]


@case("A20", "S", "Controller omits and substitutes a record", "PROOF_FAIL")
def a20(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 5)
    ckpt = lab.controller.commit(_forged_batch(lab, a.dev_id, 3, b"benign-looking"))
    auditor = lab.auditor()  # mechanism (a) alone accepts: count and ranges are intact
    mine = [a.current.reports[s] for s in range(1, 6)]
    return attempt(lambda: auditor.verify_subtree(ckpt, a.dev_id, 1, mine))


@case("A21", "S", "Controller forges record and discloses", "MAC_FAIL")
def a21(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    ckpt = lab.controller.commit(_forged_batch(lab, a.dev_id, 2, b"forged state"))
    a.receive_checkpoint(ckpt, check_subtree=False)  # mechanism (b) device: releases K_j once j is committed
    disc = a.disclose(2)
    return _verify_origin(lab, a.dev_id, 2, disc)


@case("A23", "S", "Device replays sequence after restart", "MAC_FAIL")
def a23(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    before = lab.stream([a], 3)
    lab.controller.checkpoint()
    a.restart()
    lab.open_epoch(a)  # fresh-epoch recovery: new K_evid
    replay = set_record(lab, before[0], epoch=a.epoch_number)  # pass the staleness check; tag is from the old key
    return attempt(lambda: lab.controller.ingest(replay))


# ---------------------------------------------------------------- Table VI: decoder (D)
@case("A24", "D", "Record truncated", "TRUNCATED")
def a24(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = lab.report(a)[:random.Random(ctx.seed).randrange(1, RECORD_OCTETS)]
    return attempt(lambda: lab.controller.ingest(data))


@case("A25", "D", "Trailing bytes appended", "TRAILING")
def a25(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = lab.report(a) + b"\x00"
    return attempt(lambda: lab.controller.ingest(data))


@case("A26", "D", "Domain-separation tag corrupted", "BAD_DOMAIN")
def a26(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = bytearray(lab.report(a))
    data[1 + random.Random(ctx.seed).randrange(len(Record.DOMAIN))] ^= 0x20
    return attempt(lambda: lab.controller.ingest(bytes(data)))


@case("A27", "D", "Unknown protocol version", "BAD_VERSION")
def a27(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    data = bytearray(lab.report(a))
    data[RECORD_LAYOUT["version"][1]] = 2  # the version octet
    return attempt(lambda: lab.controller.ingest(bytes(data)))


# ---------------------------------------------------------------- Table VI: positive controls
@case("P1", "P", "Honest stream accepted by a cold auditor", ACCEPT, detail="2 checkpoints verified")
def p1(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=16)
    lab.stream([a, b], 16)

    def audit() -> None:
        auditor = lab.auditor()
        for dev in (a, b):
            for seq in range(1, 17):
                leaf, proof = lab.controller.inclusion(dev.dev_id, 1, seq)
                auditor.verify_inclusion(leaf, proof)
        return auditor

    out = attempt(audit)
    n = len(lab.controller.checkpoints)
    return dataclasses.replace(out, detail=f"{n} checkpoints verified") if out.code == ACCEPT else out


@case("P2", "P", "Inclusion proof verifies with no secret", ACCEPT, detail="path length 4")
def p2(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=16)
    lab.stream([a, b], 8)
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, random.Random(ctx.seed).randrange(1, 9))
    auditor = lab.auditor()  # public material only: controller public key and checkpoints
    out = attempt(lambda: auditor.verify_inclusion(leaf, proof))
    n = len(InclusionProof.decode(proof).path)
    return dataclasses.replace(out, detail=f"path length {n}") if out.code == ACCEPT else out


@case("P3", "P", "Public origin authentication after disclosure", ACCEPT, detail="mechanism (b), 8 records")
def p3(ctx: Context) -> Outcome:
    lab = ctx.lab(k=8)
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 8)
    a.receive_checkpoint(lab.controller.checkpoints[-1])
    in_order, independent = lab.auditor(), lab.auditor()

    def verify() -> None:
        for j in range(1, 9):
            disc = a.disclose(j)
            leaf, proof = lab.controller.inclusion(a.dev_id, 1, j)
            in_order.verify_origin(leaf, disc, proof, in_order=True)
            independent.verify_origin(leaf, disc, proof, in_order=False)

    out = attempt(verify)
    return dataclasses.replace(out, detail="mechanism (b), 8 records") if out.code == ACCEPT else out


@case("P4", "P", "Revoking one device leaves the fleet attesting", ACCEPT, detail="peer unaffected")
def p4(ctx: Context) -> Outcome:
    lab = ctx.lab(k=1_000)
    fleet = [lab.device(n) for n in (1, 2, 3)]
    for dev in fleet:
        lab.open_epoch(dev)
    lab.stream(fleet, 2)
    lab.controller.revoke(fleet[1].dev_id)
    revoked = attempt(lambda: lab.controller.ingest(lab.report(fleet[1])))
    if revoked.code != "REVOKED":
        return Outcome(revoked.code, f"revoked device was not rejected: {revoked.detail}")
    peers = [fleet[0], fleet[2]]
    out = attempt(lambda: (lab.stream(peers, 3), lab.controller.checkpoint(), lab.auditor()))
    return dataclasses.replace(out, detail="peer unaffected") if out.code == ACCEPT else out


@case("P5", "P", "One durable operation per checkpoint", ACCEPT, detail="{records} records, {fsyncs} fsync")
def p5(ctx: Context) -> Outcome:
    lab = ctx.lab(k=ctx.stream_k)
    fleet = [lab.device(n) for n in (1, 2, 3, 4)]
    for dev in fleet:
        lab.open_epoch(dev)
    before = lab.log.fsync_count
    out = attempt(lambda: lab.stream(fleet, ctx.stream_records // len(fleet)))
    fsyncs = lab.log.fsync_count - before
    detail = f"{ctx.stream_records} records, {fsyncs} fsync"
    if out.code != ACCEPT:
        return out
    counts = (("records", ctx.stream_records), ("fsyncs", fsyncs), ("checkpoints", len(lab.controller.checkpoints)))
    if fsyncs != ctx.stream_records // ctx.stream_k or len(lab.log.entries()) != fsyncs:
        return Outcome("WRONG_FSYNC_COUNT", detail, counts)
    lab.auditor()
    return Outcome(ACCEPT, detail, counts)
