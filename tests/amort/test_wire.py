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


def test_report_tag_lengths_explicit():
    record = RECORD.encode()
    for n in (8, 12, 16):
        assert Report.decode(record + bytes([n]) + bytes(n) + b"\x00", wire_format="explicit").tag == bytes(n)
    for bad in (0, 4, 20, 255):
        with pytest.raises(AmortError) as info:
            Report.decode(record + bytes([bad]) + bytes(bad) + b"\x00", wire_format="explicit")
        assert info.value.code == "TAGLEN_DOWNGRADE"
    with pytest.raises(AmortError) as info:
        Report.decode(record + b"\x10" + bytes(16) + b"\x08" + bytes(8), wire_format="explicit")
    assert info.value.code == "TAGLEN_DOWNGRADE"


def _implied(rest: int, tag_len: int | None) -> str:
    try:
        report = Report.decode(RECORD.encode() + bytes(range(rest)), tag_len=tag_len)
    except AmortError as exc:
        return f"{exc.code} {exc.field}"
    return f"{len(report.tag)}+{len(report.dtag)}"


def test_report_tag_section_implied():
    """No tag length octet: the epoch's length splits the rest into one or two tags; every other rest is refused
    with the code its length means (docs/protocol.md, Report)."""
    assert len(Report(RECORD, bytes(16)).encode()) == 99 and len(Report(RECORD, bytes(16), bytes(16)).encode()) == 115
    table = {rest: _implied(rest, 16) for rest in range(0, 40)}
    assert table[16] == "16+0" and table[32] == "16+16"
    assert {table[n] for n in (8, 12, 24)} == {"TAGLEN_DOWNGRADE Report.tag@83"}
    assert {table[n] for n in (0, 1, 7, 9, 15)} == {"TRUNCATED Report.tag@83"}
    assert {table[n] for n in (17, 23, 25, 31)} == {"TRUNCATED Report.dtag@99"}
    assert {table[n] for n in (33, 39)} == {"TRAILING Report@115"}
    assert _implied(16, 8) == "8+8" and _implied(24, 12) == "12+12" and _implied(16, 12) == "TAGLEN_DOWNGRADE " \
        "Report.tag@83"
    # without an epoch's tag length: one tag if the rest is a tag length, else two; 16 reads as one tag
    assert (_implied(8, None), _implied(16, None), _implied(24, None), _implied(10, None)) == (
        "8+0", "16+0", "12+12", "TRUNCATED Report.tag@83")


def test_checkpoint_states_the_epoch_once_with_canonical_exceptions():
    from pqlab.amort.messages import Checkpoint, Span

    spans = tuple(Span(bytes([i]) * 8, epoch, 1, 1, bytes(32)) for i, epoch in enumerate((4, 4, 9, 4, 2)))
    body = Checkpoint(b"CTRL-001", 0, bytes(32), 5, bytes(32), spans, (), 1, bytes(3309))
    data = body.encode()
    explicit = body.replace(wire_format="explicit").encode()
    assert len(explicit) - len(data) == 5 * 4 - 2 * 8 - 8  # 4 octets per span against 8 per exception and 8 once
    assert Checkpoint.decode(data) == body
    exceptions = data.index((2).to_bytes(4, "big") + (2).to_bytes(4, "big"))  # count 2, then (index 2, epoch 9)
    assert data[exceptions + 4:exceptions + 12] == (2).to_bytes(4, "big") + (9).to_bytes(4, "big")
    for bad in ((0, 9), (2, 4), (7, 9)):  # index 0, the base epoch, an index out of range
        forged = data[:exceptions + 4] + bad[0].to_bytes(4, "big") + bad[1].to_bytes(4, "big") + data[exceptions + 12:]
        with pytest.raises(AmortError) as info:
            Checkpoint.decode(forged)
        assert info.value.code == "TRAILING" and "epoch_exceptions" in info.value.field


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
