"""The AMORT-V1 batch fast path: one interface over two implementations, the Python reference and C (§V-A).

The paper separates protocol correctness (the reference model) from performance measurement (a C
implementation of the per-report path) and ties them with 149 differential vectors
(``tests/vectors/amort_differential/``, ``pqlab amort-vectors``). Both implementations here take the same
calls and must give the same outputs and state, byte for byte. Pick one with ``path``:
``"reference"`` (a thin adapter over :class:`pqlab.amort.controller.Controller`'s own checks, tree and
checkpoint builder) or ``"native"`` (``pqlab.amort.native``: C + OpenSSL libcrypto). Params select it with
``amort.controller_path``; :func:`resolve_controller_path` says which path is actually used and why.

Controller (verifier) side::

    ctl = open_controller("native", controller_id=b"CTRL-001", sig_alg="ML-DSA-65")
    ctl.register_epoch(dev_id, epoch, k_evid, tag_len=16, expiry=2**64 - 1, policy_id=1)
    verdicts = ctl.ingest([report_1, report_2, ...])   # or ctl.ingest(frame(reports)): one bytes buffer
    verdicts[0].accepted, verdicts[0].code, verdicts[0].field   # code: an AmortError Code, or None
    verdicts.codes                                     # one octet per report: 0 accepted, else code_number()
    body = ctl.checkpoint_body()                       # the to-be-signed Checkpoint octets (leaves appended)
    signed = ctl.commit(signature)                     # the signed Checkpoint encoding; chains prev_hash
    signed = sign_and_commit(ctl, key, log)            # the same with one signature and one DurableLog fsync
    ctl.tree_size, ctl.root, ctl.index, ctl.prev_hash, ctl.pending, ctl.awaiting_commit
    ctl.last_seen(dev_id), ctl.last_committed(dev_id), ctl.epoch(dev_id), ctl.state()
    ctl.revoke(dev_id)

``ingest`` checks every report exactly as ``Controller.ingest`` does and in the same order — decoding
(TRUNCATED, TRAILING, BAD_DOMAIN, BAD_VERSION, TAGLEN_DOWNGRADE), DEVICE_UNKNOWN / REVOKED, EPOCH_STALE
(epoch, then expiry), TAGLEN_DOWNGRADE (tag length of the epoch), MAC_FAIL, SEQ_DUPLICATE / SEQ_GAP — and
returns one :class:`Verdict` per report instead of raising; ``field`` is the reference model's field name
(with the byte offset for decoding errors, e.g. ``Report.digest@45``). Accepted reports wait in the pending
batch; ``checkpoint_body`` appends them to the RFC 6962 tree, builds one span per (device, epoch) with its
subtree root and the pending EPOCH_CLOSE entries (a device's previous epoch is closed when
``register_epoch`` installs a newer one, and its uncommitted reports are dropped), and returns the octets
to sign. Until ``commit`` (one per body) a second body is refused; ingesting, registering and revoking go
on meanwhile into the next batch. A batch holds at most :data:`MAX_BATCH` reports. The signature is never
checked here: the controller signs its own body, auditors verify it.

Device (prover) side — the unit a control-cycle study times::

    dev = open_device("native", dev_id, epoch, k_evid, chain_seed, tag_len=16, policy_id=1, chain_length=1024)
    report = dev.report(digest, timestamp, flags=0, disclosure_tag=True)
    dev.seq, dev.anchor, dev.chain_key(j), dev.state()

``report`` builds the 83-octet record with the next sequence number, its evidence tag under K_evid and its
disclosure tag under K_seq, and advances the disclosure chain; its output equals
:meth:`pqlab.amort.device.Device.report`'s for the same keys. The C functions behind it are a plain C API
in ``pqlab/amort/native/amort_core.h`` for harnesses written in C.

Errors: a report's rejection is a verdict; a bad argument is a :class:`pqlab.errors.PqlabError` naming the
field (protocol-level ones an :class:`AmortError`: REVOKED, DEVICE_UNKNOWN, EPOCH_STALE, TAGLEN_DOWNGRADE,
CHAIN_FAIL); calls out of order, bad framing and oversized batches are :class:`FastpathError`.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, Code, FastpathError
from pqlab.amort.identity import SigningKey, context
from pqlab.amort.messages import SIG_ALGORITHM_IDS, SIG_ALGORITHMS, TAG_LENGTHS, Checkpoint
from pqlab.errors import ParamsError, PqlabError

PATHS = ("reference", "native")
MAX_BATCH = 1024
"""Most reports one ``ingest`` call takes (a maximal batch); more is a FastpathError naming ``batch``."""
MAX_CHAIN_LENGTH = 1 << 24
CHECKPOINT_CONTEXT = context(Checkpoint)
NO_EXPIRY = (1 << 64) - 1
BatchInput = bytes | bytearray | memoryview | Sequence[bytes]

_NUMBERS: dict[Code, int] = {code: number for number, code in enumerate(Code, start=1)}
_BY_NUMBER: tuple[Code | None, ...] = (None, *Code)


def code_number(code: Code) -> int:
    """The octet that stands for ``code`` in :attr:`Verdicts.codes` (its 1-based position in ``Code``)."""
    return _NUMBERS[Code(code)]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one report: accepted (``code`` None) or the AmortError code and field it was refused with."""

    code: Code | None
    field: str | None = None

    @property
    def accepted(self) -> bool:
        return self.code is None


