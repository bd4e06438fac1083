"""The batch fast path's shared interface: verdicts, argument checks, framing, and the two abstract classes.

Both implementations (:mod:`pqlab.amort.fastpath.reference`, :mod:`pqlab.amort.fastpath.native.adapter`) subclass
:class:`BatchController` and :class:`ReportDevice` from here; :mod:`pqlab.amort.fastpath.api` picks one. Imports run
one way: base <- implementations <- fastpath.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from pqlab.amort.chain import MAX_CHAIN_LENGTH
from pqlab.amort.controller import Clock
from pqlab.amort.deployment import Deployment
from pqlab.amort.errors import AmortError, ClockRequired, Code, FastpathError
from pqlab.amort.identity import context
from pqlab.amort.messages import SIG_ALGORITHM_IDS, SIG_ALGORITHMS, TAG_LENGTHS, Checkpoint
from pqlab.amort.profile import Profile
from pqlab.errors import PqlabError

PATHS = ("reference", "native")
MAX_BATCH = 1024
"""Most reports one ``ingest`` call takes (a maximal batch); more is a FastpathError naming ``batch``."""
NO_EXPIRY = (1 << 64) - 1


def checkpoint_context(profile: Profile) -> bytes:
    """The FIPS 204/205 context a checkpoint of ``profile`` is signed under."""
    return context(Checkpoint, profile)
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

    def __init__(self, deployment: Deployment, sig_alg: int, clock: Clock | None) -> None:
        self.deployment = deployment
        self.controller_id = deployment.controller_id
        self.sig_alg = sig_alg
        self.profile = deployment.profile
        self.clock = clock

    def now(self, now: Any = None) -> int:
        """The time a batch is judged at: ``now`` (checked) or the controller's clock; ClockRequired with neither."""
        if now is None:
            if self.clock is None:
                raise ClockRequired("this controller has no clock: pass now= to ingest or clock= to "
                                    "open_controller", field="now")
            now = self.clock()
        return check_uint(now, 64, "now")

    @abstractmethod
    def register_epoch(self, dev_id: bytes, epoch: int, k_evid: bytes, *, not_before: int, tag_len: int = 16,
                       expiry: int = NO_EXPIRY, policy_id: int = 1) -> None:
        """Install ``epoch`` as the device's current epoch (enrolling an unknown device); closes its previous one.
        ``not_before`` (required): the epoch's open time — an earlier record timestamp is EPOCH_STALE."""

    @abstractmethod
    def revoke(self, dev_id: bytes) -> None:
        """Revoke one identity (DEVICE_UNKNOWN / REVOKED if unknown or already revoked)."""

    @abstractmethod
    def ingest(self, batch: BatchInput, *, now: int | None = None) -> Verdicts:
        """Check every report of ``batch`` at ``now`` (ms, the timestamps' clock; default: the controller's clock,
        ClockRequired without one); accepted ones join the pending batch. A report older than the deployment's
        ``max_report_age`` is EPOCH_STALE."""

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
    def device(self, dev_id: bytes) -> dict[str, Any]:
        """One registered device's state as plain JSON values (DEVICE_UNKNOWN when it is not registered)."""

    def last_seen(self, dev_id: bytes) -> int:
        return self.device(dev_id)["last_seen"]

    def last_committed(self, dev_id: bytes) -> int:
        return self.device(dev_id)["last_committed"]

    def epoch(self, dev_id: bytes) -> int:
        return self.device(dev_id)["epoch"]

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Every piece of state as plain JSON values (what the differential vectors compare)."""


class ReportDevice(ABC):
    """The device's per-report path: record, evidence tag, disclosure tag, chain step."""

    path: str

    def __init__(self, dev_id: bytes, epoch: int, tag_len: int, policy_id: int, chain_length: int,
                 profile: Profile) -> None:
        self.dev_id, self.epoch, self.tag_len, self.policy_id = dev_id, epoch, tag_len, policy_id
        self.chain_length, self.profile = chain_length, profile

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


def device_arguments(dev_id: Any, epoch: Any, k_evid: Any, chain_seed: Any, tag_len: Any, policy_id: Any,
                     chain_length: Any, next_seq: Any = 1) -> tuple[bytes, int, bytes, bytes, int, int, int, int]:
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
    next_seq = check_uint(next_seq, 64, "next_seq", low=1)
    return dev_id, epoch, k_evid, bytes(chain_seed), tag_len, policy_id, chain_length, next_seq


def epoch_arguments(dev_id: Any, epoch: Any, k_evid: Any, tag_len: Any, expiry: Any, policy_id: Any,
                    not_before: Any) -> tuple[bytes, int, bytes, int, int, int, int]:
    """Validated :meth:`BatchController.register_epoch` arguments (the same checks for both paths)."""
    return (check_octets(dev_id, 8, "dev_id"), check_uint(epoch, 32, "epoch", low=1),
            check_octets(k_evid, 32, "k_evid"), check_tag_len(tag_len), check_uint(expiry, 64, "expiry"),
            check_uint(policy_id, 16, "policy_id"), check_uint(not_before, 64, "not_before"))


def controller_arguments(deployment: Any, sig_alg: Any, clock: Any) -> tuple[Deployment, int, Clock | None]:
    """Validated :func:`open_controller` arguments (the same checks for both paths)."""
    if not isinstance(deployment, Deployment):
        raise PqlabError(f"must be a Deployment, got {type(deployment).__name__}", field="deployment")
    if clock is not None and not callable(clock):
        raise PqlabError("must be a callable returning the time in ms, or None", field="clock")
    return deployment, sig_alg_id(sig_alg), clock
