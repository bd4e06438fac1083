"""Every AMORT-V1 wire message as a frozen dataclass with a canonical encoding (byte tables: docs/protocol.md)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Self

from pqlab.amort.codec import Fixed, Hashes, ListOf, Message, Prefixed, Reader, Struct, Uint, Var
from pqlab.amort.errors import AmortError, Code

ID_OCTETS = 8
HASH = 32
TAG_LENGTHS = (8, 12, 16)
RECORD_OCTETS = 83

U8, U16, U32, U64 = Uint(1), Uint(2), Uint(4), Uint(8)
ID, H32 = Fixed(ID_OCTETS), Fixed(HASH)

SIG_ALGORITHMS = {1: "ML-DSA-65", 2: "SLH-DSA-SHA2-128f"}
SIG_ALGORITHM_IDS = {name: code for code, name in SIG_ALGORITHMS.items()}


def _check_tag_len(value: int, field: str, allow_zero: bool = False) -> None:
    if value not in TAG_LENGTHS and not (allow_zero and value == 0):
        raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag length {value} is not one of {TAG_LENGTHS}", field=field)


def _check_sig_alg(value: int, field: str) -> None:
    if value not in SIG_ALGORITHMS:
        raise AmortError(Code.SIG_FAIL, f"unknown signature algorithm id {value}", field=field)


@dataclasses.dataclass(frozen=True)
class Record(Message):
    """The canonical 83-octet report record (§IV-B): every field length-prefixed, under a domain tag."""

    DOMAIN: ClassVar[bytes] = b"AMORT.EVID"
    PREFIXED_VERSION: ClassVar[bool] = True
    SPEC = (("dev_id", Prefixed(ID)), ("epoch", Prefixed(U32)), ("seq", Prefixed(U64)),
            ("timestamp", Prefixed(U64)), ("digest", Prefixed(H32)), ("policy_id", Prefixed(U16)),
            ("flags", Prefixed(U8)))

    dev_id: bytes
    epoch: int
    seq: int
    timestamp: int
    digest: bytes
    policy_id: int
    flags: int = 0


@dataclasses.dataclass(frozen=True)
class Report:
    """A record followed by its evidence tag and an optional disclosure tag (each behind a length octet)."""

    record: Record
    tag: bytes
    dtag: bytes = b""

    def encode(self) -> bytes:
        return self.record.encode() + bytes([len(self.tag)]) + self.tag + bytes([len(self.dtag)]) + self.dtag

    @classmethod
    def decode(cls, data: bytes) -> Self:
        r = Reader(data, "Report")
        record = Record.read(r)
        at = r.pos
        n = r.uint(1, "tag_len")
        _check_tag_len(n, f"Report.tag_len@{at}")
        tag = r.take(n, "tag")
        at = r.pos
        m = r.uint(1, "dtag_len")
        _check_tag_len(m, f"Report.dtag_len@{at}", allow_zero=True)
        if m and m != n:
            raise AmortError(Code.TAGLEN_DOWNGRADE, f"disclosure tag length {m} differs from evidence tag {n}",
                             field=f"Report.dtag_len@{at}")
        dtag = r.take(m, "dtag")
        r.finish()
        return cls(record, tag, dtag)

    def replace(self, **changes) -> Self:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class Certificate(Message):
    """Minimal device certificate: the CA binds dev_id to its ML-KEM-768 key (and optional ML-DSA key)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.CERT"
    SIGNED_FIELD: ClassVar[str] = "ca_sig"
    SPEC = (("serial", U64), ("dev_id", ID), ("kem_pk", Var(2)), ("sig_pk", Var(2)), ("ca_sig", Var(2)))

    serial: int
    dev_id: bytes
    kem_pk: bytes
    sig_pk: bytes
    ca_sig: bytes = b""


@dataclasses.dataclass(frozen=True)
class EpochReq(Message):
    """Controller → device: ML-KEM-768 ciphertext to the certified key, opening ``epoch``."""

    DOMAIN: ClassVar[bytes] = b"AMORT.EREQ"
    SPEC = (("controller_id", ID), ("dev_id", ID), ("epoch", U32), ("cert_serial", U64), ("ciphertext", Var(2)))

    controller_id: bytes
    dev_id: bytes
    epoch: int
    cert_serial: int
    ciphertext: bytes


@dataclasses.dataclass(frozen=True)
class EpochConfirm(Message):
    """Device → controller: disclosure-chain anchor K0 and a MAC over the transcript hash."""

    DOMAIN: ClassVar[bytes] = b"AMORT.ECNF"
    SIGNED_FIELD: ClassVar[str] = "mac"
    SPEC = (("dev_id", ID), ("epoch", U32), ("k0", H32), ("mac", H32))

    dev_id: bytes
    epoch: int
    k0: bytes
    mac: bytes = bytes(HASH)


