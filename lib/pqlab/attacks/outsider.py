"""Issue 35's attacks as an outsider writes them: every object built with the public constructors and their defaults
(``Deployment``, ``Controller``, ``Device``, ``ColdAuditor``, ``open_controller``), never through :class:`Lab`.

A case passes only if the default objects refuse the attack with the expected code (or, for a denial, let the honest
action through). ``kind="gap"`` marks what the paper's design cannot reject and the hardened variant does; the rest
are rejected by both. Cases that drive the controller's batch path run it on every path that is built and ask both
for the same verdicts (the C core and the reference model agree).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pqlab.amort import merkle
from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.chain import DisclosureChain
from pqlab.amort.controller import GENESIS, Controller, ControllerConfig, Pending, link_hash, spans_of
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import Device
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError
from pqlab.amort.fastpath.api import native_status, open_controller
from pqlab.amort.identity import PublicKey, SigningKey
from pqlab.amort.messages import (
    Checkpoint,
    Disclosure,
    EpochOpen,
    EpochReq,
    HardenedEpochOpen,
    HardenedEpochReq,
    ReceiptEntry,
    Receipts,
    Report,
    Span,
    SubCheckpoint,
)
from pqlab.amort.profile import PAPER, Profile
from pqlab.attacks.registry import ACCEPT, Context, Outcome, attempt, attempt_each, case
from pqlab.crypto import get_kem

CONTROLLER_ID = b"CTRL-OUT"
DAY_MS = 86_400_000


@dataclass
class World:
    """What an outsider sets up by hand: a deployment, its controller (with a clock), devices, a shared time."""

    ctx: Context
    deployment: Deployment
    controller: Controller
    devices: list[Device] = field(default_factory=list)
    now: int = 10_000

    def device(self, n: int) -> Device:
        """Device ``n`` of the key set: certificate registered, epoch opened (the full §IV-A exchange)."""
        keys = self.ctx.keys.devices[n - 1]
        cert = keys.cert(self.deployment.profile)
        self.controller.register(cert)
        device = Device(self.deployment, keys.dev_id, keys.kem, random.Random(f"{self.ctx.seed}:{n}").randbytes,
                        sign_key=keys.sign)
        device.accept_open(self.controller.confirm(device.respond(self.controller.open_epoch(keys.dev_id, self.now)),
                                                   self.now))
        self.devices.append(device)
        return device

    def report(self, device: Device) -> bytes:
        self.now += 1_000
        data = device.report(hashlib.sha256(f"{device.dev_id!r}:{self.now}".encode()).digest(), self.now)
        self.controller.ingest(data)
        return data

    def stream(self, count: int) -> list[bytes]:
        return [self.report(d) for _ in range(count) for d in self.devices]

    def auditor(self, checkpoints: list[bytes] | None = None) -> ColdAuditor:
        """``ColdAuditor(deployment)`` fed what a deployment publishes: certificates, EPOCH_OPENs, checkpoints."""
        auditor = ColdAuditor(self.deployment)
        for n, device in enumerate(self.devices, start=1):
            auditor.ingest_certificate(self.ctx.keys.devices[n - 1].cert(self.deployment.profile))
            for epoch in self.controller.opened_epochs(device.dev_id):
                if epoch <= device.epoch_number:
                    auditor.ingest_epoch_open(self.controller.epoch_open(device.dev_id, epoch))
        for data in self.controller.checkpoints if checkpoints is None else checkpoints:
            feed(self.controller, auditor, data)
        return auditor

    def decode(self, data: bytes) -> Checkpoint:
        return Checkpoint.decode(data, wire_format=self.deployment.wire_format)


def feed(controller: Controller, auditor: ColdAuditor, data: bytes) -> Checkpoint:
    """One checkpoint to an auditor with the consistency proof from its last head."""
    ckpt = controller.decode_checkpoint(data)
    old = auditor.last.tree_size if auditor.last else 0
    proof = controller.consistency(old, ckpt.tree_size) if old and ckpt.tree_size >= old else None
    return auditor.ingest_checkpoint(data, proof)


def world(ctx: Context, *, k: int = 1_000, controller_id: bytes = CONTROLLER_ID, devices: int = 2) -> World:
    """A deployment of ``ctx``'s variant built from the public constructors (the default profile is the hardened
    one; the paper variant is named explicitly), a controller with a log and a clock, ``devices`` devices."""
    profile = Profile() if ctx.profile.variant != PAPER else Profile(PAPER, ctx.profile.wire_format)
    if ctx.profile.wire_format != profile.wire_format:
        profile = Profile(profile.variant, ctx.profile.wire_format)
    deployment = Deployment(controller_id, PublicKey.of(ctx.keys.controller), ctx.keys.ca.public, profile)
    folder = ctx.workdir / f"outsider-{controller_id.decode()}"
    folder.mkdir(parents=True, exist_ok=True)
    log = DurableLog(folder / "checkpoints.log")
    box: list[World] = []
    controller = Controller(deployment, ctx.keys.controller, log, ControllerConfig(k=k), clock=lambda: box[0].now)
    out = World(ctx, deployment, controller)
    box.append(out)
    ctx.cleanups.append(log.close)
    for n in range(1, devices + 1):
        out.device(n)
    return out


def _sign(w: World, message: object) -> bytes:
    return message.replace(sig=w.ctx.keys.controller.sign(message, w.deployment.profile)).encode()


def _private_receipt_forgery(w: World) -> tuple[Device, bytes, bytes, bytes, bytes]:
    """N04 as an outsider plays it: a private checkpoint shown to device A releases K_4; the controller commits a
    forged report 4 publicly. Returns (A, the public checkpoint, the forged leaf, its disclosure, its proof)."""
    a = w.devices[0]
    w.stream(4)
    batch = list(w.controller.batch)
    leaves = [p.leaf for p in batch]
    private = Checkpoint(w.deployment.controller_id, 0, GENESIS, len(leaves), merkle.root(leaves), spans_of(batch), (),
                         w.ctx.keys.controller.alg_id, wire_format=w.deployment.wire_format)
    a.receive_checkpoint(_sign(w, private))  # never published
    disclosure = a.disclose(4)
    key = Disclosure.decode(disclosure).key
    victim = next(p for p in batch if p.dev_id == a.dev_id and p.seq == 4)
    k_evid, tag_len = w.controller.evidence_key(a.dev_id)
    report = Report.decode(victim.leaf, wire_format=w.deployment.wire_format, tag_len=tag_len)
    record = report.record.replace(digest=hashlib.sha256(b"forged state").digest())
    from pqlab.amort import kdf  # the controller holds K_evid: its forged report verifies

    octets = record.encode()
    dtag = kdf.mac(key, octets, tag_len)
    tag = kdf.mac(k_evid, kdf.evidence_input(octets, dtag, w.deployment.hardened), tag_len)
    forged = Report(record, tag, dtag, w.deployment.wire_format).encode()
    w.controller.batch = []
    public = w.controller.commit([replace(p, leaf=forged) if p is victim else p for p in batch])
    leaf, proof = w.controller.inclusion(a.dev_id, 1, 4)
    return a, public, leaf, disclosure, proof


def _public_list(w: World, dev_id: bytes, epoch: int, sign_key: SigningKey | None) -> bytes:
    """A receipt list built from the public chain's (index, link) pairs, signed with ``sign_key`` if any."""
    entries = tuple(ReceiptEntry(i, link_hash(w.decode(d).tbs())) for i, d in enumerate(w.controller.checkpoints))
    body = Receipts(dev_id, epoch, entries)
    return body.replace(sig=sign_key.sign(body, w.deployment.profile) if sign_key else bytes(3309)).encode()


