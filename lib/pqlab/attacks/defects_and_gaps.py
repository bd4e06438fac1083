"""The design's defects and gaps: issue 27's sixteen attacks (N01–N16), each run under both protocol variants.

``kind="defect"``: the paper's own text says the action must be rejected; both variants reject it (or, for the two
denial attacks N08 and N15, both now accept the honest action the adversary wanted refused). ``kind="gap"``: the
paper's mechanism cannot prevent it; the paper variant accepts, the hardened variant rejects (docs/protocol.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time

from pqlab.amort import merkle
from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.chain import DisclosureChain
from pqlab.amort.controller import GENESIS, MAX_EPOCH, Pending, spans_of
from pqlab.amort.errors import AmortError
from pqlab.amort.identity import PublicKey, SigningKey, context
from pqlab.amort.messages import (
    SIGNATURE_OCTETS,
    Checkpoint,
    Disclosure,
    EpochClose,
    EpochOpen,
    EpochReq,
    HardenedEpochOpen,
    HardenedEpochReq,
    Span,
    SubCheckpoint,
)
from pqlab.attacks.registry import ACCEPT, Context, Outcome, attempt, attempt_each, case
from pqlab.attacks.tamper import flip_dtag_bit, forge, two_devices
from pqlab.crypto import get_kem
from pqlab.experiments.amort_lab import Lab

DAY_MS = 86_400_000


def _opened(lab: Lab, dev_id: bytes, epoch: int) -> EpochOpen:
    data = lab.controller.epoch_open(dev_id, epoch)
    return (HardenedEpochOpen if lab.profile.hardened else EpochOpen).decode(data)


def _commit_substituted(lab: Lab, victim: Pending, forged: bytes) -> bytes:
    """Commit the pending batch with ``victim``'s leaf replaced by ``forged`` (counts and ranges intact)."""
    batch, lab.controller.batch = lab.controller.batch, []
    return lab.controller.commit([Pending(p.dev_id, p.epoch, p.seq, forged) if p is victim else p for p in batch])


# ---------------------------------------------------------------- EPOCH_CLOSE is final (N01, N02)
@case("N01", "S", "Span and second EPOCH_CLOSE for a closed epoch (hide ERR_EVIDENCE_INCOMPLETE)", "EPOCH_STALE",
      table="new", kind="defect")
def n01(ctx: Context) -> Outcome:
    lab = ctx.lab(k=4)
    a = lab.device(1)
    lab.open_epoch(a)
    sent = lab.stream([a], 10)  # 1..8 committed, 9 and 10 seen but not committed
    a.restart()
    lab.open_epoch(a)
    lab.stream([a], 4)  # checkpoint 2 carries EPOCH_CLOSE{epoch 1: committed 8, seen 10}
    # The controller now commits the "missing" 9 and 10 for the closed epoch and closes it again as complete.
    lab.controller._closes.append((a.dev_id, 1, 10))
    cover = lab.controller.commit([Pending(a.dev_id, 1, s, sent[s - 1]) for s in (9, 10)])
    auditor = lab.cold_auditor()
    for data in lab.controller.checkpoints[:3]:
        try:
            lab.feed(auditor, data)
        except AmortError as exc:
            if exc.code != "ERR_EVIDENCE_INCOMPLETE":
                raise
    return attempt(lambda: lab.feed(auditor, cover))


@case("N02", "S", "Unsigned EPOCH_CLOSE contradicting the chain, or for an epoch never opened or still open",
      "SEQ_GAP", table="new", kind="defect")
def n02(ctx: Context) -> Outcome:
    lab = ctx.lab(k=4)
    a, b = lab.device(1), lab.device(2)
    lab.open_epoch(a)
    lab.open_epoch(b)
    lab.stream([a], 10)
    a.restart()
    lab.open_epoch(a)
    lab.stream([a, b], 4)  # closes a's epoch 1 with 2 reports lost; b's epoch 1 stays open
    auditor = lab.cold_auditor()
    for data in lab.controller.checkpoints:
        try:
            lab.feed(auditor, data)
        except AmortError as exc:
            if exc.code != "ERR_EVIDENCE_INCOMPLETE":
                raise
    b_committed = auditor.committed[(b.dev_id, 1)]
    return attempt_each({
        "contradicts the signed close": lambda: auditor.check_epoch_close(EpochClose(a.dev_id, 1, 8, 8).encode()),
        "epoch never opened": lambda: auditor.check_epoch_close(EpochClose(a.dev_id, 7, 0, 0).encode()),
        "epoch still open": lambda: auditor.check_epoch_close(EpochClose(b.dev_id, 1, b_committed,
                                                                         b_committed).encode()),
    })


