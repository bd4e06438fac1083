"""The vector builder: seeded key material and the step recorder the differential-vector cases write into.

Every key, digest, signature and choice comes from the seed: key material is HKDF over the seed and the
vector's name (:class:`Material`), choices come from ``random.Random`` seeded with both. Signatures are opaque
octets to the fast path (it assembles and chains the signed checkpoint; verifying is the auditor's job), so the
vectors carry seeded octets: 64 of them by default, the real ML-DSA-65 / SLH-DSA-SHA2-128f sizes (3309 / 17088)
where a case asks for them. Imports run one way: builder <- cases <- :mod:`pqlab.amort.conformance.vectors`.
"""

from __future__ import annotations

import random
from typing import Any

from pqlab.amort import kdf
from pqlab.amort.conformance.differential import FORMAT, execute
from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import NO_EXPIRY, ReportDevice, open_device
from pqlab.amort.messages import RECORD_OCTETS
from pqlab.amort.profile import EXPLICIT, PAPER_PROFILE, Profile

SALT = b"pqlab/amort-vectors/v1"
SIGNATURE_OCTETS = {1: 3309, 2: 17088}  # ML-DSA-65, SLH-DSA-SHA2-128f
OPAQUE_SIGNATURE = 64


class Material:
    """Seeded key material for one vector: HKDF-Expand(HKDF-Extract(salt, seed ‖ name), label)."""

    def __init__(self, seed: int, name: str) -> None:
        self.prk = kdf.extract(SALT, seed.to_bytes(8, "big") + name.encode())

    def octets(self, label: str, n: int = 32) -> bytes:
        out, block = b"", 0
        while len(out) < n:
            out += kdf.expand(self.prk, f"{label}#{block}".encode(), min(8160, n - len(out)))
            block += 1
        return out


