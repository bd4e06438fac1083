"""What crosses the prover's pipe: the RESUME protocol message and the length-prefixed frames around everything."""

from __future__ import annotations

import dataclasses
import json
import os
import select
import time
from typing import Any, BinaryIO, ClassVar

from pqlab.amort import kdf
from pqlab.amort.codec import Fixed, Message, Uint
from pqlab.errors import ProverProcessError

RESUME_OCTETS = 72


@dataclasses.dataclass(frozen=True)
class Resume(Message):
    """RESUME (device -> controller, 72 octets): the device re-enters ``epoch`` after a restart at ``resume_seq``.

    Every number below ``resume_seq`` may have been issued before the restart and is never used again; the
    controller treats numbers between its last seen and ``resume_seq`` as skipped. ``counter`` is the TPM NV
    counter value of the reservation that covers ``resume_seq`` (0 when unanchored). MAC: HMAC-SHA-256 under
    K_evid over every preceding octet. Not acknowledged: a device never relies on the controller to tell it
    that its own state is stale.
    """

    DOMAIN: ClassVar[bytes] = b"AMORT.RSUM"
    SIGNED_FIELD: ClassVar[str | None] = "mac"
    SPEC = (("dev_id", Fixed(8)), ("epoch", Uint(4)), ("resume_seq", Uint(8)), ("counter", Uint(8)),
            ("mac", Fixed(32)))

    dev_id: bytes
    epoch: int
    resume_seq: int
    counter: int
    mac: bytes = bytes(32)

    def signed(self, k_evid: bytes) -> Resume:
        return self.replace(mac=kdf.mac(k_evid, self.tbs()))


# Frame types. Parent -> prover:
EPOCH_REQ, EPOCH_OPEN, RUN, CONTINUE, EXIT = b"Q", b"O", b"R", b"C", b"X"
# Prover -> parent:
NEED_EPOCH, EPOCH_CONFIRM, RESUME, READY, REPORT, RESERVED, HOOK, DONE, FAILED = (
    b"N", b"F", b"M", b"Y", b"P", b"V", b"H", b"D", b"E")
JSON_FRAMES = frozenset({NEED_EPOCH, READY, RESERVED, HOOK, DONE, FAILED, RUN})


def encode_frame(kind: bytes, payload: bytes | dict[str, Any] = b"") -> bytes:
    """One frame: type octet, 4-octet big-endian length, payload (JSON for control frames)."""
    data = json.dumps(payload).encode() if isinstance(payload, dict) else bytes(payload)
    return kind + len(data).to_bytes(4, "big") + data


def write_frame(stream: BinaryIO, kind: bytes, payload: bytes | dict[str, Any] = b"") -> None:
    stream.write(encode_frame(kind, payload))
    stream.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    out = bytearray()
    while len(out) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise ProverProcessError(f"no frame within the timeout ({len(out)}/{n} octets read)", field="pipe")
        chunk = os.read(fd, n - len(out))
        if not chunk:
            raise EOFError(f"pipe closed after {len(out)}/{n} octets")
        out += chunk
    return bytes(out)


def read_frame(fd: int, timeout: float | None = None) -> tuple[bytes, Any]:
    """Read one frame from a file descriptor; JSON payloads are decoded. EOFError when the writer is gone."""
    deadline = None if timeout is None else time.monotonic() + timeout
    head = _read_exact(fd, 5, deadline)
    kind, n = head[:1], int.from_bytes(head[1:], "big")
    data = _read_exact(fd, n, deadline) if n else b""
    return kind, (json.loads(data) if kind in JSON_FRAMES else data)
