"""Constants the C cores and the Python models share have one source each, checked by parsing the C (issue 22 item 4).

The approach, for every C/Python pair: the Python module is the definition (the 83-octet record's layout is
``pqlab.amort.messages.RECORD_LAYOUT``, computed from ``Record.SPEC``; the simulator's plan vectors are
``pqlab.transport.model.INT_FIELDS`` / ``FLOAT_FIELDS``; the protocol codes are ``pqlab.amort.errors.Code``), and this
test reads the C headers and sources as text (no compiler, no built extension needed) and fails naming the constant
that went out of step. No header is generated; a C-side change shows here before any run can disagree.
Python-only duplicates are gone instead: one definition, imported (checked at the end).
"""

from __future__ import annotations

import re
from pathlib import Path

from pqlab.amort import chain, profile
from pqlab.amort.errors import Code
from pqlab.amort.fastpath.api import MAX_BATCH
from pqlab.amort.messages import HASH, ID_OCTETS, RECORD_LAYOUT, RECORD_OCTETS, TAG_LENGTHS, Record
from pqlab.experiments import symmetric_timing
from pqlab.transport import model, plan_check

LIB = Path(__file__).resolve().parent.parent / "lib" / "pqlab"
AMORT_H = LIB / "amort" / "fastpath" / "native" / "amort_core.h"
AMORT_C = LIB / "amort" / "fastpath" / "native" / "amort_core.c"
SIM_H = LIB / "transport" / "sim_core.h"
SYM_H = LIB / "experiments" / "symmetric" / "sym_timing.h"
SYM_C = LIB / "experiments" / "symmetric" / "sym_timing.c"
EVIDENCE_H = LIB / "experiments" / "cycle" / "cycle_evidence.h"