class Builder:
    """Accumulates the steps of one vector; reports come from reference devices keyed from :class:`Material`."""

    def __init__(self, seed: int, name: str, category: str, description: str,
                 profile: Profile = PAPER_PROFILE) -> None:
        self.seed, self.name, self.category, self.description = seed, name, category, description
        self.profile = profile
        self.material = Material(seed, name)
        self.rng = random.Random(f"{seed}:{name}")
        self.steps: list[dict[str, Any]] = []
        self.clock = 1_000_000
        self.signatures = 0
        self.kind = "controller"

    # --- keys and devices ------------------------------------------------------------------------------
    @staticmethod
    def dev_id(n: int) -> bytes:
        return f"PLC-{n:04d}".encode()

    def k_evid(self, dev_id: bytes, epoch: int) -> bytes:
        return self.material.octets(f"k_evid/{dev_id.hex()}/{epoch}")

    def chain_seed(self, dev_id: bytes, epoch: int) -> bytes:
        return self.material.octets(f"chain/{dev_id.hex()}/{epoch}")

    @property
    def explicit(self) -> bool:
        return self.profile.wire_format == EXPLICIT

    def tag_at(self) -> int:
        """Offset of a report's first evidence-tag octet (after the record, and its length octet if explicit)."""
        return RECORD_OCTETS + (1 if self.explicit else 0)

    def device(self, n: int | bytes, epoch: int = 1, *, tag_len: int = 16, policy_id: int = 1,
               chain_length: int = 64, next_seq: int = 1) -> ReportDevice:
        """A reference device whose keys derive from the seed (its reports are the vector's inputs)."""
        dev_id = self.dev_id(n) if isinstance(n, int) else n
        return open_device("reference", Deployment(b"CTRL-001", profile=self.profile), dev_id, epoch,
                           self.k_evid(dev_id, epoch), self.chain_seed(dev_id, epoch), tag_len=tag_len,
                           policy_id=policy_id, chain_length=chain_length, next_seq=next_seq)

    def reports(self, dev: ReportDevice, count: int = 1, *, disclosure_tag: bool = True, flags: int = 0,
                step: int = 1_000) -> list[bytes]:
        out = []
        for _ in range(count):
            self.clock += step
            digest = self.material.octets(f"digest/{dev.dev_id.hex()}/{dev.epoch}/{dev.seq + 1}")
            out.append(dev.report(digest, self.clock, flags=flags, disclosure_tag=disclosure_tag))
        return out

    # --- controller steps ------------------------------------------------------------------------------
    def step(self, op: str, **args: Any) -> None:
        self.steps.append({"op": op, "args": {k: v.hex() if isinstance(v, bytes) else v for k, v in args.items()}})

    def open_controller(self, controller_id: bytes = b"CTRL-001", sig_alg: int = 1, **override: Any) -> None:
        self.sig_alg = sig_alg
        args = {"controller_id": controller_id, "sig_alg": sig_alg, "variant": self.profile.variant,
                "wire_format": self.profile.wire_format}
        self.step("open_controller", **{**args, **override})

    def register(self, dev: ReportDevice, *, expiry: int = NO_EXPIRY, not_before: int = 0, **override: Any) -> None:
        args = {"dev_id": dev.dev_id, "epoch": dev.epoch, "k_evid": self.k_evid(dev.dev_id, dev.epoch),
                "tag_len": dev.tag_len, "expiry": expiry, "policy_id": dev.policy_id, "not_before": not_before}
        self.step("register_epoch", **{**args, **override})

    def revoke(self, dev_id: bytes) -> None:
        self.step("revoke", dev_id=dev_id)

    def ingest(self, reports: list[Any], *, framed: bool = False, now: int | str | None = "clock") -> None:
        """One ingest step at ``now`` (default: the builder's clock, the newest report's time; None: no clock, which
        the controller refuses)."""
        now = self.clock if now == "clock" else now
        clock = {} if now is None else {"now": now}
        if framed:
            self.steps.append({"op": "ingest", "args": {"framed": b"".join(
                len(r).to_bytes(2, "big") + r for r in reports).hex(), **clock}})
        else:
            self.steps.append({"op": "ingest", "args": {"reports": [r.hex() if isinstance(r, bytes) else r
                                                                    for r in reports], **clock}})

    def ingest_raw(self, args: dict[str, Any]) -> None:
        self.steps.append({"op": "ingest", "args": args})

    def body(self) -> None:
        self.step("checkpoint_body")

    def signature(self, size: int = OPAQUE_SIGNATURE) -> bytes:
        self.signatures += 1
        return self.material.octets(f"signature/{self.signatures}", size)

    def commit(self, signature: bytes | None = None) -> None:
        self.step("commit", signature=self.signature() if signature is None else signature)

    def checkpoint(self, real_size: bool = False) -> None:
        """Body and commit; ``real_size`` signs with as many octets as the controller's algorithm's signature."""
        self.body()
        self.commit(self.signature(SIGNATURE_OCTETS[self.sig_alg]) if real_size else None)

    # --- device steps ----------------------------------------------------------------------------------
    def open_device(self, n: int = 1, epoch: int = 1, *, tag_len: int = 16, policy_id: int = 1,
                    chain_length: int = 64, **override: Any) -> None:
        self.kind = "device"
        dev_id = self.dev_id(n)
        args = {"dev_id": dev_id, "epoch": epoch, "k_evid": self.k_evid(dev_id, epoch),
                "chain_seed": self.chain_seed(dev_id, epoch), "tag_len": tag_len, "policy_id": policy_id,
                "chain_length": chain_length, "variant": self.profile.variant, "wire_format": self.profile.wire_format}
        self.step("open_device", **{**args, **override})

    def report(self, *, digest: bytes | None = None, timestamp: int | None = None, flags: int = 0,
               disclosure_tag: bool = True) -> None:
        self.clock += 1_000
        digest = self.material.octets(f"digest/{len(self.steps)}") if digest is None else digest
        self.step("report", digest=digest, timestamp=self.clock if timestamp is None else timestamp, flags=flags,
                  disclosure_tag=disclosure_tag)

    def chain_key(self, j: int) -> None:
        self.step("chain_key", j=j)

    # --- the vector ------------------------------------------------------------------------------------
    def vector(self) -> dict[str, Any]:
        """Inputs plus what the reference path returns for them."""
        inputs = {"format": FORMAT, "name": self.name, "category": self.category, "description": self.description,
                  "seed": self.seed, "kind": self.kind, "variant": self.profile.variant,
                  "wire_format": self.profile.wire_format, "steps": self.steps}
        outcome = execute(inputs, "reference")
        steps = [{**step, **result} for step, result in zip(self.steps, outcome["steps"], strict=True)]
        return {**inputs, "initial_state": outcome["initial_state"], "steps": steps}
