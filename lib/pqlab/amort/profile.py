"""The two deployment-wide choices of an AMORT-V1 run: protocol variant (paper | hardened) and wire format.

``variant``: ``paper`` is the design of the paper (the default: every reproduction number is the paper's design);
``hardened`` closes the three design gaps of issue 27 (N03 anchor substitution, N04 private receipt fork, N05 the
disclosure tag outside the evidence MAC) as specified in docs/protocol.md.

``wire_format``: ``implied`` (default) is the encoding the paper's byte counts imply — tags without length octets
(their length is fixed per epoch by EPOCH_OPEN: a 99-octet report) and the epoch stated once per checkpoint with
per-span exceptions (56 octets per identity); ``explicit`` is pqlab's earlier encoding — a length octet before
each tag (101 octets) and an epoch in every span (60 octets). docs/protocol.md has the byte tables of both.
"""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.errors import PqlabError

PAPER, HARDENED = "paper", "hardened"
VARIANTS = (PAPER, HARDENED)
IMPLIED, EXPLICIT = "implied", "explicit"
WIRE_FORMATS = (IMPLIED, EXPLICIT)
DEFAULT_MAX_REPORT_AGE_MS = 300_000
"""Freshness (§IV: "freshness limits the age of accepted evidence"; the paper gives no number): a controller that
is told the time refuses reports stamped more than five minutes earlier. Partition replay of older buffered
evidence (§V-H) ingests without a clock."""


def check_variant(value: object, field: str = "variant") -> str:
    """``value`` if it is one of :data:`VARIANTS`, else PqlabError naming ``field``."""
    if value not in VARIANTS:
        raise PqlabError(f"must be one of {VARIANTS}, got {value!r}", field=field)
    return str(value)


def check_wire_format(value: object, field: str = "wire_format") -> str:
    """``value`` if it is one of :data:`WIRE_FORMATS`, else PqlabError naming ``field``."""
    if value not in WIRE_FORMATS:
        raise PqlabError(f"must be one of {WIRE_FORMATS}, got {value!r}", field=field)
    return str(value)


@dataclass(frozen=True)
class Profile:
    """One deployment's protocol variant and wire format (every party of a deployment shares them)."""

    variant: str = PAPER
    wire_format: str = IMPLIED

    def __post_init__(self) -> None:
        check_variant(self.variant)
        check_wire_format(self.wire_format)

    @property
    def hardened(self) -> bool:
        return self.variant == HARDENED


DEFAULT = Profile()
