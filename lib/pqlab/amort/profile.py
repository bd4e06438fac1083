"""The two deployment-wide choices of an AMORT-V1 run: protocol variant (paper | hardened) and wire format.

``variant``: ``hardened`` (the library's default) closes the design gaps of the paper's mechanism that issue 27
and issue 35 found (anchor substitution, private receipt forks, the disclosure tag outside the evidence MAC, forged
receipt lists, unauthenticated EPOCH_REQs) as specified in docs/protocol.md; ``paper`` is the design of the paper,
which the reproduction stages choose explicitly (params ``amort.variant``) so that every number is the paper's.

A profile is bound into every signature (:meth:`Profile.label` is part of each FIPS 204/205 context string) and
stated in the CA-signed certificate and in EPOCH_OPEN (:attr:`Profile.octet`), so evidence produced under one
profile is refused under another (PROFILE_MISMATCH) instead of being read with the other's rules.

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
    """One deployment's protocol variant and wire format (every party of a deployment shares them).

    The default is the secure one: the hardened variant in the implied wire format."""

    variant: str = HARDENED
    wire_format: str = IMPLIED

    def __post_init__(self) -> None:
        check_variant(self.variant)
        check_wire_format(self.wire_format)

    @property
    def hardened(self) -> bool:
        return self.variant == HARDENED

    @property
    def octet(self) -> int:
        """The profile as one octet on the wire: bit 0 the variant (1 hardened), bit 1 the wire format (1 explicit)."""
        return VARIANTS.index(self.variant) | WIRE_FORMATS.index(self.wire_format) << 1

    @classmethod
    def from_octet(cls, value: int) -> Profile:
        """The profile an octet names (PqlabError for bits other than the two defined)."""
        if not isinstance(value, int) or not 0 <= value <= 3:
            raise PqlabError(f"profile octet {value!r} is not one of 0..3", field="profile")
        return cls(VARIANTS[value & 1], WIRE_FORMATS[value >> 1])

    @property
    def label(self) -> bytes:
        """What signatures bind (their context string): e.g. ``hardened+implied``."""
        return f"{self.variant}+{self.wire_format}".encode()

    def __str__(self) -> str:
        return f"{self.variant}/{self.wire_format}"


SECURE = Profile(HARDENED, IMPLIED)
"""The library's default: what a deployment that states nothing runs."""
PAPER_PROFILE = Profile(PAPER, IMPLIED)
"""The paper's design in the encoding its byte counts imply: what the reproduction stages run by default."""
