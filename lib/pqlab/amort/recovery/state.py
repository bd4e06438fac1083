"""The prover's small durable state file: its wire format, and the write + fsync + rename that replaces it."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from pqlab.amort.codec import Fixed, Message, Uint
from pqlab.amort.device import EpochSecrets
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.recovery.cases import ARMS

ARM_IDS = {name: i for i, name in enumerate(ARMS)}
STATE_OCTETS = 144

U8, U16, U32, U64 = Uint(1), Uint(2), Uint(4), Uint(8)


@dataclasses.dataclass(frozen=True)
class ProverState(Message):
    """Everything a prover keeps across restarts (144 octets; byte table in docs/recovery.md).

    ``reserved_hi`` is the highest sequence number the prover may issue without another reservation; ``counter``
    is the TPM NV counter value that authorised it (0 in the unanchored arm). The fresh-epoch arm stores only
    ``epoch`` (the secrets are zero). ``check`` is SHA-256 over the preceding octets: a torn or edited file is
    rejected rather than trusted.
    """

    DOMAIN: ClassVar[bytes] = b"AMORT.PSTA"
    SIGNED_FIELD: ClassVar[str | None] = "check"
    SPEC = (("arm", U8), ("dev_id", Fixed(8)), ("epoch", U32), ("reserved_hi", U64), ("counter", U64),
            ("tag_len", U8), ("policy_id", U16), ("chain_length", U32), ("k_evid", Fixed(32)),
            ("chain_seed", Fixed(32)), ("check", Fixed(32)))

    arm: int
    dev_id: bytes
    epoch: int
    reserved_hi: int = 0
    counter: int = 0
    tag_len: int = 0
    policy_id: int = 0
    chain_length: int = 0
    k_evid: bytes = bytes(32)
    chain_seed: bytes = bytes(32)
    check: bytes = bytes(32)

    @classmethod
    def for_epoch(cls, arm: str, dev_id: bytes, secrets: EpochSecrets | None, epoch: int, *, reserved_hi: int = 0,
                  counter: int = 0) -> ProverState:
        """A sealed state for ``arm``: with the epoch's secrets (reservation arms) or the epoch number alone."""
        if secrets is None:
            return cls(ARM_IDS[arm], dev_id, epoch).sealed()
        return cls(ARM_IDS[arm], dev_id, secrets.epoch, reserved_hi, counter, secrets.tag_len, secrets.policy_id,
                   secrets.chain_length, secrets.k_evid, secrets.chain_seed).sealed()

    def sealed(self) -> ProverState:
        return self.replace(check=hashlib.sha256(self.tbs()).digest())

    def validate(self) -> None:
        if self.check != hashlib.sha256(self.tbs()).digest():
            raise AmortError(Code.MAC_FAIL, "state file check value does not match its contents",
                             field="ProverState.check")
        if self.arm >= len(ARMS):
            raise AmortError(Code.BAD_VERSION, f"unknown arm id {self.arm}", field="ProverState.arm")

    @property
    def has_secrets(self) -> bool:
        return self.chain_length > 0

    def secrets(self) -> EpochSecrets:
        return EpochSecrets(self.epoch, self.k_evid, self.chain_seed, self.chain_length, self.tag_len, self.policy_id)


Hook = Callable[[str], None]


def write_state(path: Path, state: ProverState, hook: Hook | None = None) -> None:
    """Replace ``path`` atomically: write a temporary file, fsync it, rename it over ``path``, fsync the directory.

    ``hook("state_written")`` runs after the temporary file is durable and before the rename (crash injection).
    """
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        data = state.encode()
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    if hook is not None:
        hook("state_written")
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def read_state(path: Path) -> ProverState | None:
    """The state in ``path``; None if there is none. A corrupt file raises AmortError (the caller fails secure)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return ProverState.decode(data)
