"""Differential test: pqlab's TLV encoder agrees byte for byte with the Matter reference Python writer (chip.tlv)."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.case import tlv
from pqlab.case.tlv import ANONYMOUS, CommonProfileTag, ContextTag, Element, ElementType, FullyQualifiedTag
from tests.tlv_strategies import scalars

chip_tlv = pytest.importorskip(
    "chip.tlv", reason="chip.tlv (home-assistant-chip-clusters, test dependency) is not installed")


def _chip_tag(tag):
    if tag == ANONYMOUS:
        return None
    if isinstance(tag, ContextTag):
        return tag.number
    if isinstance(tag, CommonProfileTag):
        return (0, tag.number)
    if isinstance(tag, FullyQualifiedTag):
        return (tag.vendor << 16 | tag.profile, tag.number)
    return (None, tag.number)  # implicit profile


def _chip_value(element: Element):
    kind, value = element.type, element.value
    if kind is ElementType.UNSIGNED:
        return chip_tlv.uint(value)
    if kind is ElementType.FLOAT32:
        return chip_tlv.float32(value)
    if kind is ElementType.STRUCT:
        return OrderedDict((_chip_tag(m.tag), _chip_value(m)) for m in value)
    if kind is ElementType.ARRAY:
        return [_chip_value(m) for m in value]
    if kind is ElementType.LIST:
        return chip_tlv.tlvlist.TLVList([(_chip_tag(m.tag), _chip_value(m)) for m in value])
    return value  # signed int, bool, float64, str, bytes, None map directly


# chip.tlv cannot write 8-byte fully qualified tags (its struct.pack call has one argument too many), and
# writes vendor 0 / profile 0 as a common-profile tag, so generated tags stay within what it writes correctly.
_tags = st.one_of(
    st.integers(0, 255).map(ContextTag),
    st.integers(0, (1 << 32) - 1).map(CommonProfileTag),
    st.integers(0, (1 << 32) - 1).map(tlv.ImplicitProfileTag),
    st.builds(FullyQualifiedTag, st.integers(1, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)),
)
_scalars = scalars


@st.composite
def _container(draw, children):
    kind = draw(st.sampled_from([ElementType.STRUCT, ElementType.ARRAY, ElementType.LIST]))
    items = draw(st.lists(children, max_size=5))
    if kind is ElementType.ARRAY:
        return Element(kind, tuple(items))
    # chip's TLVList takes only context or anonymous tags
    member_tags = _tags if kind is ElementType.STRUCT else st.one_of(st.just(ANONYMOUS), st.integers(0, 255).map(
        ContextTag))
    tags = draw(st.lists(member_tags, min_size=len(items), max_size=len(items), unique=kind is ElementType.STRUCT))
    return Element(kind, tuple(Element(e.type, e.value, t) for e, t in zip(items, tags, strict=True)))


@given(st.recursive(_scalars, _container, max_leaves=20))
def test_encoder_matches_the_reference_python_writer(tree):
    writer = chip_tlv.TLVWriter()
    writer.put(None, _chip_value(tree))
    assert tlv.encode(tree) == bytes(writer.encoding)


def test_reference_reader_reads_our_certificates(vectors):
    document = json.loads((vectors / "matter" / "chip_cert_vectors.json").read_text())
    node = bytes.fromhex(next(c for c in document["certs"] if c["name"] == "Node01_01")["tlv_hex"])
    ours = tlv.decode(node)
    theirs = chip_tlv.TLVReader(node).get()["Any"]
    assert theirs[1] == ours.member(1).value and theirs[9] == ours.member(9).value
    assert theirs[4] == ours.member(4).value