# ---------------------------------------------------------------- identities and defaults
@case("O01", "S", "Checkpoint of another controller sharing the key, to a default auditor", "SIG_FAIL",
      table="outsider", kind="defect")
def o01(ctx: Context) -> Outcome:
    w = world(ctx)
    w.stream(2)
    w.controller.checkpoint()
    foreign = _sign(w, w.decode(w.controller.checkpoints[0]).replace(controller_id=b"CTRL-OUX"))
    return attempt(lambda: w.auditor(checkpoints=[]).ingest_checkpoint(foreign))


@case("O02", "S", "EPOCH_OPEN of another controller sharing the key, to a default auditor and device", "SIG_FAIL",
      table="outsider", kind="defect")
def o02(ctx: Context) -> Outcome:
    w = world(ctx)
    a = w.devices[0]
    opened = w.controller.confirm(a.respond(w.controller.open_epoch(a.dev_id, w.now)), w.now)  # a re-key
    cls = HardenedEpochOpen if w.deployment.hardened else EpochOpen
    renamed = _sign(w, cls.decode(opened).replace(controller_id=b"CTRL-OUX"))
    return attempt_each({"auditor": lambda: w.auditor(checkpoints=[]).ingest_epoch_open(renamed),
                         "device": lambda: a.accept_open(renamed)})


