"""6LoWPAN framing: how many 802.15.4 frames (and of what size) carry a UDP payload (PQ-CASE §II-C)."""

from __future__ import annotations

from pqlab.params import ThreadParams


def mesh_header_bytes(params: ThreadParams, multi_hop: bool) -> int:
    if not multi_hop:
        return 0
    return params.deep_mesh_header_bytes if params.switches.deep_mesh_header else params.mesh_header_bytes


def frame_psdus(payload: int, params: ThreadParams, *, multi_hop: bool) -> list[int]:
    """PSDU sizes of the frames carrying ``payload`` bytes after the compressed IPv6/UDP header.

    The paper's model fills every frame (102 B in FRAG1, 101 B in FRAGN at one hop); with
    ``switches.fragment_rounding`` non-final fragments carry a multiple of 8 bytes, as OpenThread does.
    """
    if payload < 0:
        raise ValueError("payload must be >= 0")
    room = params.max_psdu_bytes - params.mac_overhead_bytes
    mesh = mesh_header_bytes(params, multi_hop)
    overhead = params.mac_overhead_bytes + mesh
    compressed = params.iphc_bytes + payload
    if compressed + mesh <= room:
        return [overhead + compressed]
    granule = params.fragment_granularity
    first = room - mesh - params.frag1_header_bytes
    if params.switches.fragment_rounding:
        first = params.iphc_bytes + (first - params.iphc_bytes) // granule * granule
    nth = room - mesh - params.fragn_header_bytes
    if params.switches.fragment_rounding:
        nth = nth // granule * granule
    if first <= params.iphc_bytes or nth <= 0:
        raise ValueError("frame too small for the 6LoWPAN headers")
    psdus = [overhead + params.frag1_header_bytes + first]
    rest = compressed - first
    while rest > 0:
        chunk = min(rest, nth)
        psdus.append(overhead + params.fragn_header_bytes + chunk)
        rest -= chunk
    return psdus


def split(total: int, size: int) -> list[int]:
    """``total`` bytes cut into pieces of at most ``size`` (at least one piece)."""
    pieces = [size] * (total // size)
    if total % size or not pieces:
        pieces.append(total % size)
    return pieces
