"""AMORT-V1's typed configs: the implementation switches (path, wire format, variant)."""

from __future__ import annotations

from typing import Literal

from pqlab.config import Strict

CheckpointSigner = Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"]  # the two checkpoint signatures of AMORT-V1


class AmortParams(Strict):
    """AMORT-V1 implementation switches: which controller path runs the per-report work (pqlab.amort.fastpath),
    the wire format and the protocol variant (pqlab.amort.profile, docs/protocol.md).

    ``native`` (C + libcrypto) falls back to ``reference`` only through ``resolve_controller_path``, which
    returns the path actually used and the reason; studies record both. ``wire_format``: ``implied`` (the encoding
    the paper's byte counts imply: 99-octet reports, 56 octets per identity) or ``explicit`` (tag length octets and
    an epoch per span). ``variant``: ``paper`` or ``hardened`` (issue 27's N03-N05 closed). The scaling stage
    measures Table III in the chosen format and variant; attack_matrix runs both variants in the chosen format;
    the other AMORT-V1 stages measure the paper variant in the default format."""

    controller_path: Literal["reference", "native"] = "native"
    wire_format: Literal["implied", "explicit"] = "implied"
    variant: Literal["paper", "hardened"] = "paper"
