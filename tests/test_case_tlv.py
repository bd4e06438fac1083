"""Matter TLV codec: worked examples, every certificate vector round-trips, and malformed input raises TLVError only."""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqlab.case import tlv
from pqlab.case.tlv import (
    ANONYMOUS,
    CommonProfileTag,
    ContextTag,
    Element,
    ElementType,
    FullyQualifiedTag,
    ImplicitProfileTag,
    TLVControlByteError,
    TLVError,
    TLVNestingError,
    TLVTrailingBytesError,
    TLVTruncatedError,
    TLVValueError,
)
from tests.conftest import FUZZ
from tests.tlv_strategies import scalars

# --------------------------------------------------------------------------------------- vectors


def _vectors(vectors):
    document = json.loads((vectors / "matter" / "chip_cert_vectors.json").read_text())
    blobs = [(c["name"], bytes.fromhex(c["tlv_hex"]), c["tlv_len"]) for c in document["certs"]]
    blobs += [(c["name"], bytes.fromhex(c["tlv_hex"]), c["tlv_len"]) for c in document["supplementary_certs"]["certs"]]
    newer = document["pdcid01_compact_newer_variant"]
    blobs.append(("PDCID01_ChipCompact (re-signed)", bytes.fromhex(newer["tlv_hex"]), newer["tlv_len"]))
    return document, blobs


def test_every_certificate_vector_round_trips_byte_identically(vectors):
    document, blobs = _vectors(vectors)
    assert len(blobs) == document["counts"]["tlv_blobs"] + 10 + 1  # 20 main + 10 supplementary + 1 variant
    for name, blob, length in blobs:
        assert len(blob) == length, name
        element = tlv.decode(blob)
        assert element.type is ElementType.STRUCT and element.tag == ANONYMOUS, name
        assert tlv.encode(element) == blob, name


def test_the_papers_19_vectors_round_trip(vectors):
    document, _ = _vectors(vectors)
    nineteen = [c for c in document["certs"] if c["likely_in_paper_19"]]
    assert len(nineteen) == 19
    for cert in nineteen:
        blob = bytes.fromhex(cert["tlv_hex"])
        assert tlv.encode(tlv.decode(blob)) == blob, cert["name"]


def test_vector_field_sizes_match_the_decoded_members(vectors):
    """Each certificate field's byte count (from the vectors' own notes) equals the encoder's member size."""
    document, _ = _vectors(vectors)
    for cert in document["certs"]:
        element = tlv.decode(bytes.fromhex(cert["tlv_hex"]))
        sizes = [tlv.member_size(m) for m in element.value]
        assert sizes == list(cert["tlv_field_sizes"].values()), cert["name"]


def test_the_malformed_vector_uses_a_common_profile_tag(vectors):
    document, _ = _vectors(vectors)
    err01 = next(c for c in document["certs"] if c["name"] == "Node01_01_Err01")
    extensions = tlv.decode(bytes.fromhex(err01["tlv_hex"])).member(10)
    assert CommonProfileTag(0x04EE) in [m.tag for m in extensions.value]


# ------------------------------------------------------------------------------- worked examples

@pytest.mark.parametrize(("element", "hexbytes"), [
    (tlv.uint(0x1234, 2), "25023412"),
    (tlv.uint(0x42, 2), "240242"),
    (tlv.boolean(True, 1), "2901"),
    (tlv.boolean(False, 1), "2801"),
    (tlv.uint(656087023, 4), "2604ef171b27"),
    (tlv.tlv_list(3, tlv.uint(0xCACACACA00000003, 19)), "37032713030000" + "00cacacaca18"),
    (tlv.octets(b"\x00" * 20, CommonProfileTag(0x04EE)), "50ee0414" + "00" * 20),
    (tlv.sint(-1), "00ff"), (tlv.sint(-129), "017fff"), (tlv.sint(1 << 40), "030000000000010000"),
    (tlv.uint((1 << 64) - 1), "07" + "ff" * 8), (tlv.null(1), "3401"),
    (tlv.float32(1.5), "0a0000c03f"), (tlv.float64(-2.0), "0b00000000000000c0"),
    (tlv.utf8("é"), "0c02c3a9"), (tlv.structure(None), "1518"), (tlv.array(None, tlv.uint(1)), "16040118"),
    (tlv.structure(FullyQualifiedTag(0, 8, 1)), "d5000008000100" + "18"),
    (tlv.uint(7, ImplicitProfileTag(0x12345678)), "a4785634120" + "7"),
])
def test_worked_examples(element, hexbytes):
    if element.tag in (ContextTag(2), ContextTag(1), ContextTag(3), ContextTag(4)) or isinstance(
            element.tag, CommonProfileTag | ImplicitProfileTag):
        encoded = tlv.encode(tlv.structure(None, element))[1:-1]  # context tags live inside a container
    else:
        encoded = tlv.encode(element)
    assert encoded.hex() == hexbytes


