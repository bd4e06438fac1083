"""The native side of the batch fast path: the fastpath interface over the C extension ``_amort_native``."""

from __future__ import annotations

from typing import Any

from pqlab.amort.controller import Clock
from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath import native
from pqlab.amort.fastpath.base import (
    BatchController,
    BatchInput,
    ReportDevice,
    Verdicts,
    check_octets,
    epoch_arguments,
)
from pqlab.amort.profile import EXPLICIT, HARDENED, Profile


def _flags(profile: Profile) -> tuple[int, int]:
    """The C core's (wire format, variant) numbers: AMORT_WIRE_EXPLICIT = 1, AMORT_VARIANT_HARDENED = 1."""
    return int(profile.wire_format == EXPLICIT), int(profile.variant == HARDENED)


class NativeBatchController(BatchController):
    """Delegates every call to one C controller object; arguments are checked here exactly as the reference does."""

    path = "native"

    def __init__(self, deployment: Deployment, sig_alg: int, clock: Clock | None) -> None:
        super().__init__(deployment, sig_alg, clock)
        self._c = native.load().Controller(deployment.controller_id, sig_alg, *_flags(deployment.profile),
                                           deployment.max_report_age)

    def register_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, not_before: int, tag_len: int = 16,
                       expiry: int = (1 << 64) - 1, policy_id: int = 1) -> None:
        self._c.register_epoch(*epoch_arguments(dev_id, epoch, k_evid, tag_len, expiry, policy_id, not_before))

    def revoke(self, dev_id: bytes) -> None:
        self._c.revoke(check_octets(dev_id, 8, "dev_id"))

    def ingest(self, batch: BatchInput, *, now: int | None = None) -> Verdicts:
        codes, fields = self._c.ingest(batch, self.now(now))
        return Verdicts(codes, fields)

    def checkpoint_body(self) -> bytes:
        return self._c.checkpoint_body()

    def commit(self, signature: bytes) -> bytes:
        return self._c.commit(signature)

    @property
    def tree_size(self) -> int:
        return self._c.tree_size

    @property
    def root(self) -> bytes:
        return self._c.root

    @property
    def index(self) -> int:
        return self._c.index

    @property
    def prev_hash(self) -> bytes:
        return self._c.prev_hash

    @property
    def pending(self) -> int:
        return self._c.pending

    @property
    def awaiting_commit(self) -> bool:
        return self._c.awaiting_commit

    def device(self, dev_id: bytes) -> dict[str, Any]:
        return self._c.device(check_octets(dev_id, 8, "dev_id"))

    def state(self) -> dict[str, Any]:
        return self._c.state()


class NativeDevice(ReportDevice):
    """The device's per-report path in C (amort_device_report); the chain keeps O(sqrt L) keys."""

    path = "native"

    def __init__(self, dev_id: bytes, epoch: int, k_evid: bytes, chain_seed: bytes, tag_len: int, policy_id: int,
                 chain_length: int, next_seq: int, profile: Profile) -> None:
        super().__init__(dev_id, epoch, tag_len, policy_id, chain_length, profile)
        self._c = native.load().Device(dev_id, epoch, k_evid, chain_seed, tag_len, policy_id, chain_length,
                                       *_flags(profile), next_seq)

    def report(self, digest: bytes, timestamp: int, *, flags: int = 0, disclosure_tag: bool = True) -> bytes:
        return self._c.report(digest, timestamp, flags, disclosure_tag)

    def chain_key(self, j: int) -> bytes:
        return self._c.chain_key(j)

    @property
    def seq(self) -> int:
        return self._c.seq

    @property
    def anchor(self) -> bytes:
        return self._c.anchor
