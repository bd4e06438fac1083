"""A seeded, self-contained AMORT-V1 world for experiments: long-term keys, a controller, devices, auditors."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import Controller, ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import Device
from pqlab.amort.durable import DurableLog
from pqlab.amort.identity import CertificateAuthority, PublicKey, SigningKey, new_kem_keypair
from pqlab.amort.messages import Checkpoint, Report
from pqlab.amort.profile import SECURE, Profile
from pqlab.crypto.base import KeyPair

CONTROLLER_ID = b"CTRL-001"


def dev_id(n: int) -> bytes:
    """The 8-octet identifier of device number ``n``."""
    return f"PLC-{n:04d}".encode()


@dataclass
class DeviceKeys:
    """One device's long-term keys; its certificates (one per deployment profile) are issued on first use."""

    dev_id: bytes
    kem: KeyPair
    sign: SigningKey
    ca: CertificateAuthority
    _certs: dict[Profile, bytes] = field(default_factory=dict, repr=False)

    def cert(self, profile: Profile) -> bytes:
        """The CA-signed certificate binding this device to ``profile``."""
        if profile not in self._certs:
            self._certs[profile] = self.ca.issue(self.dev_id, self.kem.public, self.sign.public, profile=profile)
        return self._certs[profile]


@dataclass
class KeySet:
    """Long-term keys reused across scenarios of one family (generating them is the slow part)."""

    ca: CertificateAuthority
    controller: SigningKey
    devices: list[DeviceKeys]

    @classmethod
    def generate(cls, n_devices: int = 4, checkpoint_signer: str = "ML-DSA-65") -> KeySet:
        ca = CertificateAuthority(SigningKey.generate("ML-DSA-65"))
        devices = [DeviceKeys(dev_id(n), new_kem_keypair(), SigningKey.generate("ML-DSA-65"), ca)
                   for n in range(1, n_devices + 1)]
        return cls(ca, SigningKey.generate(checkpoint_signer), devices)

    def deployment(self, profile: Profile = SECURE, controller_id: bytes = CONTROLLER_ID, **options: object) \
            -> Deployment:
        """The deployment these keys make: this controller key and CA, ``profile``."""
        return Deployment(controller_id, PublicKey.of(self.controller), self.ca.public, profile, **options)


@dataclass
class Lab:
    """One scenario: a controller with a fresh checkpoint log, devices with seeded entropy, a shared clock (ms).

    Everything is built with the public constructors and their defaults from one :class:`Deployment` (the keys',
    with ``profile``): the controller reads the lab's clock, auditors hold the deployment's identities."""

    keys: KeySet
    seed: int
    workdir: Path
    config: ControllerConfig = field(default_factory=ControllerConfig)
    chain_length: int = 256
    now: int = 1_000
    controller_id: bytes = CONTROLLER_ID
    profile: Profile = SECURE

    def __post_init__(self) -> None:
        self.rng = random.Random(f"lab:{self.seed}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.deployment = self.keys.deployment(self.profile, self.controller_id)
        self.log = DurableLog(self.workdir / f"checkpoints-{self.seed}-{id(self)}.log")
        self.controller = Controller(self.deployment, self.keys.controller, self.log, self.config,
                                     clock=lambda: self.now)
        self.devices: dict[bytes, Device] = {}

    @property
    def controller_public(self) -> PublicKey:
        return PublicKey.of(self.keys.controller)

    def cert(self, n: int) -> bytes:
        """Device ``n``'s certificate for this lab's profile."""
        return self.keys.devices[n - 1].cert(self.profile)

    def device(self, n: int, *, register: bool = True, min_tag_len: int = 16) -> Device:
        """Build device ``n`` (and register its certificate with the controller)."""
        keys = self.keys.devices[n - 1]
        entropy = random.Random(f"device:{self.seed}:{n}").randbytes
        device = Device(self.deployment, keys.dev_id, keys.kem, entropy, sign_key=keys.sign,
                        chain_length=self.chain_length, min_tag_len=min_tag_len)
        if register:
            self.controller.register(self.cert(n))
        self.devices[keys.dev_id] = device
        return device

    def open_epoch(self, device: Device, controller: Controller | None = None) -> bytes:
        """Run the full §IV-A exchange; returns the signed EPOCH_OPEN."""
        controller = controller or self.controller
        confirm = device.respond(controller.open_epoch(device.dev_id, self.now))
        opened = controller.confirm(confirm, self.now)
        device.accept_open(opened)
        return opened

    def decode_report(self, data: bytes, tag_len: int | None = None) -> Report:
        """A report in this lab's wire format (tag length: the controller's, unless given)."""
        return Report.decode(data, wire_format=self.profile.wire_format, tag_len=tag_len or self.config.tag_len)

    def decode_checkpoint(self, data: bytes) -> Checkpoint:
        """A checkpoint in this lab's wire format."""
        return self.controller.decode_checkpoint(data)

    def digest(self) -> bytes:
        """A seeded stand-in for a 4 KiB measured-state digest."""
        return hashlib.sha256(self.rng.randbytes(64)).digest()

    def report(self, device: Device, *, disclosure_tag: bool = True) -> bytes:
        self.now += 1_000
        return device.report(self.digest(), self.now, disclosure_tag=disclosure_tag)

    def stream(self, devices: list[Device], per_device: int, *, ingest: bool = True) -> list[bytes]:
        """Round-robin reports from ``devices``; each is ingested by the controller unless ``ingest`` is False."""
        out = []
        for _ in range(per_device):
            for device in devices:
                data = self.report(device)
                if ingest:
                    self.controller.ingest(data)
                out.append(data)
        return out

    def cold_auditor(self, **options: object) -> ColdAuditor:
        """A cold auditor of this deployment (the public constructor, its defaults) holding the public material a
        deployment gives one — the device certificates and the signed EPOCH_OPENs — and no checkpoint yet."""
        auditor = ColdAuditor(self.deployment, **options)
        for n, keys in enumerate(self.keys.devices, start=1):
            if keys.dev_id in self.devices:
                auditor.ingest_certificate(self.cert(n))
        for device in self.devices.values():
            for epoch in self.controller.opened_epochs(device.dev_id):
                if epoch <= device.epoch_number:
                    auditor.ingest_epoch_open(self.controller.epoch_open(device.dev_id, epoch))
        return auditor

    def auditor(self, checkpoints: list[bytes] | None = None) -> ColdAuditor:
        """A :meth:`cold_auditor` fed the controller's checkpoints with consistency proofs and, hardened, each
        device's signed receipts for every epoch it still holds."""
        auditor = self.cold_auditor()
        for data in checkpoints if checkpoints is not None else self.controller.checkpoints:
            self.feed(auditor, data)
        if self.profile.hardened:
            for device in self.devices.values():
                for epoch in device.retained:
                    auditor.compare_receipts(device.receipts(epoch))
                if device.current is not None:
                    auditor.compare_receipts(device.receipts())
        return auditor

    def feed(self, auditor: ColdAuditor, data: bytes) -> Checkpoint:
        """Give one checkpoint to an auditor, with the consistency proof from its last accepted head."""
        ckpt = self.controller.decode_checkpoint(data)
        old = auditor.last.tree_size if auditor.last else 0
        proof = self.controller.consistency(old, ckpt.tree_size) if old and ckpt.tree_size >= old else None
        return auditor.ingest_checkpoint(data, proof)

    def close(self) -> None:
        self.log.close()