def test_byte_string_length_widths_switch_at_256_and_65536():
    for n, header in ((255, 3), (256, 4), (65535, 4), (65536, 6)):
        assert tlv.member_size(tlv.octets(bytes(n), 1)) == n + header


def test_sigma3_framing_example():
    """`15 31 01 65 02 <613 bytes> 18` = 619 bytes (facts doc, example 6)."""
    encoded = tlv.encode(tlv.structure(None, tlv.octets(bytes(613), 1)))
    assert encoded[:5].hex() == "1531016502" and encoded[-1] == 0x18 and len(encoded) == 619


def test_non_minimal_widths_are_preserved_on_round_trip():
    blob = bytes.fromhex("1525010500" + "2702" + "0100000000000000" + "3103" + "0200" + "abcd" + "18")
    element = tlv.decode(blob)
    assert element.member(1).value == 5 and element.member(1).width == 2
    assert tlv.encode(element) == blob
    assert tlv.encode(tlv.structure(None, tlv.uint(5, 1))) == bytes.fromhex("1524010518")  # minimal by default


# --------------------------------------------------------------------------------- typed errors

@pytest.mark.parametrize(("blob", "error", "offset"), [
    ("", TLVTruncatedError, 0),
    ("25", TLVTruncatedError, 1),
    ("1525", TLVTruncatedError, 2),
    ("15240105", TLVTruncatedError, 4),
    ("1019" + "00" * 4, TLVTruncatedError, 2),
    ("19", TLVControlByteError, 0),
    ("1538", TLVControlByteError, 1),
    ("18", TLVNestingError, 0),
    ("15040118", TLVNestingError, 1),
    ("1624010118", TLVNestingError, 1),
    ("2401", TLVNestingError, 0),
    ("0401" + "05", TLVTrailingBytesError, 2),
    ("0c02c328", TLVValueError, 2),
    ("152401012401021" + "8", TLVValueError, 4),
])
def test_malformed_input_raises_a_typed_error_naming_the_offset(blob, error, offset):
    with pytest.raises(error) as caught:
        tlv.decode(bytes.fromhex(blob))
    assert caught.value.offset == offset
    assert f"byte {offset}" in str(caught.value)
    assert caught.value.code.startswith("TLV_")


def test_encoder_rejects_invalid_trees():
    for bad in (tlv.uint(-1), tlv.sint(1 << 63), tlv.uint(300, width=1), tlv.array(None, tlv.uint(1, 1)),
                tlv.structure(None, tlv.uint(1)), tlv.structure(None, tlv.uint(1, 1), tlv.uint(2, 1)),
                Element(ElementType.BYTES, "text"), tlv.uint(1, ContextTag(300)), tlv.uint(1, 1)):
        with pytest.raises(TLVValueError):
            tlv.encode(bad)


def test_deep_nesting_does_not_exhaust_the_stack():
    depth = 50_000
    blob = b"\x16" * depth + b"\x18" * depth
    assert tlv.encode(tlv.decode(blob)) == blob
    with pytest.raises(TLVTruncatedError):
        tlv.decode(b"\x16" * depth)


# ------------------------------------------------------------------------------- property tests

def _tags():
    return st.one_of(
        st.integers(0, 255).map(ContextTag),
        st.integers(0, (1 << 32) - 1).map(CommonProfileTag),
        st.integers(0, (1 << 32) - 1).map(ImplicitProfileTag),
        st.builds(FullyQualifiedTag, st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, (1 << 32) - 1)),
    )


_scalars = scalars


def _with_tag(element: Element, tag) -> Element:
    return Element(element.type, element.value, tag)


@st.composite
def _members(draw, children, tagged: bool, unique: bool):
    items = draw(st.lists(children, max_size=5))
    if not tagged:
        return tuple(items)
    tags = draw(st.lists(_tags(), min_size=len(items), max_size=len(items), unique=unique))
    return tuple(_with_tag(e, t) for e, t in zip(items, tags, strict=True))


