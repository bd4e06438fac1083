"""Hypothesis strategies for Matter TLV elements shared by the codec and differential tests."""

from __future__ import annotations

from hypothesis import strategies as st

from pqlab.case import tlv

scalars = st.one_of(
    st.integers(0, (1 << 64) - 1).map(tlv.uint),
    st.integers(-(1 << 63), (1 << 63) - 1).map(tlv.sint),
    st.booleans().map(tlv.boolean),
    st.floats(width=32, allow_nan=False).map(tlv.float32),
    st.floats(allow_nan=False).map(tlv.float64),
    st.text(max_size=20).map(tlv.utf8),
    st.binary(max_size=300).map(tlv.octets),
    st.just(tlv.null()),
)
