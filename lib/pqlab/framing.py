"""6LoWPAN framing of Matter messages over 802.15.4 and its constants (``FramingParams``), shared by the CASE size
model and the Thread simulator.

A Matter message of ``s`` payload bytes gains the Matter header (``framing.matter_header_bytes``) and is sent
as one UDP datagram, or as ⌈(s + header)/1232⌉ datagrams when IPv6 fragmentation carries it (PQ-CASE §IV-C).
Each datagram is compressed to ``iphc_bytes`` of IPv6+UDP header and, when it does not fit one frame, cut
into a FRAG1 and FRAGN fragments (RFC 4944/6282). Beyond one hop every frame also carries a mesh header.

Facts (OpenThread ``message_framer.cpp`` / ``lowpan.cpp``, recorded in ``docs/thread-simulator.md``): 106 B of
MAC payload per 127-B frame; IPHC of 25 B for mesh-local (ML-EID) addressing, 9 B when both interface
identifiers derive from the MAC addresses; non-final fragments carry a multiple of 8 bytes ("rounding").
The defaults are the paper's model (IPHC 9 B, no rounding): 13 frames per 1232-B datagram at one hop.
"""

from __future__ import annotations

from pydantic import Field

from pqlab.config import Strict

# Matter's kMaxAppMessageLen: 1280 - 48 - 38 - 16 (MessageHeader.h, SystemConfig.h); the one definition, which the
# CASE size model (pqlab.case.configurations) and the what-if figures import.
MAX_APP_MESSAGE_OCTETS = 1178


class FramingParams(Strict):
    """Matter / 6LoWPAN / 802.15.4 constants shared by the CASE size model and the Thread simulator.

    Defaults are the PQ-CASE paper's model (13 frames per 1232-B datagram at one hop); OpenThread's own
    mesh-local addressing compresses to 25 B and rounds non-final fragments (see ``pqlab.framing``).
    """

    max_app_payload: int = Field(default=MAX_APP_MESSAGE_OCTETS, ge=64, le=65535)
    matter_header_bytes: int = Field(default=26, ge=0, le=256)    # message header with node id 16 + payload hdr 10
    max_psdu_bytes: int = Field(default=127, ge=32, le=2047)
    mac_overhead_bytes: int = Field(default=21, ge=0, le=64)      # MAC header + aux security + MIC-32 + FCS
    iphc_bytes: int = Field(default=9, ge=2, le=64)               # IPHC + UDP NHC, both IIDs derivable
    frag1_header_bytes: int = Field(default=4, ge=0, le=16)
    fragn_header_bytes: int = Field(default=5, ge=0, le=16)
    mesh_header_bytes: int = Field(default=5, ge=0, le=16)
    deep_mesh_header_bytes: int = Field(default=6, ge=0, le=16)
    fragment_granularity: int = Field(default=8, ge=1, le=64)
    ip6_fragment_payload: int = Field(default=1232, ge=8, le=65535)  # 1280 - 40 - 8: UDP payload per datagram
    ip6_fragment_header_bytes: int = Field(default=8, ge=0, le=64)
    ip6_max_assembled: int = Field(default=2000, ge=1280, le=1 << 20)
    openthread_iphc_bytes: int = Field(default=25, ge=2, le=64)   # ML-EID to ML-EID, shown beside the default



def mesh_header_bytes(framing: FramingParams, *, multi_hop: bool, deep_mesh: bool = False) -> int:
    """Mesh header on every frame of a multi-hop path (6 B with a deep hops-left field), none at one hop."""
    if not multi_hop:
        return 0
    return framing.deep_mesh_header_bytes if deep_mesh else framing.mesh_header_bytes


def frame_psdus(payload: int, framing: FramingParams, *, multi_hop: bool, rounding: bool = False,
                deep_mesh: bool = False, iphc_bytes: int | None = None) -> list[int]:
    """PSDU sizes of the frames carrying one UDP datagram of ``payload`` bytes.

    With ``rounding`` every non-final fragment carries a multiple of ``fragment_granularity`` bytes of the
    datagram; the final fragment carries whatever remains, as OpenThread does.
    """
    if payload < 0:
        raise ValueError(f"payload must be >= 0, got {payload}")
    iphc = framing.iphc_bytes if iphc_bytes is None else iphc_bytes
    room = framing.max_psdu_bytes - framing.mac_overhead_bytes
    mesh = mesh_header_bytes(framing, multi_hop=multi_hop, deep_mesh=deep_mesh)
    overhead = framing.mac_overhead_bytes + mesh
    compressed = iphc + payload
    if compressed + mesh <= room:
        return [overhead + compressed]
    granule = framing.fragment_granularity
    first = room - mesh - framing.frag1_header_bytes
    if rounding:
        first = iphc + (first - iphc) // granule * granule
    last_room = room - mesh - framing.fragn_header_bytes
    nth = last_room // granule * granule if rounding else last_room
    if first <= iphc or nth <= 0:
        raise ValueError("frame too small for the 6LoWPAN headers")
    psdus = [overhead + framing.frag1_header_bytes + first]
    rest = compressed - first
    while rest > 0:
        chunk = rest if rest <= last_room else nth
        psdus.append(overhead + framing.fragn_header_bytes + chunk)
        rest -= chunk
    return psdus


def split(total: int, size: int) -> list[int]:
    """``total`` bytes cut into pieces of at most ``size`` (at least one piece)."""
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    pieces = [size] * (total // size)
    if total % size or not pieces:
        pieces.append(total % size)
    return pieces


def datagrams(payload: int, framing: FramingParams) -> list[int]:
    """UDP payloads of the datagrams carrying one Matter message (header included) with IPv6 fragmentation."""
    return split(payload + framing.matter_header_bytes, framing.ip6_fragment_payload)


def frames_for_message(payload: int, framing: FramingParams, *, rounding: bool = False,
                       iphc_bytes: int | None = None) -> int:
    """802.15.4 frames one Matter message of ``payload`` bytes needs at one hop, loss-free."""
    return sum(len(frame_psdus(d, framing, multi_hop=False, rounding=rounding, iphc_bytes=iphc_bytes))
               for d in datagrams(payload, framing))


def fits(payload: int, framing: FramingParams) -> bool:
    """Whether a message payload is within Matter's limit (kMaxAppMessageLen)."""
    return payload <= framing.max_app_payload