def _trees():
    def extend(children):
        return st.one_of(
            _members(children, tagged=True, unique=True).map(lambda m: Element(ElementType.STRUCT, m)),
            _members(children, tagged=False, unique=False).map(lambda m: Element(ElementType.ARRAY, m)),
            _members(children, tagged=True, unique=False).map(lambda m: Element(ElementType.LIST, m)),
            _members(children, tagged=False, unique=False).map(lambda m: Element(ElementType.LIST, m)),
        )
    return st.recursive(_scalars, extend, max_leaves=25)


@given(_trees())
def test_generated_trees_round_trip(tree):
    encoded = tlv.encode(tree)
    assert tlv.decode(encoded) == tree
    assert tlv.encode(tlv.decode(encoded)) == encoded
    if tree.type in tlv.CONTAINERS:
        _check_member_sizes(tree, encoded)


def _alone(member: Element) -> bytes:
    """A member's bytes, encoded on its own inside a one-member container that admits its tag."""
    wrapper = ElementType.ARRAY if member.tag == ANONYMOUS else ElementType.STRUCT
    return tlv.encode(Element(wrapper, (member,)))[1:-1]


def _check_member_sizes(tree: Element, encoded: bytes) -> None:
    """One pass gives the container's own bytes and each member's size: the members' bytes, each encoded alone,
    fill the container between its control byte (and tag) and its end-of-container byte."""
    same, sizes = tlv.encode_with_member_sizes(tree)
    members = [_alone(m) for m in tree.value]
    assert same == encoded
    assert sizes == [len(m) for m in members]
    assert encoded.endswith(b"".join(members) + b"\x18")


def test_member_sizes_of_a_message_and_of_a_scalar():
    sigma = tlv.structure(None, tlv.octets(bytes(32), 1), tlv.uint(0xBEEF, 2), tlv.structure(3, tlv.uint(1, 1)))
    assert tlv.encode_with_member_sizes(sigma) == (tlv.encode(sigma), [2 + 1 + 32, 2 + 2, 2 + 3 + 1])
    assert [tlv.member_size(m) for m in sigma.value] == [35, 4, 6]
    assert tlv.encode_with_member_sizes(tlv.structure(None)) == (b"\x15\x18", [])
    with pytest.raises(TLVValueError, match="only a container"):
        tlv.encode_with_member_sizes(tlv.uint(5))


def _check_decode_or_typed_error(data: bytes) -> None:
    try:
        element = tlv.decode(data)
    except TLVError as exc:
        assert exc.offset is not None and 0 <= exc.offset <= len(data)
        return
    assert tlv.encode(element) == data  # whatever decodes re-encodes to the same bytes


@FUZZ
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_tlverror(data):
    _check_decode_or_typed_error(data)


@given(st.binary(min_size=1, max_size=16).map(lambda b: bytes([0x15]) + b))
def test_arbitrary_bytes_inside_a_structure(data):
    _check_decode_or_typed_error(data)


@pytest.fixture(scope="module")
def certificate_blobs(vectors):
    return [blob for _, blob, _ in _vectors(vectors)[1]]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # certificate_blobs is read-only
@given(data=st.data())
def test_mutated_certificates_decode_or_raise_tlverror(certificate_blobs, data):
    blob = bytearray(data.draw(st.sampled_from(certificate_blobs)))
    mutation = data.draw(st.sampled_from(["flip", "truncate", "insert", "delete", "splice"]))
    position = data.draw(st.integers(0, len(blob) - 1))
    if mutation == "flip":
        blob[position] ^= data.draw(st.integers(1, 255))
    elif mutation == "truncate":
        del blob[position:]
    elif mutation == "insert":
        blob[position:position] = data.draw(st.binary(min_size=1, max_size=4))
    elif mutation == "delete":
        del blob[position:position + data.draw(st.integers(1, 4))]
    else:
        other = data.draw(st.sampled_from(certificate_blobs))
        blob[position:] = other[data.draw(st.integers(0, len(other) - 1)):]
    _check_decode_or_typed_error(bytes(blob))


def test_float_bits_survive_round_trip_including_nan_payloads():
    for raw in (struct.pack("<f", math.inf), bytes.fromhex("0100807f"), bytes.fromhex("00000080")):
        blob = b"\x0a" + raw
        assert tlv.encode(tlv.decode(blob)) == blob