def _source(path: Path) -> str:
    """The file without comments."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)


def defines(path: Path) -> dict[str, int]:
    """Every ``#define NAME <integer expression>`` of path, evaluated (u suffixes, casts to size_t dropped; a define
    may use earlier ones)."""
    values: dict[str, int] = {}
    for name, body in re.findall(r"^#define\s+(\w+)\s+(.+)$", _source(path), flags=re.M):
        expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", body.strip())
        for known in sorted(values, key=len, reverse=True):
            expr = re.sub(rf"\b{known}\b", str(values[known]), expr)
        if re.fullmatch(r"[\d\s()+\-*<>|]+", expr):
            values[name] = eval(expr)  # digits and operators only, checked just above
    return values


def enum_members(path: Path, first: str) -> list[tuple[str, int]]:
    """The members (name, value) of the enum of path whose first member is ``first``, in order."""
    body = re.search(rf"enum\s*\w*\s*\{{\s*({first}\b[^}}]*)\}}", _source(path), flags=re.S)
    assert body, f"no enum starting with {first} in {path.name}"
    members, value = [], -1
    for item in (x.strip() for x in body.group(1).split(",")):
        if not item:
            continue
        name, _, given = item.partition("=")
        value = int(given.strip()) if given.strip() else value + 1
        members.append((name.strip(), value))
    return members


def test_the_record_layout_is_the_c_decoders():
    h, c = defines(AMORT_H), _source(AMORT_C)
    assert h["AMORT_RECORD_OCTETS"] == RECORD_OCTETS == len(Record(b"d" * 8, 1, 2, 3, b"g" * 32, 4).encode())
    decoder = c[c.index("static amort_status decode_record("):]
    widths = [int(w) for w in re.findall(r"\{(\d+),\s*AMORT_F_\w+_LEN\}", decoder[:decoder.index("const uint8_t *at")])]
    assert widths == [width for name, (_, _, width) in RECORD_LAYOUT.items() if name not in ("domain", "version")]
    domain_len_at, domain_at, domain_width = RECORD_LAYOUT["domain"]
    version_len_at, version_at, _ = RECORD_LAYOUT["version"]
    assert f"if (p[{domain_len_at}] != {domain_width})" in decoder
    assert f'memcmp(p + {domain_at}, "{Record.DOMAIN.decode()}", {domain_width})' in decoder
    assert f"if (p[{version_len_at}] != 1)" in decoder and f"if (p[{version_at}] != 1)" in decoder
    assert f"pos = {RECORD_LAYOUT['dev_id'][0]};" in decoder


def test_amort_sizes_limits_and_choices_match():
    h = defines(AMORT_H)
    assert h["AMORT_ID_OCTETS"] == ID_OCTETS and h["AMORT_HASH_OCTETS"] == HASH
    assert h["AMORT_REPORT_MAX_OCTETS"] == RECORD_OCTETS + 2 * (1 + max(TAG_LENGTHS))
    assert h["AMORT_BATCH_MAX"] == MAX_BATCH
    assert h["AMORT_CHAIN_MAX"] == chain.MAX_CHAIN_LENGTH
    assert h["AMORT_DEFAULT_MAX_REPORT_AGE"] == profile.DEFAULT_MAX_REPORT_AGE_MS
    assert [name for name, _ in enum_members(AMORT_H, "AMORT_WIRE_IMPLIED")] == \
        [f"AMORT_WIRE_{w.upper()}" for w in profile.WIRE_FORMATS]
    assert [name for name, _ in enum_members(AMORT_H, "AMORT_VARIANT_PAPER")] == \
        [f"AMORT_VARIANT_{v.upper()}" for v in profile.VARIANTS]
    assert defines(EVIDENCE_H)["PQ_EVIDENCE_MAX_REPORT"] >= h["AMORT_REPORT_MAX_OCTETS"]


def test_protocol_codes_are_numbered_in_the_order_of_code():
    status = dict(enum_members(AMORT_H, "AMORT_OK"))
    assert [status[f"AMORT_{code.name}"] for code in Code] == list(range(1, len(Code) + 1))
    assert status["AMORT_PROTOCOL_CODES"] == len(Code)


def test_the_simulators_plan_vectors_are_in_model_order():
    assert [name for name, _ in enum_members(SIM_H, "MI_byte_us")] == [f"MI_{f}" for f in model.INT_FIELDS] + \
        ["MI_COUNT"]
    assert [name for name, _ in enum_members(SIM_H, "MF_margin")] == [f"MF_{f}" for f in model.FLOAT_FIELDS] + \
        ["MF_COUNT"]
    assert dict(enum_members(SIM_H, "SINGLE")) == {"SINGLE": model.SINGLE, "IPV6": model.IPV6, "PULL": model.PULL,
                                                   "BLOCK": model.BLOCK}
    h = defines(SIM_H)
    assert h["MAXU"] == model.MAX_SEGMENTS and h["SIM_MAX_HOPS"] == plan_check.MAX_HOPS


def test_the_symmetric_operations_are_in_enum_order():
    ops = enum_members(SYM_H, "SYM_OP_EMPTY")
    assert [value for _, value in ops] == list(range(len(ops)))
    names = re.search(r"OP_NAMES\[SYM_OP_COUNT\]\s*=\s*\{([^}]*)\}", _source(SYM_C), flags=re.S)
    assert tuple(re.findall(r'"(\w+)"', names.group(1))) == symmetric_timing.OPERATIONS
    assert ops[-1] == ("SYM_OP_COUNT", len(symmetric_timing.OPERATIONS))
    assert defines(SYM_H)["SYM_DIGEST_OCTETS"] == HASH


def test_the_parser_reads_defines_and_enums(tmp_path):
    header = tmp_path / "x.h"
    header.write_text("/* c */\n#define A 8\n#define B (A + 1 + 16u) /* both */\n#define S \"text\"\n"
                      "enum { X_ONE = 1, X_TWO, /* gap */ X_TEN = 10, X_ELEVEN };\n")
    assert defines(header) == {"A": 8, "B": 25}
    assert enum_members(header, "X_ONE") == [("X_ONE", 1), ("X_TWO", 2), ("X_TEN", 10), ("X_ELEVEN", 11)]


def test_python_duplicates_are_one_definition_imported():
    from pqlab import framing, params
    from pqlab.amort.conformance import mutations
    from pqlab.case import configurations

    assert configurations.MAX_APP_MESSAGE_OCTETS is framing.MAX_APP_MESSAGE_OCTETS
    assert framing.FramingParams().max_app_payload == framing.MAX_APP_MESSAGE_OCTETS
    assert "record_octets" not in params.CostsParams.model_fields  # the record's length is the protocol's
    assert mutations.RECORD_OCTETS is RECORD_OCTETS and RECORD_LAYOUT["version"][1] in mutations.STRUCTURAL