# ---------------------------------------------------------------- the three design gaps (N03–N05)
@case("N03", "C", "Controller re-opens the epoch with its own chain anchor and forges a disclosed report", ACCEPT,
      table="new", kind="gap", hardened="SIG_FAIL")
def n03(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    own = DisclosureChain(random.Random(ctx.seed).randbytes(32), lab.chain_length)  # the controller's chain
    honest = _opened(lab, a.dev_id, 1)
    substitute = honest.replace(k0=own.anchor)  # hardened: the device's anchor signature is over the real K0
    substitute = substitute.replace(sig=lab.keys.controller.sign(substitute, lab.profile)).encode()
    victim = next(p for p in lab.controller.batch if p.dev_id == a.dev_id and p.seq == 2)
    forged = forge(lab.controller, a.dev_id, victim.leaf, dtag_key=own.key(2),
                   digest=hashlib.sha256(b"forged state").digest())
    _commit_substituted(lab, victim, forged)
    disclosure = Disclosure(a.dev_id, 1, 2, own.key(2)).encode()
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, 2)

    def audit() -> None:
        # The auditor is shown the substitute instead of the honest open (an auditor shown both has two signed
        # opens for (a, 1): CKPT_FORK in either variant); everything else is the deployment's public record.
        auditor = ColdAuditor(lab.deployment)
        for n in (1, 2):
            auditor.ingest_certificate(lab.cert(n))
        auditor.ingest_epoch_open(substitute)
        auditor.ingest_epoch_open(lab.controller.epoch_open(b.dev_id, 1))
        for data in lab.controller.checkpoints:
            lab.feed(auditor, data)
        if lab.profile.hardened:
            auditor.compare_receipts(a.receipts())
        auditor.verify_origin(leaf, disclosure, proof)

    return attempt(audit)


@case("N04", "S", "Private receipt shown to the device, forged report committed publicly with the key it released",
      ACCEPT, table="new", kind="gap", hardened="CKPT_FORK")
def n04(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 4)
    batch = list(lab.controller.batch)
    leaves = [p.leaf for p in batch]
    private = Checkpoint(lab.controller_id, 0, GENESIS, len(leaves), merkle.root(leaves), spans_of(batch), (),
                         lab.keys.controller.alg_id, wire_format=lab.profile.wire_format)
    a.receive_checkpoint(lab.controller.sign(private))  # never published
    disclosure = a.disclose(4)
    key = Disclosure.decode(disclosure).key
    victim = next(p for p in batch if p.dev_id == a.dev_id and p.seq == 4)
    forged = forge(lab.controller, a.dev_id, victim.leaf, dtag_key=key, digest=hashlib.sha256(b"forged").digest())
    _commit_substituted(lab, victim, forged)  # the public checkpoint 0
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, 4)
    return attempt(lambda: lab.auditor().verify_origin(leaf, disclosure, proof))


@case("N05", "C", "Network flips one bit of a report's disclosure tag", ACCEPT, table="new", kind="gap",
      hardened="MAC_FAIL")
def n05(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 2)
    tampered = flip_dtag_bit(lab, lab.report(a), random.Random(ctx.seed).randrange(128))
    outcome = attempt(lambda: lab.controller.ingest(tampered))
    if outcome.code != ACCEPT:
        return outcome
    # The paper's design: the controller commits the tampered report; what follows shows who gets blamed.
    ckpt = lab.controller.checkpoint()
    device = attempt(lambda: a.receive_checkpoint(ckpt))  # its own subtree differs: no disclosure for the epoch
    a.receive_checkpoint(ckpt, check_subtree=False)  # a mechanism-(b) device that does not check subtrees
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, 3)
    origin = attempt(lambda: lab.auditor().verify_origin(leaf, a.disclose(3), proof))
    return Outcome(ACCEPT, f"controller accepted; the device refuses the receipt ({device.code}); where K_3 is "
                   f"disclosed anyway the auditor says {origin.code}, the code of a controller forgery")


