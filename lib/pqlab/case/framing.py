"""802.15.4 frames needed to carry a CASE message one hop over Thread (6LoWPAN fragmentation as OpenThread does it).

Facts (``shared/docs/thread-model-facts.md`` §2-§3, from OpenThread ``message_framer.cpp`` / ``lowpan.cpp``):
106 B of MAC payload per 127-B frame (21 B of MAC header, security and FCS); IPHC compresses the 40-B IPv6 and
8-B UDP headers to ``iphc`` bytes; a datagram that does not fit one frame is fragmented with a 4-B FRAG1 and
5-B FRAGN headers, every non-final fragment carrying a multiple of 8 bytes. A message larger than one UDP
datagram allows (1232 B of UDP payload in a 1280-B IPv6 packet) is sent as ⌈s/1232⌉ datagrams, the paper's
IPv6-fragmentation transport (§IV-C), each fragmented the same way (a simplification: IPv6 fragment headers
are not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

IPV6_UDP_HEADERS = 48
MAX_UDP_PAYLOAD = 1232  # 1280 - 40 - 8
FRAG1_HEADER, FRAGN_HEADER = 4, 5


@dataclass(frozen=True)
class Framing:
    """Per-frame and per-message header sizes; defaults: ML-EID addressing at one hop, no mesh header."""

    mac_payload_octets: int = 106
    iphc_octets: int = 25
    mesh_header_octets: int = 0
    matter_header_octets: int = 26  # unsecured message header with source node id (16) + payload header with ack (10)


def frames_for_datagram(udp_payload: int, framing: Framing) -> int:
    """Frames for one UDP datagram of ``udp_payload`` bytes."""
    room = framing.mac_payload_octets - framing.mesh_header_octets
    if framing.iphc_octets + udp_payload <= room:
        return 1
    first = (room - FRAG1_HEADER - framing.iphc_octets) // 8 * 8
    per_fragment = (room - FRAGN_HEADER) // 8 * 8
    remaining = udp_payload - first
    frames = 1
    while remaining > 0:
        frames += 1
        if remaining <= room - FRAGN_HEADER:
            break
        remaining -= per_fragment
    return frames


def frames_for_message(payload: int, framing: Framing | None = None) -> int:
    """Frames for one Matter message of ``payload`` bytes, split into ≤1232-B datagrams when it must be."""
    framing = framing or Framing()
    total = payload + framing.matter_header_octets
    datagrams = max(1, math.ceil(total / MAX_UDP_PAYLOAD))
    frames = 0
    for index in range(datagrams):
        frames += frames_for_datagram(min(MAX_UDP_PAYLOAD, total - index * MAX_UDP_PAYLOAD), framing)
    return frames
