"""Byte sizes of the algorithms the CASE size model uses, with their sources.

Post-quantum sizes are liboqs 0.16.0's (commit 5a1a854b0dc9f2141bdc771c555ee60c37950183, the values
``OQS_KEM_*_length_*`` / ``OQS_SIG_*_length_*``), as listed in the shared ``data/pq_sizes.csv``; a test
checks this table against that file when it is present. P-256 sizes are SEC 1 / FIPS 186 (uncompressed
point 65 B, raw r||s signature 64 B, as Matter encodes them). Falcon-512 uses the padded (fixed-length)
signature, 666 B, because a size model needs one length per algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass

from pqlab.errors import PqlabError

SOURCE = "liboqs 0.16.0 5a1a854b0dc9f2141bdc771c555ee60c37950183 (PQ); SEC 1 / FIPS 186 (P-256)"


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
    liboqs_name: str | None  # None for classical algorithms (not in liboqs)


@dataclass(frozen=True)
class KemAlgorithm:
    name: str
    public_key: int
    ciphertext: int
    liboqs_name: str


SIGNATURES: dict[str, SignatureAlgorithm] = {s.name: s for s in (
    SignatureAlgorithm("ECDSA-P256", 65, 64, None),
    SignatureAlgorithm("ML-DSA-44", 1312, 2420, "ML-DSA-44"),
    SignatureAlgorithm("ML-DSA-65", 1952, 3309, "ML-DSA-65"),
    SignatureAlgorithm("Falcon-512", 897, 666, "Falcon-padded-512"),
    SignatureAlgorithm("SLH-DSA-SHA2-128s", 32, 7856, "SLH_DSA_PURE_SHA2_128S"),
    SignatureAlgorithm("SLH-DSA-SHA2-128f", 32, 17088, "SLH_DSA_PURE_SHA2_128F"),
    SignatureAlgorithm("MAYO-2", 4912, 186, "MAYO-2"),
    SignatureAlgorithm("SNOVA-24-5-4", 1016, 248, "SNOVA_24_5_4"),
    SignatureAlgorithm("UOV-Is-pkc", 66576, 96, "OV-Is-pkc"),
)}

KEMS: dict[str, KemAlgorithm] = {k.name: k for k in (
    KemAlgorithm("ML-KEM-512", 800, 768, "ML-KEM-512"),
    KemAlgorithm("ML-KEM-768", 1184, 1088, "ML-KEM-768"),
    KemAlgorithm("ML-KEM-1024", 1568, 1568, "ML-KEM-1024"),
)}

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
