"""Seeded device fleets for experiments: identities, evidence keys, chain seeds and report rounds on the fast path."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import MAX_BATCH, NO_EXPIRY, BatchController, ReportDevice, open_device
from pqlab.amort.profile import PAPER_PROFILE, Profile

DOMAIN = b"pqlab.fleet/"
MAX_IDENTITIES = 1 << 56
FLEET_CONTROLLER = b"CTRL-FLT"

# The state a controller keeps per identity for its current epoch, with the widths the wire format gives each
# field (docs/protocol.md): what "policy state per identity" counts. The dev_id is the key of the table.
STATE_LAYOUT: tuple[tuple[str, str], ...] = (
    ("dev_id", "8s"), ("epoch", "I"), ("k_evid", "32s"), ("tag_len", "B"), ("policy_id", "H"),
    ("expiry", "Q"), ("last_seen", "Q"), ("last_committed", "Q"), ("revoked", "?"),
)
_STATE = struct.Struct(">" + "".join(fmt for _, fmt in STATE_LAYOUT))


def fleet_id(i: int) -> bytes:
    """The 8-octet identifier of fleet member ``i`` (``F`` then 7 octets of ``i``)."""
    if not 0 <= i < MAX_IDENTITIES:
        raise ValueError(f"fleet index {i} outside [0, 2^56)")
    return b"F" + i.to_bytes(7, "big")


@dataclass(frozen=True)
class Fleet:
    """``n`` identities whose keys derive from (seed, trial): the controller and the devices agree without a
    key exchange (the ML-KEM epoch set-up is measured on its own, in re-keying)."""

    n: int
    seed: int
    trial: int = 0
    epoch: int = 1
    tag_len: int = 16
    policy_id: int = 1
    profile: Profile = PAPER_PROFILE  # the fleet's protocol variant and wire format (the reproduction's: the paper's)

    def __post_init__(self) -> None:
        if not 1 <= self.n <= MAX_IDENTITIES:
            raise ValueError(f"fleet size {self.n} outside [1, 2^56]")

    def _derive(self, kind: bytes, i: int, extra: int = 0) -> bytes:
        material = DOMAIN + kind + b"/" + struct.pack(">QIIQQ", self.seed, self.trial, self.epoch, i, extra)
        return hashlib.sha256(material).digest()

    def deployment(self, **options: int) -> Deployment:
        """The deployment a fleet's controller and devices are opened for (controller ``CTRL-FLT``; ``options``:
        e.g. the ``max_report_age`` a controller replaying a backlog is configured with)."""
        return Deployment(FLEET_CONTROLLER, profile=self.profile, **options)

    def dev_id(self, i: int) -> bytes:
        return fleet_id(i)

    def k_evid(self, i: int) -> bytes:
        return self._derive(b"k_evid", i)

    def chain_seed(self, i: int) -> bytes:
        return self._derive(b"chain", i)

    def digest(self, i: int, seq: int) -> bytes:
        """A seeded stand-in for device ``i``'s measured-state digest in report ``seq``."""
        return self._derive(b"digest", i, seq)

    def register(self, ctl: BatchController, *, not_before: int, expiry: int = NO_EXPIRY) -> None:
        """Install every identity's epoch, opened at ``not_before`` (ms), on ``ctl`` (enrolling it)."""
        for i in range(self.n):
            ctl.register_epoch(self.dev_id(i), self.epoch, self.k_evid(i), not_before=not_before,
                               tag_len=self.tag_len, expiry=expiry, policy_id=self.policy_id)

    def device(self, path: str, i: int, chain_length: int) -> ReportDevice:
        """Device ``i`` on the device path ``path`` with a disclosure chain of ``chain_length`` keys."""
        return open_device(path, self.deployment(), self.dev_id(i), self.epoch, self.k_evid(i),
                                    self.chain_seed(i), tag_len=self.tag_len, policy_id=self.policy_id,
                                    chain_length=chain_length)


FIRST_TIME_MS = 1_000  # the time stamp of a fleet's first report round (ms), and when its epoch opens
PERIOD_MS = 1_000  # one round per second (each member reports at 1 Hz)


def round_time(r: int, first_time_ms: int = FIRST_TIME_MS, period_ms: int = PERIOD_MS) -> int:
    """The time stamp of round ``r`` (0-based): the controller's clock when it ingests that round."""
    return first_time_ms + r * period_ms


def report_rounds(fleet: Fleet, path: str, disclosure_tags: Sequence[bool], *, first_time_ms: int = FIRST_TIME_MS,
                  period_ms: int = PERIOD_MS, members: Sequence[int] | None = None) -> list[list[bytes]]:
    """``rounds[r][m]``: member m's report r + 1 built on the device path, one round per entry of
    ``disclosure_tags`` (whether that round's reports carry the second tag). Devices are dropped once their
    reports are built, so a large fleet holds only its reports."""
    members = range(fleet.n) if members is None else members
    rounds: list[list[bytes]] = [[] for _ in disclosure_tags]
    for i in members:
        device = fleet.device(path, i, chain_length=max(1, len(disclosure_tags)))
        for r, tagged in enumerate(disclosure_tags):
            rounds[r].append(device.report(fleet.digest(i, r + 1), round_time(r, first_time_ms, period_ms),
                                           disclosure_tag=tagged))
    return rounds


def batches(reports: Sequence[bytes], size: int = MAX_BATCH) -> Iterator[Sequence[bytes]]:
    """``reports`` cut into ingest calls of at most ``size`` (the fast path's MAX_BATCH)."""
    for start in range(0, len(reports), size):
        yield reports[start:start + size]


def packed_state(device: dict[str, Any], k_evid: bytes) -> bytes:
    """One identity's controller state (a ``BatchController.state()['devices']`` entry and its K_evid) packed
    with the field widths of :data:`STATE_LAYOUT`."""
    return _STATE.pack(bytes.fromhex(device["dev_id"]), device["epoch"], k_evid, device["tag_len"],
                       device["policy_id"], device["expiry"], device["last_seen"], device["last_committed"],
                       bool(device["revoked"]))
