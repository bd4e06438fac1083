"""Matter operational certificates (NOC, ICAC, RCAC) in TLV form, for classical, post-quantum and composite keys.

The templates reproduce the reference implementation's test certificates Node01_01 (NOC, 269 B), ICA01
(ICAC, 252 B) and Root01 (RCAC, 252 B) from connectedhomeip ``src/credentials/tests/CHIPCert_test_vectors.cpp``
@ f528cfd: the same fields, DNs, validity and extensions (a test substitutes the vectors' serial, key, key ids
and signature and gets the vectors back byte for byte). A post-quantum certificate replaces the public key
and signature and drops the EC curve id; a composite certificate keeps the P-256 key and signature in their
usual fields and adds the second key and signature under context tags 12 and 13 (``docs/case-encoding.md``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pqlab.case import algorithms, tlv
from pqlab.case.material import Material
from pqlab.case.tlv import Element

# Certificate field tags (connectedhomeip src/credentials/CHIPCert.h)
SERIAL, SIG_ALGO, ISSUER, NOT_BEFORE, NOT_AFTER, SUBJECT, PK_ALGO, CURVE, PUBLIC_KEY, EXTENSIONS, SIGNATURE = range(
    1, 12)
# New tags for composite certificates (our assumption; Matter has no PQ certificate format yet)
SECOND_PUBLIC_KEY, SECOND_SIGNATURE = 12, 13
# DN attribute tags
DN_NODE_ID, DN_ICAC_ID, DN_RCAC_ID, DN_FABRIC_ID = 17, 19, 20, 21

# Algorithm identifiers: 1 is Matter's ecdsa-with-SHA256 / id-ecPublicKey / prime256v1. The others are ours;
# every value stays below 256, so each identifier field keeps Matter's 3-byte encoding.
ALGORITHM_IDS = {
    "ECDSA-P256": 1, "ML-DSA-44": 2, "ML-DSA-65": 3, "Falcon-512": 4, "SLH-DSA-SHA2-128s": 5,
    "SLH-DSA-SHA2-128f": 6, "MAYO-2": 7, "SNOVA-24-5-4": 8, "UOV-Is-pkc": 9,
    "ML-KEM-512": 10, "ML-KEM-768": 11, "ML-KEM-1024": 12,
    # the newer algorithms of pqlab.case.algorithms (what-if tools, extended design space)
    "ML-DSA-87": 13, "FN-DSA-512": 14, "FN-DSA-1024": 15, "MAYO-1": 16, "MAYO-3": 17, "MAYO-5": 18, "UOV-Ip": 19,
    "UOV-Ip-pkc": 20, "SNOVA-25-8-3": 21, "SNOVA-37-17-2": 22, "SQIsign-I": 23, "SQIsign-III": 24, "SQIsign-V": 25,
    "HAWK-512": 26, "HAWK-1024": 27, "CROSS-RSDP-128-small": 28, "CROSS-RSDPG-128-small": 29,
    "CROSS-RSDPG-128-balanced": 30, "CROSS-RSDPG-128-fast": 31, "HQC-1": 32, "HQC-3": 33, "HQC-5": 34,
}
COMPOSITE_ID_BASE = 0x80  # composite P-256 + X: 0x80 + id(X)


def algorithm_id(name: str) -> int:
    """The TLV identifier of an algorithm or of a composite ``ECDSA-P256+X``."""
    parts = name.split("+")
    if len(parts) == 2 and parts[0] == "ECDSA-P256" and parts[1] in ALGORITHM_IDS:
        return COMPOSITE_ID_BASE + ALGORITHM_IDS[parts[1]]
    if name in ALGORITHM_IDS:
        return ALGORITHM_IDS[name]
    raise algorithms.UnknownCaseAlgorithmError(f"no certificate algorithm id for {name!r}", field="algorithm")


def parts_of(name: str) -> tuple[str, ...]:
    """``ECDSA-P256+ML-DSA-44`` -> both components; a single algorithm -> itself."""
    return tuple(name.split("+"))


@dataclass(frozen=True)
class Template:
    """The fields of a test-vector certificate that a post-quantum variant keeps unchanged."""

    name: str
    role: str  # noc | icac | rcac
    subject: tuple[tuple[int, int], ...]
    not_before: int = 656087023  # 2020-10-15 14:23:43 UTC, seconds since 2000-01-01 (all chain-01 vectors)
    not_after: int = 1287239022  # 2040-10-15 14:23:42 UTC
    serial_octets: int = 8


NOC_TEMPLATE = Template("Node01_01", "noc", ((DN_NODE_ID, 0xDEDEDEDE00010001), (DN_FABRIC_ID, 0xFAB000000000001D)))
ICAC_TEMPLATE = Template("ICA01", "icac", ((DN_ICAC_ID, 0xCACACACA00000003),))
RCAC_TEMPLATE = Template("Root01", "rcac", ((DN_RCAC_ID, 0xCACACACA00000001),))


@dataclass(frozen=True)
class Certificate:
    """A built certificate: its TLV tree, its bytes, its subject DN and the signing secret(s) of its key."""

    element: Element
    encoded: bytes
    algorithm: str
    subject: tuple[tuple[int, int], ...]
    public_keys: tuple[bytes, ...]
    secrets: tuple[Any, ...]
    skid: bytes

    def __len__(self) -> int:
        return len(self.encoded)


def _dn(tag: int, attributes: tuple[tuple[int, int], ...]) -> Element:
    return tlv.tlv_list(tag, *(tlv.uint(value, attr) for attr, value in attributes))


def _extensions(role: str, skid: bytes, akid: bytes) -> Element:
    if role == "noc":
        members = [tlv.structure(1, tlv.boolean(False, 1)), tlv.uint(0x01, 2),  # digitalSignature
                   tlv.array(3, tlv.uint(2), tlv.uint(1))]  # EKU clientAuth, serverAuth
    else:
        members = [tlv.structure(1, tlv.boolean(True, 1)), tlv.uint(0x60, 2)]  # keyCertSign | cRLSign
    return tlv.tlv_list(EXTENSIONS, *members, tlv.octets(skid, 4), tlv.octets(akid, 5))


def key_id(public_key: bytes) -> bytes:
    """Subject/authority key id: SHA-1 of the public key (RFC 5280 method 1), 20 bytes as in the vectors."""
    return hashlib.sha1(public_key).digest()


def tbs_element(template: Template, algorithm: str, issuer_algorithm: str, issuer_dn: tuple[tuple[int, int], ...],
                public_keys: tuple[bytes, ...], serial: bytes, skid: bytes, akid: bytes) -> Element:
    """Every field except the signature(s), in the reference order."""
    parts = parts_of(algorithm)
    members = [
        tlv.octets(serial, SERIAL),
        tlv.uint(algorithm_id(issuer_algorithm), SIG_ALGO),
        _dn(ISSUER, issuer_dn),
        tlv.uint(template.not_before, NOT_BEFORE),
        tlv.uint(template.not_after, NOT_AFTER),
        _dn(SUBJECT, template.subject),
        tlv.uint(algorithm_id(algorithm), PK_ALGO),
    ]
    if algorithm == "ECDSA-P256":
        members.append(tlv.uint(1, CURVE))  # prime256v1; implied by the algorithm id for PQ and composite keys
    members.append(tlv.octets(public_keys[0], PUBLIC_KEY))
    if len(parts) == 2:
        members.append(tlv.octets(public_keys[1], SECOND_PUBLIC_KEY))
    members.append(_extensions(template.role, skid, akid))
    return tlv.structure(None, *members)


def with_signatures(tbs: Element, signatures: tuple[bytes, ...]) -> Element:
    """The certificate: the TBS structure followed by the signature (and, for composites, the second one)."""
    extra = [tlv.octets(signatures[0], SIGNATURE)]
    if len(signatures) == 2:
        extra.append(tlv.octets(signatures[1], SECOND_SIGNATURE))
    return tlv.structure(None, *tbs.value, *extra)


def build(template: Template, algorithm: str, material: Material, label: str,
          issuer: Certificate | None = None, issuer_algorithm: str | None = None) -> Certificate:
    """Build and sign a certificate; ``issuer`` None means self-signed (an RCAC)."""
    keys = [material.keypair(part, f"{label}/{part}") for part in parts_of(algorithm)]
    public_keys = tuple(k[0] for k in keys)
    secrets = tuple(k[1] for k in keys)
    skid = key_id(b"".join(public_keys))
    if issuer is None:
        issuer_algorithm, issuer_dn, akid, signing = algorithm, template.subject, skid, secrets
    else:
        issuer_dn, akid, signing = issuer.subject, issuer.skid, issuer.secrets
        issuer_algorithm = issuer.algorithm
    serial = material.random(template.serial_octets, f"{label}/serial")
    tbs = tbs_element(template, algorithm, issuer_algorithm, issuer_dn, public_keys, serial, skid, akid)
    tbs_bytes = tlv.encode(tbs)
    signatures = tuple(material.sign(part, secret, tbs_bytes)
                       for part, secret in zip(parts_of(issuer_algorithm), signing, strict=True))
    element = with_signatures(tbs, signatures)
    return Certificate(element, tlv.encode(element), algorithm, template.subject, public_keys, secrets, skid)


@dataclass(frozen=True)
class Chain:
    """One party's credentials: NOC, optional ICAC, and the fabric's RCAC (stored, never sent in CASE)."""

    noc: Certificate
    icac: Certificate | None
    rcac: Certificate


def build_chain(noc_algorithm: str, icac_algorithm: str | None, rcac_algorithm: str, material: Material,
                label: str, node_id: int = 0xDEDEDEDE00010001) -> Chain:
    """RCAC -> (ICAC ->) NOC, each signed by its issuer's key(s)."""
    rcac = build(RCAC_TEMPLATE, rcac_algorithm, material, f"{label}/rcac")
    icac = (build(ICAC_TEMPLATE, icac_algorithm, material, f"{label}/icac", rcac)
            if icac_algorithm is not None else None)
    noc_template = Template(NOC_TEMPLATE.name, "noc", ((DN_NODE_ID, node_id), (DN_FABRIC_ID, 0xFAB000000000001D)))
    noc = build(noc_template, noc_algorithm, material, f"{label}/noc", icac or rcac)
    return Chain(noc, icac, rcac)
