"""Canonical encodings: the 83-octet record layout, round trips, and typed rejections from every decoder."""

from __future__ import annotations

import pytest

from pqlab.amort.codec import VERSION
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import DECODERS, RECORD_OCTETS, Record, Report
from tests.amort.samples import valid_messages

RECORD = Record(b"PLC-0001", 7, 42, 123_456, bytes(range(32)), 0x0102, 0x03)


def test_record_is_exactly_83_octets_with_the_documented_offsets():
    data = RECORD.encode()
    assert len(data) == RECORD_OCTETS == 83
    assert data[0] == 10 and data[1:11] == b"AMORT.EVID"  # domain tag
    assert data[11:13] == bytes([1, VERSION])  # version
    assert data[13] == 8 and data[14:22] == b"PLC-0001"
    assert data[22] == 4 and int.from_bytes(data[23:27], "big") == 7
    assert data[27] == 8 and int.from_bytes(data[28:36], "big") == 42
    assert data[36] == 8 and int.from_bytes(data[37:45], "big") == 123_456
    assert data[45] == 32 and data[46:78] == bytes(range(32))
    assert data[78] == 2 and data[79:81] == b"\x01\x02"
    assert data[81] == 1 and data[82] == 3
    assert Record.decode(data) == RECORD


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_every_message_round_trips(name):
    data = valid_messages()[name]
    assert type(DECODERS[name](data)).__name__ == name
    assert DECODERS[name](data).encode() == data


def _code(name, data):
    with pytest.raises(AmortError) as info:
        DECODERS[name](data)
    return info.value.code


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_every_decoder_rejects_truncation_trailing_domain_and_version(name):
    data = valid_messages()[name]
    for cut in (0, 1, 5, 11, len(data) // 2, len(data) - 1):
        assert _code(name, data[:cut]) == Code.TRUNCATED
    assert _code(name, data + b"\x00") == Code.TRAILING
    corrupted = bytearray(data)
    corrupted[3] ^= 0x01
    assert _code(name, bytes(corrupted)) == Code.BAD_DOMAIN
    version_at = 12 if name in ("Record", "Report") else 11
    bumped = bytearray(data)
    bumped[version_at] = VERSION + 1
    assert _code(name, bytes(bumped)) == Code.BAD_VERSION


def test_record_length_prefix_must_be_canonical():
    data = bytearray(RECORD.encode())
    data[13] = 7  # dev_id length prefix
    with pytest.raises(AmortError) as info:
        Record.decode(bytes(data))
    assert info.value.code == "TRUNCATED" and "@13" in info.value.field


def test_report_tag_lengths():
    record = RECORD.encode()
    for n in (8, 12, 16):
        assert Report.decode(record + bytes([n]) + bytes(n) + b"\x00").tag == bytes(n)
    for bad in (0, 4, 20, 255):
        with pytest.raises(AmortError) as info:
            Report.decode(record + bytes([bad]) + bytes(bad) + b"\x00")
        assert info.value.code == "TAGLEN_DOWNGRADE"
    with pytest.raises(AmortError) as info:
        Report.decode(record + b"\x10" + bytes(16) + b"\x08" + bytes(8))
    assert info.value.code == "TAGLEN_DOWNGRADE"


def test_error_names_the_field_and_offset():
    with pytest.raises(AmortError) as info:
        Record.decode(RECORD.encode()[:50])
    assert info.value.field.startswith("Record.digest@")
    assert "offset 46" in str(info.value)


def test_protocol_doc_has_a_byte_table_for_every_message(repo_root):
    doc = (repo_root / "docs" / "protocol.md").read_text()
    for name in DECODERS:
        cls = type(DECODERS[name](valid_messages()[name]))
        domain = getattr(cls, "DOMAIN", None)
        if domain:
            assert f"ASCII `{domain.decode()}`" in doc, name
    assert "Total: **83 octets**." in doc
    assert "| 12 | 1 | version | 1 |" in doc  # the record offset the attack case A27 edits
