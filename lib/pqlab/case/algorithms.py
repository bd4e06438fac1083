"""Byte sizes of the algorithms the CASE size model uses, with their sources.

Post-quantum sizes are liboqs 0.16.0's (commit 5a1a854b0dc9f2141bdc771c555ee60c37950183, the values
``OQS_KEM_*_length_*`` / ``OQS_SIG_*_length_*``) unless an entry names another source: FN-DSA and HAWK from
the ``api.h`` of pqm4's benchmarked implementations, SQIsign from its round-2 reference implementation (each
entry's ``source``; ``tests/vectors/pq_sizes.csv`` lists every number with it and a test checks this table
against that file). P-256 sizes are SEC 1 / FIPS 186 (uncompressed point 65 B, raw r||s signature 64 B, as
Matter encodes them). Falcon-512 and FN-DSA use the padded (fixed-length) signature because a size model needs
one length per algorithm. The algorithms after the paper's (``PAPER_SIGNATURES``, ``PAPER_KEMS``) are the newer
ones of the what-if tools and the extended design space; the paper's stages never enumerate them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.errors import PqlabError

SOURCE = "liboqs 0.16.0 5a1a854b0dc9f2141bdc771c555ee60c37950183 (PQ); SEC 1 / FIPS 186 (P-256)"
LIBOQS = "liboqs 0.16.0 5a1a854b0dc9f2141bdc771c555ee60c37950183"
CLASSICAL_SOURCE = "SEC1 / FIPS 186"
PQM4_API = ("mupq/pqm4 cc2c1b992b602d285bd15991a566d5f17b34c1fa (mupq ddcccedb2db9d0250856bd58ee5c46c61e506c5d) "
            "crypto_sign/{scheme}/ref/api.h")
SQISIGN_API = "SQISign/the-sqisign 51f76548a60fd302f72d09042be42fcc2253a195 (round 2) src/nistapi/lvl{level}/api.h"


class UnknownCaseAlgorithmError(PqlabError):
    """An algorithm name the CASE size model has no sizes for."""

    code = "CASE_UNKNOWN_ALGORITHM"


@dataclass(frozen=True)
class KeyExchangeSizes:
    """What each side sends for one key-exchange component: the initiator's share, the responder's reply."""

    name: str
    share: int  # initiator: ECDH public key or KEM encapsulation key
    reply: int  # responder: ECDH public key or KEM ciphertext


@dataclass(frozen=True)
class SignatureAlgorithm:
    name: str
    public_key: int
    signature: int
    liboqs_name: str | None  # None where liboqs 0.16.0 does not have it (classical, FN-DSA, HAWK, SQIsign)
    source: str = LIBOQS


@dataclass(frozen=True)
class KemAlgorithm:
    name: str
    public_key: int
    ciphertext: int
    liboqs_name: str
    source: str = LIBOQS


_PAPER_SIGNATURES = (
    SignatureAlgorithm("ECDSA-P256", 65, 64, None, CLASSICAL_SOURCE),
    SignatureAlgorithm("ML-DSA-44", 1312, 2420, "ML-DSA-44"),
    SignatureAlgorithm("ML-DSA-65", 1952, 3309, "ML-DSA-65"),
    SignatureAlgorithm("Falcon-512", 897, 666, "Falcon-padded-512"),
    SignatureAlgorithm("SLH-DSA-SHA2-128s", 32, 7856, "SLH_DSA_PURE_SHA2_128S"),
    SignatureAlgorithm("SLH-DSA-SHA2-128f", 32, 17088, "SLH_DSA_PURE_SHA2_128F"),
    SignatureAlgorithm("MAYO-2", 4912, 186, "MAYO-2"),
    SignatureAlgorithm("SNOVA-24-5-4", 1016, 248, "SNOVA_24_5_4"),
    SignatureAlgorithm("UOV-Is-pkc", 66576, 96, "OV-Is-pkc"),
)
# Newer: FIPS 204's third set, FN-DSA (draft FIPS 206), and NIST's round-2 additional signatures.
_NEWER_SIGNATURES = (
    SignatureAlgorithm("ML-DSA-87", 2592, 4627, "ML-DSA-87"),
    SignatureAlgorithm("FN-DSA-512", 897, 666, None, PQM4_API.format(scheme="fndsa_provisional-512")),
    SignatureAlgorithm("FN-DSA-1024", 1793, 1280, None, PQM4_API.format(scheme="fndsa_provisional-1024")),
    SignatureAlgorithm("MAYO-1", 1420, 454, "MAYO-1"),
    SignatureAlgorithm("MAYO-3", 2986, 681, "MAYO-3"),
    SignatureAlgorithm("MAYO-5", 5554, 964, "MAYO-5"),
    SignatureAlgorithm("UOV-Ip", 278432, 128, "OV-Ip"),
    SignatureAlgorithm("UOV-Ip-pkc", 43576, 128, "OV-Ip-pkc"),
    SignatureAlgorithm("SNOVA-25-8-3", 2320, 165, "SNOVA_25_8_3"),
    SignatureAlgorithm("SNOVA-37-17-2", 9842, 124, "SNOVA_37_17_2"),
    SignatureAlgorithm("SQIsign-I", 65, 148, None, SQISIGN_API.format(level=1)),
    SignatureAlgorithm("SQIsign-III", 97, 224, None, SQISIGN_API.format(level=3)),
    SignatureAlgorithm("SQIsign-V", 129, 292, None, SQISIGN_API.format(level=5)),
    SignatureAlgorithm("HAWK-512", 1024, 555, None, PQM4_API.format(scheme="hawk512")),
    SignatureAlgorithm("HAWK-1024", 2440, 1221, None, PQM4_API.format(scheme="hawk1024")),
    SignatureAlgorithm("CROSS-RSDP-128-small", 77, 12432, "cross-rsdp-128-small"),
    SignatureAlgorithm("CROSS-RSDPG-128-small", 54, 8960, "cross-rsdpg-128-small"),
    SignatureAlgorithm("CROSS-RSDPG-128-balanced", 54, 9120, "cross-rsdpg-128-balanced"),
    SignatureAlgorithm("CROSS-RSDPG-128-fast", 54, 11980, "cross-rsdpg-128-fast"),
)
_PAPER_KEMS = (
    KemAlgorithm("ML-KEM-512", 800, 768, "ML-KEM-512"),
    KemAlgorithm("ML-KEM-768", 1184, 1088, "ML-KEM-768"),
    KemAlgorithm("ML-KEM-1024", 1568, 1568, "ML-KEM-1024"),
)
# HQC, NIST's 2025 KEM selection, in its 2025 revision (liboqs 0.16.0 names its sets HQC-1/3/5).
_NEWER_KEMS = (
    KemAlgorithm("HQC-1", 2241, 4433, "HQC-1"),
    KemAlgorithm("HQC-3", 4514, 8978, "HQC-3"),
    KemAlgorithm("HQC-5", 7237, 14421, "HQC-5"),
)

SIGNATURES: dict[str, SignatureAlgorithm] = {s.name: s for s in _PAPER_SIGNATURES + _NEWER_SIGNATURES}
KEMS: dict[str, KemAlgorithm] = {k.name: k for k in _PAPER_KEMS + _NEWER_KEMS}
PAPER_SIGNATURES = tuple(s.name for s in _PAPER_SIGNATURES)  # what the PQ-CASE paper's stages may name
PAPER_KEMS = tuple(k.name for k in _PAPER_KEMS)

P256_POINT = 65  # ECDH share: uncompressed point


def signature(name: str) -> SignatureAlgorithm:
    if name not in SIGNATURES:
        raise UnknownCaseAlgorithmError(f"no sizes for signature {name!r}; known: {sorted(SIGNATURES)}",
                                        field="algorithm")
    return SIGNATURES[name]


def kem(name: str) -> KemAlgorithm:
    if name not in KEMS:
        raise UnknownCaseAlgorithmError(f"no sizes for KEM {name!r}; known: {sorted(KEMS)}", field="algorithm")
    return KEMS[name]


def key_exchange_parts(name: str) -> tuple[KeyExchangeSizes, ...]:
    """The components of a key exchange: ``P-256``, ``ML-KEM-768``, or a hybrid ``P-256+ML-KEM-768``."""
    parts = []
    for part in name.split("+"):
        if part == "P-256":
            parts.append(KeyExchangeSizes("P-256", P256_POINT, P256_POINT))
        else:
            k = kem(part)
            parts.append(KeyExchangeSizes(k.name, k.public_key, k.ciphertext))
    if not parts or len(parts) > 2 or len({p.name for p in parts}) != len(parts):
        raise UnknownCaseAlgorithmError(f"bad key exchange {name!r}", field="key_exchange")
    return tuple(parts)