class Verdicts(Sequence[Verdict]):
    """One verdict per report of a batch; ``codes`` holds one octet per report (0 = accepted)."""

    __slots__ = ("codes", "fields")

    def __init__(self, codes: bytes, fields: dict[int, str]) -> None:
        self.codes = bytes(codes)
        self.fields = fields

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> Verdict: ...
    @overload
    def __getitem__(self, index: slice) -> list[Verdict]: ...
    def __getitem__(self, index: int | slice) -> Verdict | list[Verdict]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]
        return Verdict(_BY_NUMBER[self.codes[i]], self.fields.get(i))

    def __iter__(self) -> Iterator[Verdict]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdicts) and self.codes == other.codes and self.fields == other.fields

    __hash__ = None  # type: ignore[assignment]

    @property
    def n_accepted(self) -> int:
        return self.codes.count(0)

    def __repr__(self) -> str:
        return f"Verdicts({len(self)} reports, {self.n_accepted} accepted)"


def frame(reports: Iterable[bytes]) -> bytes:
    """One batch buffer: each report behind a 2-octet big-endian length."""
    out = bytearray()
    for i, report in enumerate(reports):
        if len(report) > 0xFFFF:
            raise FastpathError(f"report of {len(report)} octets does not fit a 2-octet frame", field=f"batch[{i}]")
        out += len(report).to_bytes(2, "big") + report
    return bytes(out)


def unframe(buffer: bytes | bytearray | memoryview) -> list[bytes]:
    """The reports of a :func:`frame`d buffer; FastpathError naming the offset where a frame breaks off."""
    data = bytes(buffer)
    out, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 2:
            raise FastpathError("frame length cut short", field=f"batch@{pos}")
        n = int.from_bytes(data[pos:pos + 2], "big")
        if n > len(data) - pos - 2:
            raise FastpathError(f"frame of {n} octets, {len(data) - pos - 2} left", field=f"batch@{pos}")
        out.append(data[pos + 2:pos + 2 + n])
        pos += 2 + n
        if len(out) > MAX_BATCH:
            raise FastpathError(f"more than {MAX_BATCH} reports in one batch", field="batch")
    return out