# ---------------------------------------------------------------- chain indexes (N06, N13)
@case("N06", "C", "Record with seq 0 tagged and 'disclosed' with the public anchor K0", "CHAIN_FAIL", table="new",
      kind="defect")
def n06(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    anchor = _opened(lab, a.dev_id, 1).k0
    victim = next(p for p in lab.controller.batch if p.dev_id == a.dev_id and p.seq == 1)
    forged = forge(lab.controller, a.dev_id, victim.leaf, dtag_key=anchor, seq=0)
    batch, lab.controller.batch = lab.controller.batch, []
    declared = spans_of(batch)
    lab.controller.commit([Pending(a.dev_id, 1, 0, forged) if p is victim else p for p in batch], spans=declared)
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, 0)
    disclosure = Disclosure(a.dev_id, 1, 0, anchor).encode()
    auditor = lab.auditor()
    return attempt_each({"in order": lambda: auditor.verify_origin(leaf, disclosure, proof, in_order=True),
                         "independent": lambda: auditor.verify_origin(leaf, disclosure, proof, in_order=False)})


@case("N13", "S", "Controller declares 2^20 committed reports; a disclosure asks the auditor to walk 2^40 hashes",
      "CHAIN_FAIL", table="new", kind="defect")
def n13(ctx: Context) -> Outcome:
    # 2^20 is the most reports one checkpoint may add (ColdAuditor.max_checkpoint_reports); a claim beyond it is
    # refused at the checkpoint (the outsider case O11). Here the claim is within it and the disclosed index is not.
    lab, a, _ = two_devices(ctx, k=1_000)
    declared, huge = 1 << 20, 1 << 40
    template = lab.report(a)
    forged = forge(lab.controller, a.dev_id, template, seq=huge)
    body = Checkpoint(lab.controller_id, 0, GENESIS, declared, hashlib.sha256(b"made-up tree").digest(),
                      (Span(a.dev_id, 1, 1, declared, bytes(32)),), (), lab.keys.controller.alg_id,
                      wire_format=lab.profile.wire_format)
    auditor = lab.cold_auditor()
    auditor.ingest_checkpoint(lab.controller.sign(body))  # a consistent-looking first checkpoint
    disclosure = Disclosure(a.dev_id, 1, huge, random.Random(ctx.seed).randbytes(32)).encode()
    start = time.perf_counter()
    out = attempt(lambda: auditor.verify_origin(forged, disclosure, b""))
    return dataclasses.replace(out, detail=f"{out.detail} ({1e3 * (time.perf_counter() - start):.1f} ms)")


# ---------------------------------------------------------------- identities (N07, N10, N14, N16)
@case("N07", "S", "Checkpoint or EPOCH_OPEN of another controller sharing the signing key", "SIG_FAIL", table="new",
      kind="defect")
