"""Every AMORT-V1 wire message as a frozen dataclass with a canonical encoding (byte tables: docs/protocol.md)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Self

from pqlab.amort.codec import Fixed, Hashes, Kind, ListOf, Message, Prefixed, Reader, Struct, Uint, Var
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.profile import EXPLICIT, IMPLIED, check_wire_format
from pqlab.errors import PqlabError

ID_OCTETS = 8
HASH = 32
TAG_LENGTHS = (8, 12, 16)
DEFAULT_TAG_LENGTH = 16  # §IV-B: "uses 16 octets by default"
# What the octets after a record can be in some epoch: one tag or two tags of one of the TAG_LENGTHS.
TAG_SECTION_LENGTHS = frozenset(n * t for t in TAG_LENGTHS for n in (1, 2))
SIGNATURE_OCTETS = {1: 3309, 2: 17088}  # FIPS 204 ML-DSA-65, FIPS 205 SLH-DSA-SHA2-128f

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


PROFILE_OCTETS = range(4)  # pqlab.amort.profile.Profile.octet: bit 0 hardened, bit 1 explicit


def _check_profile(value: int, field: str) -> None:
    if value not in PROFILE_OCTETS:
        raise AmortError(Code.PROFILE_MISMATCH, f"profile octet {value} names no deployment profile", field=field)


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


def _record_layout() -> dict[str, tuple[int, int, int]]:
    """Record part -> (offset of its length octet, offset of its first value octet, value width): the domain tag,
    the version, then Record.SPEC's fields in order (docs/protocol.md's byte table, computed here once)."""
    domain = len(Record.DOMAIN)
    layout = {"domain": (0, 1, domain), "version": (1 + domain, 2 + domain, 1)}
    at = 3 + domain
    for name, kind in Record.SPEC:
        layout[name] = (at, at + 1, kind.size - 1)
        at += kind.size
    return layout


# The one definition of the record's shape in Python. The C decoder's copy (amort_core.h's AMORT_RECORD_OCTETS,
# decode_record's header offsets and field widths in amort_core.c) is checked against these by parsing the C
# sources: tests/test_shared_constants.py.
RECORD_LAYOUT = _record_layout()
RECORD_OCTETS = sum(1 + width for _, _, width in RECORD_LAYOUT.values())


def split_tags(r: Reader, tag_len: int | None) -> tuple[bytes, bytes]:
    """The implied wire format's tag section: the rest of the input is the evidence tag, or it and the
    disclosure tag, each ``tag_len`` octets (the epoch's; None: inferred from the length, 16 when it fits none).

    A rest that is a valid tag section of another tag length is TAGLEN_DOWNGRADE (an upgrade too); shorter than
    one tag, or between one and two, is TRUNCATED; longer than two tags is TRAILING."""
    at, rest = r.pos, len(r.data) - r.pos
    if tag_len is None:
        tag_len = rest if rest in TAG_LENGTHS else rest // 2 if rest in TAG_SECTION_LENGTHS else DEFAULT_TAG_LENGTH
    if rest == tag_len:
        return r.take(tag_len, "tag"), b""
    if rest == 2 * tag_len:
        return r.take(tag_len, "tag"), r.take(tag_len, "dtag")
    if rest in TAG_SECTION_LENGTHS:
        raise AmortError(Code.TAGLEN_DOWNGRADE, f"{rest} tag octets, the epoch fixes {tag_len}-octet tags",
                         field=f"Report.tag@{at}")
    if rest < tag_len:
        raise AmortError(Code.TRUNCATED, f"evidence tag of {rest} octets, the epoch fixes {tag_len}",
                         field=f"Report.tag@{at}")
    if rest < 2 * tag_len:
        raise AmortError(Code.TRUNCATED, f"disclosure tag of {rest - tag_len} octets, the epoch fixes {tag_len}",
                         field=f"Report.dtag@{at + tag_len}")
    raise AmortError(Code.TRAILING, f"{rest - 2 * tag_len} octets after the disclosure tag",
                     field=f"Report@{at + 2 * tag_len}")


@dataclasses.dataclass(frozen=True)
class Report:
    """A record followed by its evidence tag and an optional disclosure tag.

    ``implied`` wire format: the tags follow the record with no length octet (the epoch fixes their length);
    ``explicit``: each tag behind one length octet (0 for an absent disclosure tag)."""

    record: Record
    tag: bytes
    dtag: bytes = b""
    wire_format: str = IMPLIED

    def __post_init__(self) -> None:
        check_wire_format(self.wire_format, "Report.wire_format")

    def encode(self) -> bytes:
        if self.wire_format == EXPLICIT:
            return self.record.encode() + bytes([len(self.tag)]) + self.tag + bytes([len(self.dtag)]) + self.dtag
        return self.record.encode() + self.tag + self.dtag

    @classmethod
    def decode(cls, data: bytes, *, wire_format: str = IMPLIED, tag_len: int | None = None) -> Self:
        """Decode one report; in the implied format ``tag_len`` is the epoch's tag length (see :func:`split_tags`)."""
        check_wire_format(wire_format)
        r = Reader(data, "Report")
        record = Record.read(r)
        if wire_format == IMPLIED:
            tag, dtag = split_tags(r, tag_len)
            return cls(record, tag, dtag, IMPLIED)
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
        return cls(record, tag, dtag, EXPLICIT)

    @staticmethod
    def decode_record(data: bytes) -> Record:
        """The record at the start of an implied-format report (its tags need the epoch's tag length)."""
        return Record.read(Reader(data, "Report"))

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class Certificate(Message):
    """Minimal device certificate: the CA binds dev_id to its ML-KEM-768 key (and optional ML-DSA key) and to the
    deployment profile the device runs (``profile``: :attr:`pqlab.amort.profile.Profile.octet`), so no party of
    another profile — a downgraded auditor included — accepts evidence of this device."""

    DOMAIN: ClassVar[bytes] = b"AMORT.CERT"
    SIGNED_FIELD: ClassVar[str] = "ca_sig"
    SPEC = (("profile", U8), ("serial", U64), ("dev_id", ID), ("kem_pk", Var(2)), ("sig_pk", Var(2)),
            ("ca_sig", Var(2)))

    profile: int
    serial: int
    dev_id: bytes
    kem_pk: bytes
    sig_pk: bytes
    ca_sig: bytes = b""

    def validate(self) -> None:
        _check_profile(self.profile, "Certificate.profile")


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
class HardenedEpochReq(EpochReq):
    """Hardened variant: EPOCH_REQ signed by the controller, so an injected request costs the device one signature
    verification and never its signature, its decapsulation or a pending exchange (issue 35)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.HREQ"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (*EpochReq.SPEC, ("sig_alg", U8), ("sig", Var(2)))

    sig_alg: int = 1
    sig: bytes = b""

    def validate(self) -> None:
        _check_sig_alg(self.sig_alg, "HardenedEpochReq.sig_alg")


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
    SPEC = (("profile", U8), ("controller_id", ID), ("dev_id", ID), ("epoch", U32), ("tag_len", U8),
            ("policy_id", U16), ("k0", H32), ("expiry", U64), ("cert_serial", U64), ("transcript_hash", H32),
            ("sig_alg", U8), ("sig", Var(2)))

    profile: int
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
        _check_profile(self.profile, "EpochOpen.profile")
        _check_tag_len(self.tag_len, "EpochOpen.tag_len")
        _check_sig_alg(self.sig_alg, "EpochOpen.sig_alg")


@dataclasses.dataclass(frozen=True)
class HardenedEpochConfirm(EpochConfirm):
    """Hardened variant: EPOCH_CONFIRM also carries the device's signature over its anchor (N03)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.HCNF"
    SPEC = (("dev_id", ID), ("epoch", U32), ("k0", H32), ("anchor_sig", Var(2)), ("mac", H32))

    anchor_sig: bytes = b""


@dataclasses.dataclass(frozen=True)
class HardenedEpochOpen(EpochOpen):
    """Hardened variant: EPOCH_OPEN forwards the device's anchor signature inside the controller-signed octets."""

    DOMAIN: ClassVar[bytes] = b"AMORT.HOPN"
    SPEC = (*EpochOpen.SPEC[:-2], ("anchor_sig", Var(2)), *EpochOpen.SPEC[-2:])

    anchor_sig: bytes = b""


@dataclasses.dataclass(frozen=True)
class AnchorStatement(Message):
    """Hardened variant: what the device signs with its certified ML-DSA key once per epoch — that the chain
    anchor ``k0`` of (``dev_id``, ``epoch``), opened by ``controller_id``, is its own (closes N03)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.ANCH"
    SPEC = (("controller_id", ID), ("dev_id", ID), ("epoch", U32), ("k0", H32))

    controller_id: bytes
    dev_id: bytes
    epoch: int
    k0: bytes


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


class ImpliedSpans(Kind):
    """The implied wire format's span list: one base epoch for the checkpoint, the spans without their epoch
    (56 octets each), then the spans whose epoch differs from the base as (span index, epoch) exceptions.

    Canonical, so decoding is one-to-one: the base is the first span's epoch (0 with no spans) and exceptions
    name increasing indexes above 0 with an epoch other than the base; anything else is TRAILING."""

    SPAN = (("dev_id", ID), ("seq_lo", U64), ("seq_hi", U64), ("subtree", H32))
    SPAN_OCTETS = 56
    EXCEPTION_OCTETS = 8

    def write(self, value: Any, field: str) -> bytes:
        spans = list(value)
        if len(spans) >= 1 << 32 or any(not isinstance(s, Span) for s in spans):
            raise PqlabError("must be a list of Span", field=field)
        base = spans[0].epoch if spans else 0
        out = [U32.write(base, f"{field}.epoch"), U32.write(len(spans), f"{field}.count")]
        for i, span in enumerate(spans):
            out.extend(kind.write(getattr(span, name), f"{field}[{i}].{name}") for name, kind in self.SPAN)
        exceptions = [(i, span.epoch) for i, span in enumerate(spans) if span.epoch != base]
        out.append(U32.write(len(exceptions), f"{field}.exceptions.count"))
        for i, epoch in exceptions:
            out += [U32.write(i, f"{field}.exceptions.index"), U32.write(epoch, f"{field}[{i}].epoch")]
        return b"".join(out)

    def read(self, r: Reader, field: str) -> tuple[Span, ...]:
        base = r.uint(4, "epoch")
        n = r.uint(4, f"{field}.count")
        if n * self.SPAN_OCTETS > len(r.data) - r.pos:
            raise AmortError(Code.TRUNCATED, f"{n} spans of {self.SPAN_OCTETS} octets do not fit",
                             field=f"{r.what}.{field}@{r.pos}")
        raw = [{name: kind.read(r, f"{field}[{i}].{name}") for name, kind in self.SPAN} for i in range(n)]
        m = r.uint(4, "epoch_exceptions.count")
        if m * self.EXCEPTION_OCTETS > len(r.data) - r.pos:
            raise AmortError(Code.TRUNCATED, f"{m} epoch exceptions of {self.EXCEPTION_OCTETS} octets do not fit",
                             field=f"{r.what}.epoch_exceptions@{r.pos}")
        if n == 0 and base != 0:
            raise AmortError(Code.TRAILING, "a base epoch without spans is not the canonical encoding",
                             field=f"{r.what}.epoch")
        epochs, last = [base] * n, 0
        for k in range(m):
            at = r.pos
            index, epoch = r.uint(4, f"epoch_exceptions[{k}].index"), r.uint(4, f"epoch_exceptions[{k}].epoch")
            if not last < index < n or epoch == base:
                raise AmortError(Code.TRAILING, f"epoch exception ({index}, {epoch}) is not canonical (indexes "
                                 f"increase within 1..{n - 1}, epochs differ from the base {base})",
                                 field=f"{r.what}.epoch_exceptions[{k}]@{at}")
            epochs[index], last = epoch, index
        return tuple(Span(s["dev_id"], epochs[i], s["seq_lo"], s["seq_hi"], s["subtree"]) for i, s in enumerate(raw))


@dataclasses.dataclass(frozen=True)
class Checkpoint(Message):
    """The signed checkpoint (§IV-C): tree head, previous-checkpoint hash, leaf count, per-device spans.

    The ``implied`` wire format states the spans' epoch once (:class:`ImpliedSpans`); ``explicit`` puts it in
    every span. ``wire_format`` is not on the wire: decoding takes it as an option."""

    DOMAIN: ClassVar[bytes] = b"AMORT.CKPT"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (("controller_id", ID), ("index", U64), ("prev_hash", H32), ("tree_size", U64), ("root", H32),
            ("spans", ListOf(Span, 4)), ("closes", ListOf(CloseEntry, 2)), ("sig_alg", U8), ("sig", Var(2)))
    IMPLIED_SPEC = (*SPEC[:5], ("spans", ImpliedSpans()), *SPEC[6:])

    controller_id: bytes
    index: int
    prev_hash: bytes
    tree_size: int
    root: bytes
    spans: tuple[Span, ...]
    closes: tuple[CloseEntry, ...] = ()
    sig_alg: int = 1
    sig: bytes = b""
    wire_format: str = IMPLIED

    def __post_init__(self) -> None:
        check_wire_format(self.wire_format, "Checkpoint.wire_format")

    def spec(self) -> tuple[tuple[str, Kind], ...]:
        return self.IMPLIED_SPEC if self.wire_format == IMPLIED else self.SPEC

    @classmethod
    def read_fields(cls, r: Reader, wire_format: str = IMPLIED) -> Self:
        check_wire_format(wire_format)
        return cls.read_body(r, spec=cls.IMPLIED_SPEC if wire_format == IMPLIED else cls.SPEC,
                             wire_format=wire_format)

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


@dataclasses.dataclass(frozen=True)
class ReceiptEntry(Struct):
    """One checkpoint receipt a hardened device kept: its index and link hash."""

    SPEC = (("index", U64), ("link", H32))

    index: int
    link: bytes


@dataclasses.dataclass(frozen=True)
class Receipts(Message):
    """Hardened variant: the receipts a device accepted while an epoch was live, signed by the device with its
    certified key, for comparison with the public chain (N04; signed since issue 35: an unsigned list could be
    built from the public chain by anyone)."""

    DOMAIN: ClassVar[bytes] = b"AMORT.RCPT"
    SIGNED_FIELD: ClassVar[str] = "sig"
    SPEC = (("dev_id", ID), ("epoch", U32), ("entries", ListOf(ReceiptEntry, 4)), ("sig", Var(2)))

    dev_id: bytes
    epoch: int
    entries: tuple[ReceiptEntry, ...]
    sig: bytes = b""


def decode_for_variant(data: bytes, paper: type[Message], hardened: type[Message], is_hardened: bool) -> Any:
    """Decode a message that has a paper and a hardened form, as the form ``is_hardened`` selects; the other form's
    domain tag is PROFILE_MISMATCH (evidence of the other variant, e.g. a downgraded EPOCH_OPEN), not BAD_DOMAIN."""
    own, other = (hardened, paper) if is_hardened else (paper, hardened)
    if isinstance(data, (bytes, bytearray, memoryview)) and bytes(data[1:1 + len(other.DOMAIN)]) == other.DOMAIN \
            and data[:1] == bytes([len(other.DOMAIN)]):
        raise AmortError(Code.PROFILE_MISMATCH, f"a {other.__name__} ({other.DOMAIN.decode()}) where this deployment "
                         f"uses {own.__name__}", field=f"{own.__name__}.domain@1")
    return own.decode(data)


DECODERS = {cls.__name__: cls.decode for cls in (Record, Report, Certificate, EpochReq, HardenedEpochReq,
                                                   EpochConfirm, EpochOpen,
                                                   HardenedEpochConfirm, HardenedEpochOpen, AnchorStatement,
                                                   EpochClose, Checkpoint, InclusionProof, ConsistencyProof,
                                                   Disclosure, SubCheckpoint, Receipts)}
