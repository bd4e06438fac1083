"""Attack cases beyond the paper (X01–X19): each an executable scenario over the real model."""

from __future__ import annotations

import dataclasses
import hashlib
import random

from pqlab.amort.controller import link_hash, spans_of
from pqlab.amort.device import Device
from pqlab.amort.identity import CertificateAuthority, PublicKey, SigningKey
from pqlab.amort.messages import ConsistencyProof, Disclosure, Span
from pqlab.attacks.registry import ACCEPT, Context, Outcome, attempt, case
from pqlab.attacks.tamper import forge, two_devices


# ---------------------------------------------------------------- extra cases beyond the paper
@case("X01", "C", "Forged consistency proof between checkpoints", "PROOF_FAIL", table="extra")
def x01(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=6)
    lab.stream([a, b], 6)
    first, second = lab.controller.checkpoints[:2]
    auditor = lab.cold_auditor()
    auditor.ingest_checkpoint(first)
    proof = ConsistencyProof.decode(lab.controller.consistency(6, 12))
    forged = proof.replace(path=tuple(hashlib.sha256(h).digest() for h in proof.path)).encode()
    return attempt(lambda: auditor.ingest_checkpoint(second, forged))


@case("X02", "S", "Checkpoint replayed to the device in a later epoch", "EPOCH_STALE", table="extra")
def x02(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 4)
    old = lab.controller.checkpoint()
    a.receive_checkpoint(old)
    lab.open_epoch(a)
    lab.stream([a], 4)
    return attempt(lambda: a.receive_checkpoint(old))  # would let K_1..K_4 of the new epoch out