def check_uint(value: Any, bits: int, field: str, low: int = 0) -> int:
    """``value`` as an int in [low, 2^bits), else PqlabError naming ``field`` (bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 1 << bits:
        raise PqlabError(f"must be an integer in [{low}, 2^{bits}), got {value!r}", field=field)
    return value


def check_octets(value: Any, size: int, field: str) -> bytes:
    """``value`` as exactly ``size`` octets, else PqlabError naming ``field``."""
    if not isinstance(value, (bytes, bytearray)) or len(value) != size:
        raise PqlabError(f"must be {size} octets", field=field)
    return bytes(value)


def check_tag_len(tag_len: Any) -> int:
    if isinstance(tag_len, bool) or tag_len not in TAG_LENGTHS:
        raise AmortError(Code.TAGLEN_DOWNGRADE, f"tag length {tag_len!r} is not one of {TAG_LENGTHS}",
                         field="tag_len")
    return int(tag_len)


def sig_alg_id(sig_alg: int | str) -> int:
    """The checkpoint ``sig_alg`` octet for an algorithm name or id (SIG_FAIL when unknown)."""
    if isinstance(sig_alg, str) and sig_alg in SIG_ALGORITHM_IDS:
        return SIG_ALGORITHM_IDS[sig_alg]
    if isinstance(sig_alg, int) and not isinstance(sig_alg, bool) and sig_alg in SIG_ALGORITHMS:
        return sig_alg
    raise AmortError(Code.SIG_FAIL, f"unknown signature algorithm {sig_alg!r}", field="sig_alg")


class BatchController(ABC):
    """The controller's per-report path over batches; see the module docstring for the contract."""

    path: str
    controller_id: bytes
    sig_alg: int

    @abstractmethod
    def register_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, tag_len: int = 16,
                       expiry: int = NO_EXPIRY, policy_id: int = 1) -> None:
        """Install ``epoch`` as the device's current epoch (enrolling an unknown device); closes its previous one."""

    @abstractmethod
    def revoke(self, dev_id: bytes) -> None:
        """Revoke one identity (DEVICE_UNKNOWN / REVOKED if unknown or already revoked)."""

    @abstractmethod
    def ingest(self, batch: BatchInput) -> Verdicts:
        """Check every report of ``batch``; accepted ones join the pending batch."""

    @abstractmethod
    def checkpoint_body(self) -> bytes:
        """Append the pending reports to the tree and return the to-be-signed checkpoint octets."""

    @abstractmethod
    def commit(self, signature: bytes) -> bytes:
        """Attach ``signature`` to the outstanding body; returns the signed checkpoint and chains it."""

    @property
    @abstractmethod
    def tree_size(self) -> int: ...

    @property
    @abstractmethod
    def root(self) -> bytes: ...

    @property
    @abstractmethod
    def index(self) -> int:
        """The index the next checkpoint body will carry."""

    @property
    @abstractmethod
    def prev_hash(self) -> bytes: ...

    @property
    @abstractmethod
    def pending(self) -> int:
        """Accepted reports waiting for the next checkpoint body."""

    @property
    @abstractmethod
    def awaiting_commit(self) -> bool: ...

    @abstractmethod
    def last_seen(self, dev_id: bytes) -> int: ...

    @abstractmethod
    def last_committed(self, dev_id: bytes) -> int: ...

    @abstractmethod
    def epoch(self, dev_id: bytes) -> int: ...

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Every piece of state as plain JSON values (what the differential vectors compare)."""


class ReportDevice(ABC):
    """The device's per-report path: record, evidence tag, disclosure tag, chain step."""

    path: str
    dev_id: bytes
    epoch: int
    tag_len: int
    policy_id: int
    chain_length: int

    @abstractmethod
    def report(self, digest: bytes, timestamp: int, *, flags: int = 0, disclosure_tag: bool = True) -> bytes:
        """The next encoded report (sequence number last + 1)."""

    @abstractmethod
    def chain_key(self, j: int) -> bytes:
        """Disclosure key K_j, 0 <= j <= chain_length (CHAIN_FAIL otherwise)."""

    @property
    @abstractmethod
    def seq(self) -> int:
        """The sequence number of the last report built (0 before the first)."""

    @property
    @abstractmethod
    def anchor(self) -> bytes:
        """K_0, the chain anchor the controller commits in EPOCH_OPEN."""

    def state(self) -> dict[str, Any]:
        return {"seq": self.seq, "anchor": self.anchor.hex()}


class ResolvedPath(NamedTuple):
    """The controller path a run actually uses and why (record both in run metadata)."""

    path: str
    reason: str


def native_status() -> tuple[bool, str]:
    """(available, description) of the C extension."""
    from pqlab.amort import native

    return native.status()


def resolve_controller_path(choice: str) -> ResolvedPath:
    """The path used for ``choice`` (``amort.controller_path``): native falls back to reference only with a
    reason and a RuntimeWarning, never silently."""
    if choice not in PATHS:
        raise ParamsError(f"must be one of {PATHS}, got {choice!r}", field="amort.controller_path")
    if choice == "reference":
        return ResolvedPath("reference", "reference requested")
    ok, why = native_status()
    if ok:
        return ResolvedPath("native", f"native requested and loaded: {why}")
    reason = f"native requested but unavailable ({why}); using the reference model"
    warnings.warn(f"pqlab.amort.fastpath: {reason}", RuntimeWarning, stacklevel=2)
    return ResolvedPath("reference", reason)