@case("O03", "S", "Phantom spans: a checkpoint commits devices that never opened an epoch", "DEVICE_UNKNOWN",
      table="outsider", kind="defect")
def o03(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    w.stream(2)
    phantom = Pending(b"PLC-GHST", 1, 1, hashlib.sha256(b"phantom").digest())
    batch, w.controller.batch = w.controller.batch, []
    w.controller.commit([*batch, phantom])
    return attempt(lambda: w.auditor())


@case("O04", "S", "A report held back a day, to the default controller and to both batch paths", "EPOCH_STALE",
      table="outsider", kind="defect")
def o04(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    a = w.devices[0]
    first = w.report(a)
    first_time = w.now
    held = a.report(bytes(32), w.now + 1_000)
    w.now += DAY_MS - 1_000  # delivered a day later, inside the epoch's lifetime (the expiry is the day after)
    forms: dict[str, Callable[[], object]] = {"reference model": lambda: w.controller.ingest(held)}
    keys = w.controller.epoch_keys(a.dev_id)
    for path in ("reference", "native") if native_status()[0] else ("reference",):
        ctl = open_controller(path, w.deployment, clock=lambda: w.now)
        ctl.register_epoch(a.dev_id, keys.epoch, keys.k_evid, not_before=keys.not_before, tag_len=keys.tag_len,
                           expiry=keys.expiry)
        if not ctl.ingest([first], now=first_time)[0].accepted:
            raise AmortError("SEQ_GAP", f"the {path} path refused the honest first report", field="setup")

        def verdict(ctl: object = ctl) -> None:
            v = ctl.ingest([held])[0]
            if v.code is not None:
                raise AmortError(v.code, f"refused on the {ctl.path} path", field=v.field)
        forms[f"{path} batch path"] = verdict
    return attempt_each(forms)


# ---------------------------------------------------------------- the hardened variant's receipts
@case("O05", "S", "A receipt list built from the public chain covers a forged report (even after the real list "
      "showed the fork)", ACCEPT, table="outsider", kind="gap", hardened="SIG_FAIL")
def o05(ctx: Context) -> Outcome:
    w = world(ctx)
    a, _, leaf, disclosure, proof = _private_receipt_forgery(w)
    auditor = w.auditor()
    if w.deployment.hardened:
        real = attempt(lambda: auditor.compare_receipts(a.receipts()))
        if real.code != "CKPT_FORK":
            return Outcome(f"SETUP:{real.code}", "the device's own receipts should show the private fork")

    def forged_origin() -> None:
        if w.deployment.hardened:  # what the adversary hands the auditor instead: unsigned, or signed by nobody
            auditor.compare_receipts(_public_list(w, a.dev_id, 1, None))
        auditor.verify_origin(leaf, disclosure, proof)

    return attempt(forged_origin)


@case("O06", "S", "The device's signed receipt list of epoch 1 relabelled as epoch 2", "PROFILE_MISMATCH",
      table="outsider", kind="defect", hardened="SIG_FAIL")
def o06(ctx: Context) -> Outcome:
    w = world(ctx, k=4, devices=1)
    a = w.devices[0]
    w.stream(4)
    for data in w.controller.checkpoints:
        a.receive_checkpoint(data)
    w.now += 1_000
    a.accept_open(w.controller.confirm(a.respond(w.controller.open_epoch(a.dev_id, w.now)), w.now))  # epoch 2
    w.stream(1)  # one report of epoch 2, not committed: the device holds no receipt covering it
    auditor = w.auditor()
    if w.deployment.hardened:
        relabelled = Receipts.decode(a.receipts(1)).replace(epoch=2).encode()
    else:  # the paper's device keeps no receipts: the message itself belongs to the other profile
        relabelled = _public_list(w, a.dev_id, 2, ctx.keys.devices[0].sign)
    return attempt(lambda: auditor.compare_receipts(relabelled))


@case("O07", "S", "Variant downgrade: an EPOCH_OPEN in the other variant's form with the controller's own anchor",
      "PROFILE_MISMATCH", table="outsider", kind="defect")
def o07(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    a = w.devices[0]
    honest = (HardenedEpochOpen if w.deployment.hardened else EpochOpen).decode(w.controller.epoch_open(a.dev_id, 1))
    own = DisclosureChain(random.Random(ctx.seed).randbytes(32), 8)
    fields = {f.name: getattr(honest, f.name) for f in dataclasses.fields(EpochOpen)
              if f.name not in ("sig", "k0", "profile")}
    if w.deployment.hardened:  # the downgrade: a paper-form open (no anchor signature) stating the paper profile
        other = EpochOpen(**fields, k0=own.anchor, profile=Profile(PAPER, w.deployment.wire_format).octet)
    else:  # the other way: a hardened-form open
        other = HardenedEpochOpen(**fields, k0=own.anchor, profile=Profile(wire_format=w.deployment.wire_format).octet)
    forged = _sign(w, other)
    misconfigured = Deployment(w.deployment.controller_id, w.deployment.controller_key, w.deployment.ca,
                               Profile.from_octet(other.profile))

    def other_auditor() -> None:  # an auditor configured with the other profile meets this device's certificate
        ColdAuditor(misconfigured).ingest_certificate(ctx.keys.devices[0].cert(w.deployment.profile))

    return attempt_each({"deployment's auditor": lambda: w.auditor(checkpoints=[]).ingest_epoch_open(forged),
                         "auditor of the other profile": other_auditor,
                         "device": lambda: a.accept_open(forged)})


@case("O08", "S", "A device's sub-checkpoint over records that claim another device, epoch or sequence numbers",
      "PROOF_FAIL", table="outsider", kind="defect")
def o08(ctx: Context) -> Outcome:
    w = world(ctx)
    a, b = w.devices
    theirs = [w.report(a) for _ in range(4)]  # A's records
    profile = w.deployment.profile

    def signed_by_b(epoch: int, lo: int) -> bytes:
        sub = SubCheckpoint(b.dev_id, epoch, lo, lo + 3, merkle.root(theirs))
        return sub.replace(sig=ctx.keys.devices[1].sign.sign(sub, profile)).encode()

    auditor = w.auditor(checkpoints=[])
    return attempt_each({
        "another device's records": lambda: auditor.verify_sub_checkpoint(signed_by_b(1, 1), None, theirs),
        "another epoch": lambda: auditor.verify_sub_checkpoint(_sub_of(ctx, a, profile, 2, 1, theirs), None, theirs),
        "other sequence numbers": lambda: auditor.verify_sub_checkpoint(_sub_of(ctx, a, profile, 1, 5, theirs), None,
                                                                          theirs),
    })


def _sub_of(ctx: Context, device: Device, profile: Profile, epoch: int, lo: int, reports: list[bytes]) -> bytes:
    sub = SubCheckpoint(device.dev_id, epoch, lo, lo + len(reports) - 1, merkle.root(reports))
    return sub.replace(sig=ctx.keys.devices[0].sign.sign(sub, profile)).encode()


# ---------------------------------------------------------------- honest paths that must go through
@case("O09", "S", "Disclosures of the previous epoch after an honest re-key", ACCEPT, table="outsider",
      kind="defect", denial=True)
def o09(ctx: Context) -> Outcome:
    w = world(ctx, k=4, devices=1)
    a = w.devices[0]
    w.stream(4)
    for data in w.controller.checkpoints:
        a.receive_checkpoint(data)
    disclosures = [a.disclose(j) for j in range(1, 5)]
    w.now += 1_000
    a.accept_open(w.controller.confirm(a.respond(w.controller.open_epoch(a.dev_id, w.now)), w.now))  # re-key
    w.stream(4)
    for data in w.controller.checkpoints[1:]:
        a.receive_checkpoint(data)
    late = a.disclose(4, epoch=1)  # the device still serves epoch 1 after the re-key

    def audit() -> None:
        auditor = w.auditor()
        if w.deployment.hardened:
            auditor.compare_receipts(a.receipts(1))
            auditor.compare_receipts(a.receipts())
        for j, disclosure in enumerate([*disclosures[:3], late], start=1):
            leaf, proof = w.controller.inclusion(a.dev_id, 1, j)
            auditor.verify_origin(leaf, disclosure, proof)

    return attempt(audit)


@case("O10", "S", "65,536 epoch closes pending at one checkpoint (the chain must go on)", ACCEPT, table="outsider",
      kind="defect", denial=True)
def o10(ctx: Context) -> Outcome:
    n = 65_536
    ids = [b"C" + i.to_bytes(7, "big") for i in range(n)]
    bodies: dict[str, list[int]] = {}
    deployment = Deployment(CONTROLLER_ID, PublicKey.of(ctx.keys.controller), ctx.keys.ca.public, ctx.profile)

    def run(path: str) -> None:
        ctl = open_controller(path, deployment, clock=lambda: 10_000)
        for epoch in (1, 2):
            for dev_id in ids:
                ctl.register_epoch(dev_id, epoch, bytes(32), not_before=0)  # epoch 2 closes every epoch 1
        counts = []
        for _ in range(2):
            ctl.checkpoint_body()
            signed = ctl.commit(bytes(64))
            counts.append(len(Checkpoint.decode(signed, wire_format=deployment.wire_format).closes))
        bodies[path] = counts
        if counts != [0xFFFF, n - 0xFFFF]:
            raise AmortError("SEQ_GAP", f"{path}: checkpoints carried {counts} closes", field="Checkpoint.closes")

    def both() -> None:
        for path in ("reference", "native") if native_status()[0] else ("reference",):
            run(path)
        if len({tuple(v) for v in bodies.values()}) != 1:
            raise AmortError("SEQ_GAP", f"the paths disagree: {bodies}", field="Checkpoint.closes")

    return attempt(both)


@case("O11", "S", "Four injected EPOCH_REQs with the real controller id during a re-key", "EPOCH_STALE",
      table="outsider", kind="gap", denial=True, hardened=ACCEPT)
def o11(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    a = w.devices[0]
    signatures = [0]
    sign = a.sign_key.sign

    def counted(*args: object) -> bytes:
        signatures[0] += 1
        return sign(*args)

    a.sign_key = replace(a.sign_key)
    a.sign_key.sign = counted  # type: ignore[method-assign]
    req = w.controller.open_epoch(a.dev_id, w.now)
    confirm = a.respond(req)
    before = signatures[0]
    refused = 0
    cert_kem = ctx.keys.devices[0].kem.public
    for _ in range(4):
        ciphertext, _ = get_kem("ML-KEM-768").encaps(cert_kem)
        body = EpochReq(CONTROLLER_ID, a.dev_id, 2, 1, ciphertext)
        if w.deployment.hardened:
            body = HardenedEpochReq(*(getattr(body, f.name) for f in dataclasses.fields(EpochReq)))
            body = body.replace(sig=SigningKey.generate("ML-DSA-65").sign(body, w.deployment.profile))
        try:
            a.respond(body.encode())
        except AmortError:
            refused += 1
    injected_signatures = signatures[0] - before
    opened = w.controller.confirm(confirm, w.now)
    out = attempt(lambda: (a.accept_open(opened), w.report(a)))
    return Outcome(out.code, f"{out.detail}; {refused} of 4 injected requests refused, the device signed "
                             f"{injected_signatures} times for them")


# ---------------------------------------------------------------- limits and auditor state
@case("O12", "S", "A checkpoint signed for 2^62 reports, then one unauthenticated disclosure", "TRAILING",
      table="outsider", kind="defect")
def o12(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    a = w.devices[0]
    huge = 1 << 62
    body = Checkpoint(CONTROLLER_ID, 0, GENESIS, huge, hashlib.sha256(b"made up").digest(),
                      (Span(a.dev_id, 1, 1, huge, bytes(32)),), (), ctx.keys.controller.alg_id,
                      wire_format=w.deployment.wire_format)
    auditor = w.auditor(checkpoints=[])
    start = time.perf_counter()
    out = attempt(lambda: auditor.ingest_checkpoint(_sign(w, body)))
    return Outcome(out.code, f"{out.detail} ({1e3 * (time.perf_counter() - start):.1f} ms)")


@case("O13", "S", "A signed checkpoint refused for its content, then a different valid one at the same index",
      "CKPT_FORK", table="outsider", kind="defect")
def o13(ctx: Context) -> Outcome:
    w = world(ctx)
    w.stream(2)
    batch = list(w.controller.batch)
    honest = w.controller.build_checkpoint(batch)
    invalid = _sign(w, honest.replace(tree_size=honest.tree_size + 1))  # spans no longer sum to the growth
    valid = _sign(w, honest)
    auditor = w.auditor(checkpoints=[])
    first = attempt(lambda: auditor.ingest_checkpoint(invalid))
    if first.code == ACCEPT:
        return Outcome("SETUP:ACCEPT", "the invalid checkpoint was accepted")
    return attempt(lambda: auditor.ingest_checkpoint(valid))


@case("O14", "S", "A checkpoint whose EPOCH_CLOSE shows lost evidence, fed again", "ERR_EVIDENCE_INCOMPLETE",
      table="outsider", kind="defect")
def o14(ctx: Context) -> Outcome:
    w = world(ctx, k=4, devices=1)
    a = w.devices[0]
    w.stream(6)  # 1..4 committed, 5 and 6 seen only
    a.restart()
    w.now += 1_000
    a.accept_open(w.controller.confirm(a.respond(w.controller.open_epoch(a.dev_id, w.now)), w.now))
    w.stream(4)  # the second checkpoint closes epoch 1 with 2 reports lost
    auditor = w.auditor(checkpoints=w.controller.checkpoints[:1])
    closing = w.controller.checkpoints[1]
    first = attempt(lambda: feed(w.controller, auditor, closing))
    if first.code != "ERR_EVIDENCE_INCOMPLETE":
        return Outcome(f"SETUP:{first.code}", "the closing checkpoint should raise ERR_EVIDENCE_INCOMPLETE")
    return attempt(lambda: feed(w.controller, auditor, closing))


@case("O15", "S", "Receipts naming an unknown device or an epoch never opened", "PROFILE_MISMATCH",
      table="outsider", kind="defect", hardened="DEVICE_UNKNOWN")
def o15(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    w.stream(2)
    w.controller.checkpoint()
    auditor = w.auditor()
    stranger = ctx.keys.devices[2]
    return attempt_each({
        "unknown device": lambda: auditor.compare_receipts(_public_list(w, stranger.dev_id, 1, stranger.sign)),
        "epoch never opened": lambda: auditor.compare_receipts(
            _public_list(w, w.devices[0].dev_id, 7, ctx.keys.devices[0].sign)),
    })


@case("O16", "S", "Receipts signed by the device for epoch 0", "PROFILE_MISMATCH", table="outsider", kind="defect",
      hardened="EPOCH_STALE")
def o16(ctx: Context) -> Outcome:
    w = world(ctx, devices=1)
    w.stream(2)
    w.controller.checkpoint()
    auditor = w.auditor()
    return attempt(lambda: auditor.compare_receipts(_public_list(w, w.devices[0].dev_id, 0, ctx.keys.devices[0].sign)))