@case("X03", "S", "EPOCH_OPEN replayed after a newer epoch", "EPOCH_STALE", table="extra")
def x03(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    first = lab.controller.epoch_open(a.dev_id, 1)
    lab.open_epoch(a)
    return attempt(lambda: a.accept_open(first))


@case("X04", "S", "MAC tag length upgraded (8 → 16 octets)", "TAGLEN_DOWNGRADE", table="extra")
def x04(ctx: Context) -> Outcome:
    lab = ctx.lab(tag_len=8)
    a = lab.device(1, min_tag_len=8)
    lab.open_epoch(a)
    report = lab.decode_report(lab.report(a), tag_len=8)
    data = report.replace(tag=report.tag + bytes(8), dtag=report.dtag + bytes(8)).encode()
    return attempt(lambda: lab.controller.ingest(data))


@case("X05", "S", "Device tuples reordered after signing", "SIG_FAIL", table="extra")
def x05(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    ckpt = lab.decode_checkpoint(lab.controller.checkpoint())
    reordered = ckpt.replace(spans=ckpt.spans[::-1]).encode()
    return attempt(lambda: lab.cold_auditor().ingest_checkpoint(reordered))


@case("X06", "S", "Zero-length span signed into a checkpoint", "SEQ_GAP", table="extra")
def x06(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    batch, lab.controller.batch = lab.controller.batch, []
    spans = spans_of([p for p in batch if p.dev_id == b.dev_id])
    empty = Span(a.dev_id, 1, 1, 0, hashlib.sha256(b"").digest())
    ckpt = lab.controller.commit([p for p in batch if p.dev_id == b.dev_id], spans=(empty, *spans))
    return attempt(lambda: lab.cold_auditor().ingest_checkpoint(ckpt))


@case("X07", "S", "Sequence counter wrapped to 0 by a compromised device", "SEQ_DUPLICATE", table="extra")
def x07(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    lab.stream([a], 3)
    wrapped = forge(lab.controller, a.dev_id, lab.report(a), seq=0)  # the device holds K_evid too
    return attempt(lambda: lab.controller.ingest(wrapped))


# Hardened: the device never received the checkpoint of the forged epoch-2 report: no signed receipt covers it.
@case("X08", "C", "Disclosed key reused in a later epoch", "CHAIN_FAIL", table="extra", hardened="DISCLOSE_EARLY")
def x08(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 2)
    a.receive_checkpoint(lab.controller.checkpoint())
    old_key = Disclosure.decode(a.disclose(1)).key
    lab.open_epoch(a)
    template = lab.report(a, disclosure_tag=False)
    forged = forge(lab.controller, a.dev_id, template, dtag_key=old_key)
    lab.controller.ingest(forged)
    lab.controller.checkpoint()
    disc = Disclosure(a.dev_id, 2, 1, old_key).encode()
    leaf, proof = lab.controller.inclusion(a.dev_id, 2, 1)
    auditor = lab.auditor()
    return attempt(lambda: auditor.verify_origin(leaf, disc, proof))


@case("X09", "S", "Restart loses uncommitted evidence", "ERR_EVIDENCE_INCOMPLETE", table="extra")
def x09(ctx: Context) -> Outcome:
    lab = ctx.lab(k=4)
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 10)  # 1..8 committed in two checkpoints, 9..10 seen but uncommitted
    a.restart()
    lab.open_epoch(a)
    lab.stream([a], 4)  # the next checkpoint carries EPOCH_CLOSE{last committed 8, last seen 10}
    auditor = lab.cold_auditor()
    lab.feed(auditor, lab.controller.checkpoints[0])
    lab.feed(auditor, lab.controller.checkpoints[1])
    return attempt(lambda: lab.feed(auditor, lab.controller.checkpoints[2]))


@case("X10", "S", "Device restarts too frequently", "ERR_RESTART_RATE", table="extra")
def x10(ctx: Context) -> Outcome:
    lab = ctx.lab(max_restarts=3, restart_window=60_000)
    a = lab.device(1)
    for _ in range(3):
        a.restart()
        lab.open_epoch(a)
        lab.now += 5_000
    return attempt(lambda: lab.controller.open_epoch(a.dev_id, lab.now))


@case("X11", "S", "Record after the epoch expiry", "EPOCH_STALE", table="extra")
def x11(ctx: Context) -> Outcome:
    lab = ctx.lab(epoch_lifetime=10_000)
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 5)
    lab.now += 10_000
    data = lab.report(a)
    return attempt(lambda: lab.controller.ingest(data))


@case("X12", "C", "Checkpoint signed by a rogue controller key", "SIG_FAIL", table="extra")
def x12(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    lab.stream([a, b], 3)
    body = lab.decode_checkpoint(lab.controller.checkpoint())
    rogue = SigningKey.generate("ML-DSA-65")
    forged = body.replace(sig=rogue.sign(body, lab.profile)).encode()
    return attempt(lambda: lab.cold_auditor().ingest_checkpoint(forged))


@case("X13", "C", "EPOCH_CONFIRM without the device's KEM secret", "MAC_FAIL", table="extra")
def x13(ctx: Context) -> Outcome:
    lab = ctx.lab()
    victim = lab.device(1)
    other_kem = ctx.keys.devices[1].kem  # a real ML-KEM key pair, but not the one certified for the victim
    impostor = Device(lab.deployment, victim.dev_id, other_kem, random.Random(ctx.seed).randbytes,
                      sign_key=ctx.keys.devices[1].sign)
    confirm = impostor.respond(lab.controller.open_epoch(victim.dev_id, lab.now))
    return attempt(lambda: lab.controller.confirm(confirm, lab.now))


@case("X14", "C", "Device certificate not signed by the CA", "SIG_FAIL", table="extra")
def x14(ctx: Context) -> Outcome:
    lab = ctx.lab()
    rogue_ca = CertificateAuthority(SigningKey.generate("ML-DSA-65"))
    keys = ctx.keys.devices[0]
    cert = rogue_ca.issue(keys.dev_id, keys.kem.public, keys.sign.public, profile=lab.profile)
    return attempt(lambda: lab.controller.register(cert))


@case("X15", "S", "Substituted report under a device sub-checkpoint", "PROOF_FAIL", table="extra")
def x15(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    reports = lab.stream([a], 6)
    sub = a.sub_checkpoint()
    reports[2] = forge(lab.controller, a.dev_id, reports[2], digest=bytes(32))
    auditor = lab.cold_auditor()
    device_key = PublicKey.of(ctx.keys.devices[0].sign, owner=a.dev_id)
    return attempt(lambda: auditor.verify_sub_checkpoint(sub, device_key, reports))


@case("X16", "S", "Checkpoint rolls the tree back", "CKPT_DISCONTINUITY", table="extra")
def x16(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    first = lab.controller.checkpoint()
    view = lab.decode_checkpoint(first)
    lab.stream([a, b], 1)
    lab.controller.checkpoint()
    rollback = lab.controller.sign(view.replace(index=1, prev_hash=link_hash(view.tbs()), tree_size=4,
                                                root=lab.controller.tree.root(4), spans=()))
    auditor = lab.cold_auditor()
    auditor.ingest_checkpoint(first)
    return attempt(lambda: auditor.ingest_checkpoint(rollback))


@case("X17", "P", "SLH-DSA-128f checkpoint chain accepted by a cold auditor", ACCEPT, table="extra",
      detail="2 checkpoints verified")
def x17(ctx: Context) -> Outcome:
    keys = ctx.slh_keys
    lab = ctx.lab(keys, k=8)
    a, b = lab.device(1), lab.device(2)
    lab.open_epoch(a)
    lab.open_epoch(b)
    lab.stream([a, b], 8)
    if keys.controller.algorithm != "SLH-DSA-SHA2-128f":
        return Outcome("WRONG_SIGNER", keys.controller.algorithm)
    out = attempt(lab.auditor)
    return dataclasses.replace(out, detail=f"{len(lab.controller.checkpoints)} checkpoints verified") \
        if out.code == ACCEPT else out


@case("X18", "C", "SLH-DSA-128f checkpoint span altered after signing", "SIG_FAIL", table="extra")
def x18(ctx: Context) -> Outcome:
    lab = ctx.lab(ctx.slh_keys, k=1_000)
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 4)
    ckpt = lab.decode_checkpoint(lab.controller.checkpoint())
    span = ckpt.spans[0]
    tampered = ckpt.replace(spans=(dataclasses.replace(span, seq_hi=3),)).encode()
    return attempt(lambda: lab.cold_auditor().ingest_checkpoint(tampered))


@case("X19", "S", "Controller opens an epoch with 8-octet tags", "TAGLEN_DOWNGRADE", table="extra")
def x19(ctx: Context) -> Outcome:
    lab = ctx.lab(tag_len=8)
    a = lab.device(1, min_tag_len=16)
    confirm = a.respond(lab.controller.open_epoch(a.dev_id, lab.now))
    opened = lab.controller.confirm(confirm, lab.now)
    return attempt(lambda: a.accept_open(opened))