def open_controller(path: str, *, controller_id: bytes = b"CTRL-001",
                    sig_alg: int | str = "ML-DSA-65") -> BatchController:
    """A fresh batch controller on ``path`` ("reference" or "native"; native raises FastpathError if not built)."""
    controller_id = check_octets(controller_id, 8, "controller_id")
    alg = sig_alg_id(sig_alg)
    if path == "reference":
        from pqlab.amort.fastpath_reference import ReferenceBatchController

        return ReferenceBatchController(controller_id, alg)
    if path == "native":
        from pqlab.amort.fastpath_native import NativeBatchController

        return NativeBatchController(controller_id, alg)
    raise FastpathError(f"unknown path {path!r}; one of {PATHS}", field="path")


def open_device(path: str, dev_id: bytes, epoch: int, k_evid: bytes, chain_seed: bytes, *, tag_len: int = 16,
                policy_id: int = 1, chain_length: int = 1024) -> ReportDevice:
    """A device in ``epoch`` with evidence key ``k_evid`` and a disclosure chain from ``chain_seed`` (K_L)."""
    args = device_arguments(dev_id, epoch, k_evid, chain_seed, tag_len, policy_id, chain_length)
    if path == "reference":
        from pqlab.amort.fastpath_reference import ReferenceDevice

        return ReferenceDevice(*args)
    if path == "native":
        from pqlab.amort.fastpath_native import NativeDevice

        return NativeDevice(*args)
    raise FastpathError(f"unknown path {path!r}; one of {PATHS}", field="path")


def device_arguments(dev_id: Any, epoch: Any, k_evid: Any, chain_seed: Any, tag_len: Any, policy_id: Any,
                     chain_length: Any) -> tuple[bytes, int, bytes, bytes, int, int, int]:
    """Validated :func:`open_device` arguments (the same checks for both paths)."""
    dev_id = check_octets(dev_id, 8, "dev_id")
    epoch = check_uint(epoch, 32, "epoch", low=1)
    k_evid = check_octets(k_evid, 32, "k_evid")
    tag_len = check_tag_len(tag_len)
    policy_id = check_uint(policy_id, 16, "policy_id")
    if not isinstance(chain_seed, (bytes, bytearray)) or len(chain_seed) != 32 or isinstance(chain_length, bool) \
            or not isinstance(chain_length, int) or chain_length < 1:
        raise AmortError(Code.CHAIN_FAIL, "chain needs a 32-octet seed and length >= 1", field="seed")
    if chain_length > MAX_CHAIN_LENGTH:
        raise PqlabError(f"at most {MAX_CHAIN_LENGTH} keys per epoch", field="chain_length")
    return dev_id, epoch, k_evid, bytes(chain_seed), tag_len, policy_id, chain_length


def epoch_arguments(dev_id: Any, epoch: Any, k_evid: Any, tag_len: Any, expiry: Any,
                    policy_id: Any) -> tuple[bytes, int, bytes, int, int, int]:
    """Validated :meth:`BatchController.register_epoch` arguments (the same checks for both paths)."""
    return (check_octets(dev_id, 8, "dev_id"), check_uint(epoch, 32, "epoch", low=1),
            check_octets(k_evid, 32, "k_evid"), check_tag_len(tag_len), check_uint(expiry, 64, "expiry"),
            check_uint(policy_id, 16, "policy_id"))


def sign_and_commit(ctl: BatchController, key: SigningKey, log: DurableLog | None = None) -> bytes:
    """One checkpoint: body, one signature (pqlab.crypto via ``key``), commit, one durable write."""
    if key.alg_id != ctl.sig_alg:
        raise PqlabError(f"key is {key.algorithm}, the controller signs with {SIG_ALGORITHMS[ctl.sig_alg]}",
                         field="key")
    body = ctl.checkpoint_body()
    data = ctl.commit(key.signer.sign(key.secret, body, CHECKPOINT_CONTEXT))
    if log is not None:
        log.append(data)
    return data