@dataclasses.dataclass(frozen=True)
class EpochOpen(Message):
    """Controller → device, signed with the controller's long-term key (§IV-A)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.EOPN"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (("controller_id", ID), ("dev_id", ID), ("epoch", U32), ("tag_len", U8), ("policy_id", U16),
            ("k0", H32), ("expiry", U64), ("cert_serial", U64), ("transcript_hash", H32), ("sig_alg", U8),
            ("sig", Var(2)))

    controller_id: bytes
    dev_id: bytes
    epoch: int
    tag_len: int
    policy_id: int
    k0: bytes
    expiry: int
    cert_serial: int
    transcript_hash: bytes
    sig_alg: int = 1
    sig: bytes = b""

    def validate(self) -> None:
        _check_tag_len(self.tag_len, "EpochOpen.tag_len")
        _check_sig_alg(self.sig_alg, "EpochOpen.sig_alg")


@dataclasses.dataclass(frozen=True)
class EpochClose(Message):
    """Committed by the controller when an epoch ends (§IV-E): last committed and last seen sequence."""

    DOMAIN: ClassVar[bytes] = b"AMORT.ECLS"
    SPEC = (("dev_id", ID), ("epoch", U32), ("last_committed", U64), ("last_seen", U64))

    dev_id: bytes
    epoch: int
    last_committed: int
    last_seen: int


@dataclasses.dataclass(frozen=True)
class Span(Struct):
    """One device's commitment in a checkpoint: (dev_id, epoch, seq_lo, seq_hi, subtree root)."""

    SPEC = (("dev_id", ID), ("epoch", U32), ("seq_lo", U64), ("seq_hi", U64), ("subtree", H32))

    dev_id: bytes
    epoch: int
    seq_lo: int
    seq_hi: int
    subtree: bytes


@dataclasses.dataclass(frozen=True)
class CloseEntry(Struct):
    """An EPOCH_CLOSE body carried inside a checkpoint."""

    SPEC = (("dev_id", ID), ("epoch", U32), ("last_committed", U64), ("last_seen", U64))

    dev_id: bytes
    epoch: int
    last_committed: int
    last_seen: int


@dataclasses.dataclass(frozen=True)
class Checkpoint(Message):
    """The signed checkpoint (§IV-C): tree head, previous-checkpoint hash, leaf count, per-device spans."""

    DOMAIN: ClassVar[bytes] = b"AMORT.CKPT"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (("controller_id", ID), ("index", U64), ("prev_hash", H32), ("tree_size", U64), ("root", H32),
            ("spans", ListOf(Span, 4)), ("closes", ListOf(CloseEntry, 2)), ("sig_alg", U8), ("sig", Var(2)))

    controller_id: bytes
    index: int
    prev_hash: bytes
    tree_size: int
    root: bytes
    spans: tuple[Span, ...]
    closes: tuple[CloseEntry, ...] = ()
    sig_alg: int = 1
    sig: bytes = b""

    def validate(self) -> None:
        _check_sig_alg(self.sig_alg, "Checkpoint.sig_alg")


@dataclasses.dataclass(frozen=True)
class InclusionProof(Message):
    """An audit path for one leaf in a tree of ``tree_size`` leaves."""

    DOMAIN: ClassVar[bytes] = b"AMORT.PINC"
    SPEC = (("leaf_index", U64), ("tree_size", U64), ("path", Hashes()))

    leaf_index: int
    tree_size: int
    path: tuple[bytes, ...]


@dataclasses.dataclass(frozen=True)
class ConsistencyProof(Message):
    """A consistency proof between two tree sizes."""

    DOMAIN: ClassVar[bytes] = b"AMORT.PCON"
    SPEC = (("old_size", U64), ("new_size", U64), ("path", Hashes()))

    old_size: int
    new_size: int
    path: tuple[bytes, ...]


@dataclasses.dataclass(frozen=True)
class Disclosure(Message):
    """Device → anyone: the chain key K_j for report ``j`` of ``epoch`` (§IV-D b)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.DISC"
    SPEC = (("dev_id", ID), ("epoch", U32), ("j", U64), ("key", H32))

    dev_id: bytes
    epoch: int
    j: int
    key: bytes


@dataclasses.dataclass(frozen=True)
class SubCheckpoint(Message):
    """Device-signed Merkle root over its own reports seq_lo..seq_hi (§IV-D c)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.SUBC"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (("dev_id", ID), ("epoch", U32), ("seq_lo", U64), ("seq_hi", U64), ("root", H32), ("sig", Var(2)))

    dev_id: bytes
    epoch: int
    seq_lo: int
    seq_hi: int
    root: bytes
    sig: bytes = b""


DECODERS = {cls.__name__: cls.decode for cls in (Record, Report, Certificate, EpochReq, EpochConfirm, EpochOpen,
                                                   EpochClose, Checkpoint, InclusionProof, ConsistencyProof,
                                                   Disclosure, SubCheckpoint)}
