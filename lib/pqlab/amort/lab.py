"""A seeded, self-contained AMORT-V1 world for experiments: long-term keys, a controller, devices, auditors."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import Controller, ControllerConfig
from pqlab.amort.device import Device
from pqlab.amort.durable import DurableLog
from pqlab.amort.identity import CertificateAuthority, PublicKey, SigningKey, new_kem_keypair
from pqlab.amort.messages import Checkpoint, Report
from pqlab.amort.profile import Profile
from pqlab.crypto.base import KeyPair

CONTROLLER_ID = b"CTRL-001"


def dev_id(n: int) -> bytes:
    """The 8-octet identifier of device number ``n``."""
    return f"PLC-{n:04d}".encode()


@dataclass
class DeviceKeys:
    dev_id: bytes
    kem: KeyPair
    sign: SigningKey
    cert: bytes


@dataclass
class KeySet:
    """Long-term keys reused across scenarios of one family (generating them is the slow part)."""

    ca: CertificateAuthority
    controller: SigningKey
    devices: list[DeviceKeys]

    @classmethod
    def generate(cls, n_devices: int = 4, checkpoint_signer: str = "ML-DSA-65") -> KeySet:
        ca = CertificateAuthority(SigningKey.generate("ML-DSA-65"))
        devices = []
        for n in range(1, n_devices + 1):
            kem, sign = new_kem_keypair(), SigningKey.generate("ML-DSA-65")
            devices.append(DeviceKeys(dev_id(n), kem, sign, ca.issue(dev_id(n), kem.public, sign.public)))
        return cls(ca, SigningKey.generate(checkpoint_signer), devices)


@dataclass
class Lab:
    """One scenario: a controller with a fresh checkpoint log, devices with seeded entropy, a shared clock (ms)."""

    keys: KeySet
    seed: int
    workdir: Path
    config: ControllerConfig = field(default_factory=ControllerConfig)
    chain_length: int = 256
    now: int = 1_000
    controller_id: bytes = CONTROLLER_ID

    def __post_init__(self) -> None:
        self.rng = random.Random(f"lab:{self.seed}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log = DurableLog(self.workdir / f"checkpoints-{self.seed}-{id(self)}.log")
        self.controller = Controller(self.controller_id, self.keys.controller, self.keys.ca.public, self.log,
                                     self.config)
        self.devices: dict[bytes, Device] = {}

    @property
    def profile(self) -> Profile:
        """The deployment's variant and wire format (the controller config's)."""
        return self.config.profile

    @property
    def controller_public(self) -> PublicKey:
        return PublicKey.of(self.keys.controller)

    def device(self, n: int, *, register: bool = True, min_tag_len: int = 16) -> Device:
        """Build device ``n`` (and register its certificate with the controller)."""
        keys = self.keys.devices[n - 1]
        entropy = random.Random(f"device:{self.seed}:{n}").randbytes
        device = Device(keys.dev_id, keys.kem, self.controller_public, entropy, chain_length=self.chain_length,
                        min_tag_len=min_tag_len, sign_key=keys.sign, controller_id=self.controller_id,
                        profile=self.profile)
        if register:
            self.controller.register(keys.cert)
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
        """A cold auditor of this deployment with nothing fed yet: the controller's public key and identifier,
        the CA's public key, the lab's variant and wire format."""
        return ColdAuditor(self.controller_public, controller_id=self.controller_id, ca=self.keys.ca.public,
                           profile=self.profile, **options)

    def auditor(self, checkpoints: list[bytes] | None = None) -> ColdAuditor:
        """A cold auditor fed the device certificates, the signed EPOCH_OPENs (so it requires an open for every
        span), the controller's checkpoints with consistency proofs and, hardened, each device's receipts."""
        auditor = self.cold_auditor(require_opens=True)
        for keys in self.keys.devices:
            if keys.dev_id in self.devices:
                auditor.ingest_certificate(keys.cert)
        for device in self.devices.values():
            for epoch in self.controller.opened_epochs(device.dev_id):
                if epoch <= device.epoch_number:
                    auditor.ingest_epoch_open(self.controller.epoch_open(device.dev_id, epoch))
        for data in checkpoints if checkpoints is not None else self.controller.checkpoints:
            self.feed(auditor, data)
        if self.profile.hardened:
            for device in self.devices.values():
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
