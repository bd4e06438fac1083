"""Matter TLV: a canonical encoder and a strict decoder for the full element set.

Layout facts (control byte = tag form << 5 | element type, little-endian fields, minimal widths chosen by
the reference writer) are from connectedhomeip ``src/lib/core/TLVTypes.h`` and ``TLVWriter.cpp``, as
summarised in ``docs/case-encoding.md``. Decoding records the widths it read, so ``encode(decode(b)) == b``
for every well-formed input; elements built by hand get the minimal widths the reference writer picks.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from pqlab.errors import PqlabError

# --------------------------------------------------------------------------------------------- errors


class TLVError(PqlabError):
    """Malformed TLV; ``offset`` is the byte offset where decoding failed (None when encoding)."""

    code = "TLV_MALFORMED"

    def __init__(self, message: str, *, offset: int | None = None, field: str | None = None) -> None:
        self.offset = offset
        where = f"byte {offset}" if offset is not None else field
        super().__init__(message, field=where)


class TLVTruncatedError(TLVError):
    """The input ends inside an element or with a container still open."""

    code = "TLV_TRUNCATED"


class TLVControlByteError(TLVError):
    """A control byte names an unknown element type or an impossible tag form."""

    code = "TLV_BAD_CONTROL_BYTE"


class TLVNestingError(TLVError):
    """An element's tag is not allowed where it appears, or an end-of-container has nothing to close."""

    code = "TLV_BAD_NESTING"


class TLVTrailingBytesError(TLVError):
    """Bytes follow the single top-level element."""

    code = "TLV_TRAILING_BYTES"


class TLVValueError(TLVError):
    """A value is invalid: bad UTF-8, a duplicate structure tag, or an element that cannot be encoded."""

    code = "TLV_BAD_VALUE"


# ----------------------------------------------------------------------------------------------- tags


@dataclass(frozen=True)
class AnonymousTag:
    """No tag (top-level elements, array members, the end-of-container marker)."""

    def __repr__(self) -> str:
        return "ANONYMOUS"


ANONYMOUS = AnonymousTag()


@dataclass(frozen=True)
class ContextTag:
    """A context-specific tag, 0-255 (one byte): every certificate and CASE field uses these."""

    number: int


@dataclass(frozen=True)
class CommonProfileTag:
    """A tag in the Matter common profile; ``width`` 2 or 4 bytes (None: the smallest that fits)."""

    number: int
    width: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ImplicitProfileTag:
    """A profile-specific tag whose profile is implied by the context; ``width`` 2 or 4 bytes."""

    number: int
    width: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FullyQualifiedTag:
    """Vendor id, profile number and tag number; ``width`` 6 or 8 bytes (tag number 2 or 4 bytes)."""

    vendor: int
    profile: int
    number: int
    width: int | None = field(default=None, compare=False)


Tag = AnonymousTag | ContextTag | CommonProfileTag | ImplicitProfileTag | FullyQualifiedTag

# tag-control values (top three bits of the control byte)
_ANON, _CTX, _COMMON2, _COMMON4, _IMPL2, _IMPL4, _FQ6, _FQ8 = range(8)


# ------------------------------------------------------------------------------------------- elements


class ElementType(enum.Enum):
    """The TLV element types (the integer/float/string width is a property of the encoding, not the type)."""

    SIGNED = "signed"
    UNSIGNED = "unsigned"
    BOOL = "bool"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    UTF8 = "utf8"
    BYTES = "bytes"
    NULL = "null"
    STRUCT = "struct"
    ARRAY = "array"
    LIST = "list"


CONTAINERS = (ElementType.STRUCT, ElementType.ARRAY, ElementType.LIST)
_CONTAINER_CODE = {ElementType.STRUCT: 0x15, ElementType.ARRAY: 0x16, ElementType.LIST: 0x17}
_CODE_CONTAINER = {code: kind for kind, code in _CONTAINER_CODE.items()}
_END = 0x18