def n07(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    other = ctx.lab(seed=ctx.seed + 1, controller_id=b"CTRL-002")  # same operator key, another controller
    c = other.device(3)
    other.open_epoch(c)
    other.stream([c], 2)
    foreign = other.controller.checkpoint()
    lab.stream([a, b], 2)
    req = lab.controller.open_epoch(a.dev_id, lab.now)
    opened = _opened_for(lab, a.respond(req))
    renamed = opened.replace(controller_id=b"CTRL-002")
    renamed = renamed.replace(sig=lab.keys.controller.sign(renamed, lab.profile)).encode()
    return attempt_each({
        "auditor, checkpoint": lambda: lab.cold_auditor().ingest_checkpoint(foreign),
        "auditor, EPOCH_OPEN": lambda: lab.auditor().ingest_epoch_open(renamed),
        "device, EPOCH_OPEN": lambda: a.accept_open(renamed),
        "device, checkpoint": lambda: a.receive_checkpoint(foreign),
    })


def _opened_for(lab: Lab, confirm: bytes) -> EpochOpen:
    data = lab.controller.confirm(confirm, lab.now)
    return (HardenedEpochOpen if lab.profile.hardened else EpochOpen).decode(data)


@case("N10", "S", "Revoked device's certificate registered again", "REVOKED", table="new", kind="defect")
def n10(ctx: Context) -> Outcome:
    lab, a, _ = two_devices(ctx)
    lab.stream([a], 2)
    lab.controller.revoke(a.dev_id)

    def reregister_and_report() -> None:
        lab.controller.register(lab.cert(1))
        lab.controller.ingest(lab.report(a))

    return attempt(reregister_and_report)


@case("N14", "S", "Spans for an unregistered device, an epoch never opened, or epoch 0", "DEVICE_UNKNOWN",
      table="new", kind="defect")
def n14(ctx: Context) -> Outcome:
    def form(dev_id: bytes | None, epoch: int) -> object:
        lab, a, b = two_devices(ctx, k=1_000)
        lab.stream([a, b], 2)
        target = dev_id or a.dev_id
        extra = Pending(target, epoch, 1, hashlib.sha256(b"made-up report").digest())
        batch, lab.controller.batch = lab.controller.batch, []
        lab.controller.commit([*batch, extra])
        return lambda: lab.auditor()

    return attempt_each({"unregistered device": form(b"PLC-9999", 1), "epoch never opened": form(None, 7),
                         "epoch 0": form(None, 0)})


@case("N16", "C", "Device B signs a sub-checkpoint claiming device A's id", "SIG_FAIL", table="new", kind="defect")
def n16(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    reports = lab.stream([b], 4)
    sub = SubCheckpoint(a.dev_id, 1, 1, 4, merkle.root(reports))
    sub = sub.replace(sig=ctx.keys.devices[1].sign.sign(sub, lab.profile)).encode()  # B's key
    auditor = lab.auditor()
    senders_key = PublicKey.of(ctx.keys.devices[1].sign, owner=b.dev_id)
    return attempt_each({"verified with the sender's key": lambda: auditor.verify_sub_checkpoint(sub, senders_key,
                                                                                                 reports),
                         "verified with the claimed device's certificate": lambda: auditor.verify_sub_checkpoint(
                             sub, None, reports)})


# ---------------------------------------------------------------- freshness and limits (N09, N11, N12)
@case("N09", "S", "Report stamped backwards, zero, before its EPOCH_OPEN, or 23 hours old", "EPOCH_STALE",
      table="new", kind="defect")
def n09(ctx: Context) -> Outcome:
    def form(stamp: str) -> object:
        lab = ctx.lab(k=1_000)
        a = lab.device(1)
        opened_at = lab.now = lab.now + 5_000
        lab.open_epoch(a)
        lab.controller.ingest(lab.report(a), now=lab.now)  # the first report installs the epoch
        first = lab.now
        digest = lab.digest()
        if stamp == "backwards":
            data = a.report(digest, first - 1)
        elif stamp == "zero":
            data = a.report(digest, 0)
        elif stamp == "before EPOCH_OPEN":
            data = a.report(digest, opened_at - 1)
        else:  # held back, delivered 23 hours later (still before the 24-hour expiry)
            data = a.report(digest, first + 1_000)
            lab.now = first + 23 * 3_600_000
        return lambda: lab.controller.ingest(data, now=lab.now)

    return attempt_each({s: form(s) for s in ("backwards", "zero", "before EPOCH_OPEN", "23 hours old")})


@case("N11", "S", "Sequence number past 2^64 - 1, epoch past 2^32 - 1", "EPOCH_STALE", table="new", kind="defect")
def n11(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx)
    secrets = a.epoch_secrets()
    a.resume(secrets, next_seq=(1 << 64) - 1)
    a.report(lab.digest(), lab.now, disclosure_tag=False)  # seq 2^64 - 1, the last one
    lab.controller.install_epoch(b.dev_id, MAX_EPOCH, bytes(32), tag_len=16, policy_id=1, expiry=DAY_MS)
    return attempt_each({"sequence 2^64": lambda: a.report(lab.digest(), lab.now, disclosure_tag=False),
                         "epoch 2^32": lambda: lab.controller.open_epoch(b.dev_id, lab.now)})


@case("N12", "D", "6 MB checkpoint with a bad signature and a body that fails to decode only at its end",
      "SIG_FAIL", table="new", kind="defect")
def n12(ctx: Context) -> Outcome:
    lab, _, _ = two_devices(ctx)
    alg = lab.keys.controller.alg_id
    size = SIGNATURE_OCTETS[alg]
    n = 100_000
    # domain, version, controller_id, index, prev_hash, tree_size, root: the first 100 octets in both formats
    header = Checkpoint(lab.controller_id, 0, GENESIS, n, bytes(32), (), (), alg,
                        wire_format=lab.profile.wire_format).tbs()[:100]
    if lab.profile.wire_format == "implied":  # base epoch, n spans of 56 octets, no epoch exceptions
        spans = (1).to_bytes(4, "big") + n.to_bytes(4, "big") + bytes(56 * n) + bytes(4)
    else:
        spans = n.to_bytes(4, "big") + bytes(60 * n)
    signed = header + spans + (0xFFFF).to_bytes(2, "big") + bytes([alg])  # 65535 closes: the decoder fails last
    rogue = SigningKey.generate(lab.keys.controller.algorithm)
    data = signed + size.to_bytes(2, "big") + rogue.signer.sign(rogue.secret, signed, context(Checkpoint, lab.profile))
    start = time.perf_counter()
    out = attempt(lambda: lab.cold_auditor().ingest_checkpoint(data))
    return dataclasses.replace(out, detail=f"{out.detail} ({len(data):,} octets, "
                               f"{1e3 * (time.perf_counter() - start):.0f} ms)")


# ---------------------------------------------------------------- epoch exchange (N08, N15)
@case("N08", "S", "Identical checkpoint body signed twice (randomised signatures) taken for a fork", ACCEPT,
      table="new", kind="defect", denial=True)
def n08(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 3)
    batch, lab.controller.batch = lab.controller.batch, []
    body = lab.controller.build_checkpoint(batch)
    first, second = lab.controller.sign(body), lab.controller.sign(body)
    lab.log.append(first)
    lab.controller.record_checkpoint(first, body)
    lab.stream([a, b], 1)
    following = lab.controller.checkpoint()
    if first == second:
        return Outcome("SETUP:DETERMINISTIC_SIGNATURE", "the signer gave the same signature twice")
    one, other = lab.cold_auditor(), lab.cold_auditor()

    def audit() -> None:
        lab.feed(one, first)
        one.ingest_checkpoint(second)  # the re-signed body: the same checkpoint
        lab.feed(one, following)
        lab.feed(other, second)
        lab.feed(other, following)  # linked to the body, whichever signature the auditor holds
        one.compare(other)

    return attempt(audit)


@case("N15", "S", "One unauthenticated EPOCH_REQ injected during a re-key", ACCEPT, table="new", kind="defect",
      denial=True)
def n15(ctx: Context) -> Outcome:
    lab, a, b = two_devices(ctx, k=1_000)
    lab.stream([a, b], 2)
    opened = lab.controller.confirm(a.respond(lab.controller.open_epoch(a.dev_id, lab.now)), lab.now)
    try:  # paper: its EPOCH_CONFIRM goes nowhere; hardened: refused unsigned, before any work
        a.respond(injected_req(lab, a.dev_id, a.epoch_number + 1))
    except AmortError:
        pass
    try:
        a.accept_open(opened)
    except AmortError:
        pass  # a device that lost the controller's exchange stays in its epoch
    return attempt(lambda: lab.controller.ingest(lab.report(a), now=lab.now))


def injected_req(lab: Lab, dev_id: bytes, epoch: int) -> bytes:
    """An EPOCH_REQ anyone can build: encapsulation to the device's public (certified) ML-KEM key, in the
    deployment's form (hardened: with a signature the injector cannot make, so it is made with another key)."""
    cert = next(k for k in lab.keys.devices if k.dev_id == dev_id)
    ciphertext, _ = get_kem("ML-KEM-768").encaps(cert.kem.public)
    if not lab.profile.hardened:
        return EpochReq(lab.controller_id, dev_id, epoch, 1, ciphertext).encode()
    body = HardenedEpochReq(lab.controller_id, dev_id, epoch, 1, ciphertext)
    return body.replace(sig=SigningKey.generate("ML-DSA-65").sign(body, lab.profile)).encode()
