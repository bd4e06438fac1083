"""Seeded mutations of encoded AMORT-V1 reports: what the differential vectors and the sanitizer fuzz feed in."""

from __future__ import annotations

import random
from collections.abc import Sequence

from pqlab.amort.messages import RECORD_LAYOUT, RECORD_OCTETS

# Where one changed octet means most: every length octet and first value octet of the record, the last octet of
# the domain tag, the sequence number and the digest, then the first two octets after the record.
STRUCTURAL = (*sorted({at for length_at, value_at, _ in RECORD_LAYOUT.values() for at in (length_at, value_at)}
                      | {RECORD_LAYOUT[name][1] + RECORD_LAYOUT[name][2] - 1 for name in ("domain", "seq", "digest")}),
              RECORD_OCTETS, RECORD_OCTETS + 1)
KINDS = ("flip_bit", "set_structural", "truncate", "extend", "splice", "random", "tag_len", "dtag_len", "drop_dtag",
         "replace_tag", "duplicate")


def mutate(report: bytes, rng: random.Random, others: Sequence[bytes] = (), kind: str | None = None) -> bytes:
    """One mutated copy of ``report`` (``kind`` from :data:`KINDS`, else drawn from ``rng``)."""
    kind = kind or rng.choice(KINDS)
    data = bytearray(report)
    if kind == "flip_bit" and data:
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "set_structural" and data:
        at = rng.choice([o for o in STRUCTURAL if o < len(data)] or [0])
        data[at] = rng.choice((0, 1, 255, (data[at] + 1) & 0xFF, (data[at] - 1) & 0xFF, rng.randrange(256)))
    elif kind == "truncate":
        del data[rng.randrange(len(data) + 1):]
    elif kind == "extend":
        data += rng.randbytes(rng.randint(1, 8))
    elif kind == "splice" and others:
        other = rng.choice(others)
        data = data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]
    elif kind == "random":
        data = bytearray(rng.randbytes(rng.randrange(130)))
    elif kind == "tag_len" and len(data) > RECORD_OCTETS:
        data[RECORD_OCTETS] = rng.choice((0, 7, 8, 9, 12, 16, 17, 32, 255))
    elif kind == "dtag_len" and len(data) > RECORD_OCTETS:
        at = RECORD_OCTETS + 1 + data[RECORD_OCTETS]
        if at < len(data):
            data[at] = rng.choice((0, 4, 8, 12, 16, 20))
    elif kind == "drop_dtag" and len(data) > RECORD_OCTETS:
        at = RECORD_OCTETS + 1 + data[RECORD_OCTETS]
        if at < len(data):
            data[at:] = b"\x00"
    elif kind == "replace_tag" and len(data) > RECORD_OCTETS:
        n = data[RECORD_OCTETS]
        data[RECORD_OCTETS + 1:RECORD_OCTETS + 1 + n] = rng.randbytes(n)[:len(data) - RECORD_OCTETS - 1]
    return bytes(data)  # "duplicate" (and any mutation that does not apply) returns the report unchanged