@dataclass(frozen=True, eq=False, repr=False)
class Element:
    """One TLV element: its type, value (members for containers), tag and, as read, its field width.

    ``width`` is the byte width of an integer's value or of a string's length field; None means the
    smallest width that holds it, which is what the reference writer produces. Width does not take part
    in equality: two elements with the same type, tag and value are equal however they were encoded.
    Equality, hashing and ``repr`` walk the tree iteratively, so decoded trees of any depth work; a list
    given as a container's members is frozen into a tuple, so an element can never contain itself.
    """

    type: ElementType
    value: Any
    tag: Tag = ANONYMOUS
    width: int | None = None
    raw: bytes | None = None  # float bits exactly as read

    def __post_init__(self) -> None:
        if isinstance(self.value, list):
            object.__setattr__(self, "value", tuple(self.value))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Element):
            return NotImplemented
        stack: list[tuple[Any, Any]] = [(self, other)]
        seen: set[tuple[int, int]] = set()
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if isinstance(a, Element) and isinstance(b, Element):
                if (id(a), id(b)) in seen:
                    continue
                seen.add((id(a), id(b)))
                if a.type != b.type or a.tag != b.tag:
                    return False
                a, b = a.value, b.value
                if a is b:
                    continue
            elif isinstance(a, Element) or isinstance(b, Element):
                return False
            if isinstance(a, tuple) and isinstance(b, tuple):
                if len(a) != len(b):
                    return False
                stack.extend(zip(a, b, strict=True))
            elif isinstance(a, tuple) or isinstance(b, tuple) or not a == b:
                return False
        return True

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        done: dict[int, int] = {}
        open_: set[int] = set()
        stack: list[tuple[Element, bool]] = [(self, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in done:
                continue
            members = node.value if isinstance(node.value, tuple) else None
            if members is not None and not ready:
                if id(node) in open_:
                    raise ValueError("cannot hash a TLV element that contains itself")
                open_.add(id(node))
                stack.append((node, True))
                stack.extend((m, False) for m in members if isinstance(m, Element) and id(m) not in done)
                continue
            open_.discard(id(node))
            value = hash(tuple(done[id(m)] if isinstance(m, Element) else hash(m) for m in members)) \
                if members is not None else hash(node.value)
            done[id(node)] = hash((node.type, node.tag, value))
        return done[id(self)]

    def __repr__(self) -> str:
        out: list[str] = []
        open_: set[int] = set()
        stack: list[tuple[str, Any]] = [("obj", self)]
        while stack:
            kind, item = stack.pop()
            if kind == "text":
                out.append(item)
            elif kind == "close":
                open_.discard(item)
            elif isinstance(item, Element):
                if id(item) in open_:
                    out.append("Element(...)")
                    continue
                open_.add(id(item))
                out.append(f"Element(type={item.type!r}, value=")
                stack += [("close", id(item)), ("text", f", tag={item.tag!r}, width={item.width!r})")]
                stack.append(("obj", item.value))
            elif isinstance(item, tuple):
                stack.append(("text", ",)" if len(item) == 1 else ")"))
                for index in range(len(item) - 1, -1, -1):
                    stack.append(("obj", item[index]))
                    if index:
                        stack.append(("text", ", "))
                stack.append(("text", "("))
            else:
                out.append(repr(item))
        return "".join(out)

    def member(self, number: int) -> Element | None:
        """The member with context tag ``number`` of a structure or list, or None."""
        for child in self.value if self.type in CONTAINERS else ():
            if child.tag == ContextTag(number):
                return child
        return None

    def replace_member(self, number: int, new: Element | None) -> Element:
        """A copy of this container with the member tagged ``number`` replaced (or removed when None)."""
        members = []
        for child in self.value:
            if child.tag == ContextTag(number):
                if new is not None:
                    members.append(new)
            else:
                members.append(child)
        return Element(self.type, tuple(members), self.tag)


# Builders: short names for hand-written element trees.
def _tag(tag: Tag | int | None) -> Tag:
    if tag is None:
        return ANONYMOUS
    if isinstance(tag, int) and not isinstance(tag, bool):
        return ContextTag(tag)
    return tag


def uint(value: int, tag: Tag | int | None = None, width: int | None = None) -> Element:
    return Element(ElementType.UNSIGNED, value, _tag(tag), width)


def sint(value: int, tag: Tag | int | None = None, width: int | None = None) -> Element:
    return Element(ElementType.SIGNED, value, _tag(tag), width)


def boolean(value: bool, tag: Tag | int | None = None) -> Element:
    """A boolean element; ``value`` must be True or False (``encode`` refuses anything else, e.g. 2)."""
    return Element(ElementType.BOOL, value, _tag(tag))


def null(tag: Tag | int | None = None) -> Element:
    return Element(ElementType.NULL, None, _tag(tag))


def _as_float(value: Any) -> Any:
    """Integers become floats; anything else is kept for ``encode`` to refuse."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**1023 \
        else value


def float32(value: float, tag: Tag | int | None = None) -> Element:
    return Element(ElementType.FLOAT32, _as_float(value), _tag(tag))


def float64(value: float, tag: Tag | int | None = None) -> Element:
    return Element(ElementType.FLOAT64, _as_float(value), _tag(tag))


def utf8(value: str, tag: Tag | int | None = None) -> Element:
    return Element(ElementType.UTF8, value, _tag(tag))


def octets(value: bytes, tag: Tag | int | None = None) -> Element:
    """An octet string; ``value`` must be bytes-like (``bytes(5)`` would silently be five zero bytes)."""
    return Element(ElementType.BYTES, bytes(value) if isinstance(value, bytes | bytearray | memoryview) else value,
                   _tag(tag))


def structure(tag: Tag | int | None, *members: Element) -> Element:
    return Element(ElementType.STRUCT, tuple(members), _tag(tag))


def array(tag: Tag | int | None, *members: Element) -> Element:
    return Element(ElementType.ARRAY, tuple(members), _tag(tag))


def tlv_list(tag: Tag | int | None, *members: Element) -> Element:
    return Element(ElementType.LIST, tuple(members), _tag(tag))


# ------------------------------------------------------------------------------------------- encoding

_WIDTH_CODE = {1: 0, 2: 1, 4: 2, 8: 3}
_UFMT = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}
_SFMT = {1: "<b", 2: "<h", 4: "<i", 8: "<q"}
_SCALAR_CODES = {ElementType.SIGNED: 0x00, ElementType.UNSIGNED: 0x04, ElementType.UTF8: 0x0C,
                 ElementType.BYTES: 0x10}


def _min_unsigned_width(value: int) -> int:
    return 1 if value <= 0xFF else 2 if value <= 0xFFFF else 4 if value <= 0xFFFFFFFF else 8


def _min_signed_width(value: int) -> int:
    for width in (1, 2, 4):
        if -(1 << (8 * width - 1)) <= value < (1 << (8 * width - 1)):
            return width
    return 8


def _fail(message: str, path: str) -> TLVValueError:
    return TLVValueError(message, field=path or "element")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_tag(tag: Any, path: str) -> None:
    """A tag of one of the five tag classes with integer fields and a legal width, or a TLVValueError."""
    kind = type(tag)
    # the two tags every CASE message is made of, checked without the generic walk (a size sweep meets millions)
    if kind is AnonymousTag or (kind is ContextTag and type(tag.number) is int):
        return
    if not isinstance(tag, AnonymousTag | ContextTag | CommonProfileTag | ImplicitProfileTag | FullyQualifiedTag):
        raise _fail(f"not a tag: {type(tag).__name__}", path)
    numbers = [getattr(tag, name) for name in ("number", "vendor", "profile") if hasattr(tag, name)]
    if not all(_is_int(n) for n in numbers):
        raise _fail(f"tag fields must be integers: {tag!r}", path)
    width = getattr(tag, "width", None)
    if width is not None and not _is_int(width):
        raise _fail(f"tag width must be an integer: {tag!r}", path)


def _encode_tag(tag: Tag, type_code: int, path: str) -> bytes:
    _check_tag(tag, path)
    if isinstance(tag, AnonymousTag):
        return bytes([type_code])
    if isinstance(tag, ContextTag):
        if not 0 <= tag.number <= 0xFF:
            raise _fail(f"context tag {tag.number} outside 0-255", path)
        return bytes([_CTX << 5 | type_code, tag.number])
    if isinstance(tag, CommonProfileTag | ImplicitProfileTag):
        width = tag.width or (2 if 0 <= tag.number <= 0xFFFF else 4)
        if width not in (2, 4) or not 0 <= tag.number < (1 << (8 * width)):
            raise _fail(f"profile tag number {tag.number} does not fit {width} bytes", path)
        form = (_COMMON2 if isinstance(tag, CommonProfileTag) else _IMPL2) + (width == 4)
        return bytes([form << 5 | type_code]) + struct.pack(_UFMT[width], tag.number)
    width = tag.width or (6 if 0 <= tag.number <= 0xFFFF else 8)
    if width not in (6, 8) or not 0 <= tag.number < (1 << (8 * (width - 4))):
        raise _fail(f"tag number {tag.number} does not fit a {width}-byte fully qualified tag", path)
    if not (0 <= tag.vendor <= 0xFFFF and 0 <= tag.profile <= 0xFFFF):
        raise _fail("vendor id and profile number must be 0-65535", path)
    return (bytes([(_FQ6 + (width == 8)) << 5 | type_code]) + struct.pack("<HH", tag.vendor, tag.profile)
            + struct.pack(_UFMT[width - 4], tag.number))


def _encode_scalar(element: Element, path: str) -> bytes:
    kind, value = element.type, element.value
    if element.width is not None and not _is_int(element.width):
        raise _fail(f"width must be an integer or None, not {type(element.width).__name__}", path)
    if kind is ElementType.BOOL:
        if not isinstance(value, bool):
            raise _fail("boolean value must be bool", path)
        return _encode_tag(element.tag, 0x09 if value else 0x08, path)
    if kind is ElementType.NULL:
        if value is not None:
            raise _fail("a null element has no value", path)
        return _encode_tag(element.tag, 0x14, path)
    if kind in (ElementType.FLOAT32, ElementType.FLOAT64):
        if not isinstance(value, float):
            raise _fail("float value must be float", path)
        fmt, code = ("<f", 0x0A) if kind is ElementType.FLOAT32 else ("<d", 0x0B)
        raw = element.raw
        if raw is not None and not (isinstance(raw, bytes) and len(raw) == struct.calcsize(fmt)):
            raise _fail(f"raw float bits must be {struct.calcsize(fmt)} bytes", path)
        if raw is None or not _same_float(struct.unpack(fmt, raw)[0], value):
            try:
                raw = struct.pack(fmt, value)
            except OverflowError as exc:
                raise _fail(f"{value!r} does not fit a float32", path) from exc
        return _encode_tag(element.tag, code, path) + raw
    if kind in (ElementType.SIGNED, ElementType.UNSIGNED):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail("integer value must be int", path)
        signed = kind is ElementType.SIGNED
        if (signed and not -(1 << 63) <= value < (1 << 63)) or (not signed and not 0 <= value < (1 << 64)):
            raise _fail(f"{value} outside the {kind.value} 64-bit range", path)
        width = element.width or (_min_signed_width(value) if signed else _min_unsigned_width(value))
        if width not in _WIDTH_CODE:
            raise _fail(f"integer width {width} is not 1, 2, 4 or 8", path)
        try:
            payload = struct.pack((_SFMT if signed else _UFMT)[width], value)
        except struct.error as exc:
            raise _fail(f"{value} does not fit {width} bytes", path) from exc
        return _encode_tag(element.tag, _SCALAR_CODES[kind] | _WIDTH_CODE[width], path) + payload
    if kind in (ElementType.UTF8, ElementType.BYTES):
        if kind is ElementType.UTF8:
            if not isinstance(value, str):
                raise _fail("UTF-8 string value must be str", path)
            try:
                payload = value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise _fail("string is not encodable as UTF-8", path) from exc
        else:
            if not isinstance(value, bytes | bytearray | memoryview):
                raise _fail("octet string value must be bytes", path)
            payload = bytes(value)
        width = element.width or _min_unsigned_width(len(payload))
        if width not in _WIDTH_CODE or len(payload) >= (1 << (8 * width)):
            raise _fail(f"length {len(payload)} does not fit a {width}-byte length field", path)
        return (_encode_tag(element.tag, _SCALAR_CODES[kind] | _WIDTH_CODE[width], path)
                + struct.pack(_UFMT[width], len(payload)) + payload)
    raise _fail(f"unknown element type {kind!r}", path)


def _same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def _check_member_tag(parent: ElementType | None, tag: Tag, path: str) -> None:
    if parent is ElementType.ARRAY and not isinstance(tag, AnonymousTag):
        raise TLVValueError("array members must be anonymous", field=path)
    if parent is ElementType.STRUCT and isinstance(tag, AnonymousTag):
        raise TLVValueError("structure members must be tagged", field=path)
    if parent is None and isinstance(tag, ContextTag):
        raise TLVValueError("a context tag is only valid inside a structure or list", field=path)


def encode(element: Element) -> bytes:
    """The TLV bytes of ``element`` (iterative, so decoded trees of any depth re-encode).

    Anything that cannot be encoded — a wrong type anywhere in the tree, an out-of-range value or tag, a
    misplaced tag, a duplicate structure tag, an element that contains itself — is a TLVValueError naming
    the member's path; nothing else is raised.
    """
    return _encode(element, None)


def encode_with_member_sizes(element: Element) -> tuple[bytes, list[int]]:
    """``encode(element)`` and the bytes each direct member of the container ``element`` takes in it (as
    :func:`member_size` gives them), from the one pass: a message's field breakdown costs no second encoding."""
    starts: list[int] = []
    encoded = _encode(element, starts)
    if element.type not in CONTAINERS:
        raise TLVValueError("only a container has members", field="element")
    ends = [*starts[1:], len(encoded) - 1] if starts else []  # the last ends at the end-of-container byte
    return encoded, [end - start for start, end in zip(starts, ends, strict=True)]


def _encode(element: Element, member_starts: list[int] | None) -> bytes:
    """The encoder; ``member_starts`` (when given) receives the offset where each direct member of the root
    begins."""
    if not isinstance(element, Element):
        raise TLVValueError(f"expected an Element, got {type(element).__name__}", field="element")
    out = bytearray()
    # stack items: ("open", element, parent type, path) or ("close", element)
    stack: list[tuple[Any, ...]] = [("open", element, None, "")]
    seen_tags: list[set[Tag]] = []
    open_ids: set[int] = set()
    while stack:
        item = stack.pop()
        if item[0] == "close":
            out.append(_END)
            seen_tags.pop()
            open_ids.discard(id(item[1]))
            continue
        _, node, parent, path = item
        where = path or "element"
        if member_starts is not None and len(seen_tags) == 1:  # a direct member of the root: its first byte
            member_starts.append(len(out))
        if not isinstance(node, Element):
            raise TLVValueError(f"expected an Element, got {type(node).__name__}", field=where)
        _check_tag(node.tag, where)
        if not isinstance(node.type, ElementType):
            raise TLVValueError(f"unknown element type {node.type!r}", field=where)
        _check_member_tag(parent, node.tag, where)
        if parent is ElementType.STRUCT:
            if node.tag in seen_tags[-1]:
                raise TLVValueError(f"duplicate tag {node.tag!r} in a structure", field=where)
            seen_tags[-1].add(node.tag)
        if node.type in CONTAINERS:
            if not isinstance(node.value, tuple | list):
                raise TLVValueError("container value must be a tuple of Elements", field=where)
            if id(node) in open_ids:
                raise TLVValueError("the element contains itself (a cycle)", field=where)
            open_ids.add(id(node))
            out += _encode_tag(node.tag, _CONTAINER_CODE[node.type], where)
            seen_tags.append(set())
            stack.append(("close", node))
            members = tuple(node.value)
            for index in range(len(members) - 1, -1, -1):
                stack.append(("open", members[index], node.type, f"{path}[{index}]"))
        else:
            out += _encode_scalar(node, where)
    return bytes(out)


# ------------------------------------------------------------------------------------------- decoding


class _Open:
    """A container being decoded."""

    __slots__ = ("kind", "members", "offset", "seen", "tag")

    def __init__(self, kind: ElementType, tag: Tag, offset: int) -> None:
        self.kind, self.tag, self.offset = kind, tag, offset
        self.members: list[Element] = []
        self.seen: set[Tag] = set()


def _need(data: bytes, pos: int, count: int, what: str, start: int) -> None:
    if pos + count > len(data):
        raise TLVTruncatedError(f"{what} needs {count} byte(s), {len(data) - pos} left (element at byte {start})",
                                offset=pos)


def decode(data: bytes) -> Element:
    """Decode exactly one top-level TLV element; raises a TLVError subclass naming the byte offset."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TLVValueError(f"expected bytes, got {type(data).__name__}", field="data")
    data = bytes(data)
    if not data:
        raise TLVTruncatedError("empty input: no element", offset=0)
    pos = 0
    stack: list[_Open] = []
    root: Element | None = None
    while root is None:
        if pos >= len(data):
            raise TLVTruncatedError(f"container opened at byte {stack[-1].offset} is not closed", offset=pos)
        start = pos
        control = data[pos]
        form, code = control >> 5, control & 0x1F
        if code > _END:
            raise TLVControlByteError(f"control byte 0x{control:02x}: unknown element type 0x{code:02x}",
                                      offset=pos)
        if code == _END:
            if form != _ANON:
                raise TLVControlByteError(f"control byte 0x{control:02x}: end of container must be anonymous",
                                          offset=pos)
            if not stack:
                raise TLVNestingError("end of container with no open container", offset=pos)
            pos += 1
            closed = stack.pop()
            element = Element(closed.kind, tuple(closed.members), closed.tag)
        else:
            pos += 1
            tag, pos = _read_tag(data, pos, form, start)
            parent = stack[-1] if stack else None
            _check_decoded_tag(parent, tag, start)
            if code in _CODE_CONTAINER:
                stack.append(_Open(_CODE_CONTAINER[code], tag, start))
                continue
            element, pos = _read_scalar(data, pos, code, tag, start)
        if stack:
            stack[-1].members.append(element)
        else:
            root = element
    if pos != len(data):
        raise TLVTrailingBytesError(f"{len(data) - pos} byte(s) after the top-level element", offset=pos)
    return root


def _check_decoded_tag(parent: _Open | None, tag: Tag, offset: int) -> None:
    if parent is None:
        if isinstance(tag, ContextTag):
            raise TLVNestingError("context tag outside a structure or list", offset=offset)
        return
    if parent.kind is ElementType.ARRAY and not isinstance(tag, AnonymousTag):
        raise TLVNestingError(f"tagged element inside the array opened at byte {parent.offset}", offset=offset)
    if parent.kind is ElementType.STRUCT:
        if isinstance(tag, AnonymousTag):
            raise TLVNestingError(f"anonymous element inside the structure opened at byte {parent.offset}",
                                  offset=offset)
        if tag in parent.seen:
            raise TLVValueError(f"duplicate tag {tag!r} in the structure opened at byte {parent.offset}",
                                offset=offset)
        parent.seen.add(tag)


def _read_tag(data: bytes, pos: int, form: int, start: int) -> tuple[Tag, int]:
    if form == _ANON:
        return ANONYMOUS, pos
    if form == _CTX:
        _need(data, pos, 1, "context tag", start)
        return ContextTag(data[pos]), pos + 1
    if form in (_COMMON2, _COMMON4, _IMPL2, _IMPL4):
        width = 2 if form in (_COMMON2, _IMPL2) else 4
        _need(data, pos, width, "profile tag", start)
        number = int.from_bytes(data[pos:pos + width], "little")
        cls = CommonProfileTag if form in (_COMMON2, _COMMON4) else ImplicitProfileTag
        return cls(number, width), pos + width
    width = 6 if form == _FQ6 else 8
    _need(data, pos, width, "fully qualified tag", start)
    vendor, profile = struct.unpack_from("<HH", data, pos)
    number = int.from_bytes(data[pos + 4:pos + width], "little")
    return FullyQualifiedTag(vendor, profile, number, width), pos + width


def _read_scalar(data: bytes, pos: int, code: int, tag: Tag, start: int) -> tuple[Element, int]:
    if code <= 0x07:
        width = 1 << (code & 0x03)
        _need(data, pos, width, "integer value", start)
        signed = code <= 0x03
        value = int.from_bytes(data[pos:pos + width], "little", signed=signed)
        kind = ElementType.SIGNED if signed else ElementType.UNSIGNED
        return Element(kind, value, tag, width), pos + width
    if code in (0x08, 0x09):
        return Element(ElementType.BOOL, code == 0x09, tag), pos
    if code in (0x0A, 0x0B):
        width, fmt = (4, "<f") if code == 0x0A else (8, "<d")
        _need(data, pos, width, "float value", start)
        raw = data[pos:pos + width]
        kind = ElementType.FLOAT32 if code == 0x0A else ElementType.FLOAT64
        return Element(kind, struct.unpack(fmt, raw)[0], tag, width, raw), pos + width
    if code == 0x14:
        return Element(ElementType.NULL, None, tag), pos
    # strings 0x0C-0x13
    width = 1 << (code & 0x03)
    _need(data, pos, width, "string length", start)
    length = int.from_bytes(data[pos:pos + width], "little")
    pos += width
    _need(data, pos, length, "string data", start)
    payload = data[pos:pos + length]
    if code <= 0x0F:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TLVValueError(f"invalid UTF-8 in string: {exc.reason}", offset=pos + exc.start) from None
        return Element(ElementType.UTF8, text, tag, width), pos + length
    return Element(ElementType.BYTES, payload, tag, width), pos + length


def member_size(element: Element) -> int:
    """Bytes a tagged member takes inside its container: encoded in a structure, minus the structure's 2 bytes
    (``encode_with_member_sizes`` gives every member's from the container's own encoding)."""
    return len(encode(structure(None, element))) - 2
