"""Canonical binary encoding: field kinds, a bounds-checked reader, and a declarative message base class.

A message is a domain tag (one length octet + ASCII tag), a version octet, then its fields in a fixed
order. Decoders reject with a typed :class:`AmortError` naming the field and byte offset: TRUNCATED when
the input ends early, TRAILING when octets follow the message, BAD_DOMAIN / BAD_VERSION for the header.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, Self

from pqlab.amort.errors import AmortError, Code
from pqlab.errors import PqlabError

VERSION = 1


class Reader:
    """Reads an octet string front to back; every short read is TRUNCATED with the offset."""

    def __init__(self, data: bytes, what: str) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise AmortError(Code.TRUNCATED, f"{what} must be bytes, not {type(data).__name__}", field=what)
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def take(self, n: int, field: str) -> bytes:
        if n > len(self.data) - self.pos:
            raise AmortError(Code.TRUNCATED, f"needs {n} octets at offset {self.pos}, "
                             f"{len(self.data) - self.pos} left", field=f"{self.what}.{field}@{self.pos}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def uint(self, width: int, field: str) -> int:
        return int.from_bytes(self.take(width, field), "big")

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise AmortError(Code.TRAILING, f"{len(self.data) - self.pos} octets after the end of the message",
                             field=f"{self.what}@{self.pos}")


class Kind:
    """How one field is written and read."""

    size: int | None = None  # fixed encoded width, when there is one

    def write(self, value: Any, field: str) -> bytes:
        raise NotImplementedError

    def read(self, r: Reader, field: str) -> Any:
        raise NotImplementedError


class Uint(Kind):
    def __init__(self, width: int) -> None:
        self.size = width

    def write(self, value: Any, field: str) -> bytes:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << (8 * self.size):
            raise PqlabError(f"must be an integer in [0, 2^{8 * self.size}), got {value!r}", field=field)
        return value.to_bytes(self.size, "big")

    def read(self, r: Reader, field: str) -> int:
        return r.uint(self.size, field)


class Fixed(Kind):
    def __init__(self, n: int) -> None:
        self.size = n

    def write(self, value: Any, field: str) -> bytes:
        if not isinstance(value, (bytes, bytearray)) or len(value) != self.size:
            raise PqlabError(f"must be {self.size} octets", field=field)
        return bytes(value)

    def read(self, r: Reader, field: str) -> bytes:
        return r.take(self.size, field)


class Var(Kind):
    """A length-prefixed octet string (``width``-octet big-endian length)."""

    def __init__(self, width: int = 2) -> None:
        self.width = width

    def write(self, value: Any, field: str) -> bytes:
        if not isinstance(value, (bytes, bytearray)) or len(value) >= 1 << (8 * self.width):
            raise PqlabError("must be bytes shorter than the length prefix allows", field=field)
        return len(value).to_bytes(self.width, "big") + bytes(value)

    def read(self, r: Reader, field: str) -> bytes:
        return r.take(r.uint(self.width, f"{field}.len"), field)


class Prefixed(Kind):
    """A fixed-width field preceded by one octet holding its width (the record's canonical style)."""

    def __init__(self, inner: Kind) -> None:
        self.inner = inner
        self.size = 1 + inner.size

    def write(self, value: Any, field: str) -> bytes:
        return bytes([self.inner.size]) + self.inner.write(value, field)

    def read(self, r: Reader, field: str) -> Any:
        at = r.pos
        n = r.uint(1, f"{field}.len")
        if n != self.inner.size:
            code = Code.TRUNCATED if n < self.inner.size else Code.TRAILING
            raise AmortError(code, f"length prefix {n}, canonical width is {self.inner.size}",
                             field=f"{r.what}.{field}@{at}")
        return self.inner.read(r, field)


class Hashes(Kind):
    """A list of 32-octet hashes behind a one-octet count."""

    def write(self, value: Any, field: str) -> bytes:
        items = list(value)
        if len(items) > 255 or any(not isinstance(h, (bytes, bytearray)) or len(h) != 32 for h in items):
            raise PqlabError("must be at most 255 hashes of 32 octets", field=field)
        return bytes([len(items)]) + b"".join(bytes(h) for h in items)

    def read(self, r: Reader, field: str) -> tuple[bytes, ...]:
        n = r.uint(1, f"{field}.count")
        return tuple(r.take(32, f"{field}[{i}]") for i in range(n))


class ListOf(Kind):
    """A count (``width`` octets) followed by that many fixed-layout items of class ``item``."""

    def __init__(self, item: type[Struct], width: int) -> None:
        self.item = item
        self.width = width

    def write(self, value: Any, field: str) -> bytes:
        items = list(value)
        if len(items) >= 1 << (8 * self.width) or any(not isinstance(i, self.item) for i in items):
            raise PqlabError(f"must be a list of {self.item.__name__}", field=field)
        return len(items).to_bytes(self.width, "big") + b"".join(i.body() for i in items)

    def read(self, r: Reader, field: str) -> tuple[Any, ...]:
        n = r.uint(self.width, f"{field}.count")
        # Refuse impossible counts before looping, so a hostile count costs nothing.
        if n * self.item.item_size() > len(r.data) - r.pos:
            raise AmortError(Code.TRUNCATED, f"{n} items of {self.item.item_size()} octets do not fit",
                             field=f"{r.what}.{field}@{r.pos}")
        return tuple(self.item.read_body(r, f"{field}[{i}]") for i in range(n))


@dataclasses.dataclass(frozen=True)
class Struct:
    """A dataclass whose ``SPEC`` lists ``(field name, Kind)`` in wire order."""

    SPEC: ClassVar[tuple[tuple[str, Kind], ...]] = ()

    def spec(self) -> tuple[tuple[str, Kind], ...]:
        """This object's wire layout (a message whose layout depends on the wire format overrides it)."""
        return self.SPEC

    def body(self, upto: str | None = None) -> bytes:
        out = []
        for name, kind in self.spec():
            if name == upto:
                break
            out.append(kind.write(getattr(self, name), name))
        return b"".join(out)

    @classmethod
    def item_size(cls) -> int:
        return sum(kind.size for _, kind in cls.SPEC)

    @classmethod
    def read_body(cls, r: Reader, prefix: str = "", spec: tuple[tuple[str, Kind], ...] | None = None,
                  **extra: Any) -> Self:
        """Read the fields of ``spec`` (default ``SPEC``); ``extra`` are dataclass fields not on the wire."""
        values = {name: kind.read(r, f"{prefix}.{name}" if prefix else name) for name, kind in spec or cls.SPEC}
        return cls(**values, **extra)


@dataclasses.dataclass(frozen=True)
class Message(Struct):
    """A top-level message: domain tag, version, fields; ``validate`` adds semantic decode checks."""

    DOMAIN: ClassVar[bytes] = b""
    PREFIXED_VERSION: ClassVar[bool] = False  # the 83-octet record length-prefixes its version too
    SIGNED_FIELD: ClassVar[str | None] = None  # the trailing signature/MAC field excluded from ``tbs``

    @classmethod
    def header(cls) -> bytes:
        version = bytes([1, VERSION]) if cls.PREFIXED_VERSION else bytes([VERSION])
        return bytes([len(cls.DOMAIN)]) + cls.DOMAIN + version

    def encode(self) -> bytes:
        return self.header() + self.body()

    def tbs(self) -> bytes:
        """The octets covered by the signature or MAC: everything before ``SIGNED_FIELD``."""
        return self.header() + self.body(upto=self.SIGNED_FIELD)

    @classmethod
    def read(cls, r: Reader, **options: Any) -> Self:
        """Read header and fields; ``options`` (e.g. ``wire_format``) go to :meth:`read_fields`."""
        start = r.pos
        n = r.uint(1, "domain.len")
        if n != len(cls.DOMAIN):
            raise AmortError(Code.BAD_DOMAIN, f"domain tag length {n}, expected {len(cls.DOMAIN)}",
                             field=f"{r.what}.domain@{start}")
        tag = r.take(n, "domain")
        if tag != cls.DOMAIN:
            raise AmortError(Code.BAD_DOMAIN, f"domain tag {tag!r}, expected {cls.DOMAIN!r}",
                             field=f"{r.what}.domain@{start + 1}")
        if cls.PREFIXED_VERSION:
            at = r.pos
            if r.uint(1, "version.len") != 1:
                raise AmortError(Code.BAD_VERSION, "version length prefix must be 1", field=f"{r.what}.version@{at}")
        at = r.pos
        version = r.uint(1, "version")
        if version != VERSION:
            raise AmortError(Code.BAD_VERSION, f"version {version}, this model speaks {VERSION}",
                             field=f"{r.what}.version@{at}")
        message = cls.read_fields(r, **options)
        message.validate()
        return message

    @classmethod
    def read_fields(cls, r: Reader) -> Self:
        """The fields after the header (a message with several layouts takes the option that picks one)."""
        return cls.read_body(r)

    @classmethod
    def decode(cls, data: bytes, **options: Any) -> Self:
        """Decode exactly one message; anything left over is TRAILING."""
        r = Reader(data, cls.__name__)
        message = cls.read(r, **options)
        r.finish()
        return message

    def validate(self) -> None:
        """Semantic checks a decoder can make without state (override where needed)."""

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)


Decoder = Callable[[bytes], Any]
