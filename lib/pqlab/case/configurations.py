"""CASE configurations as parameterised objects, the handshake they produce, and the 15 of the paper's Table I.

A configuration fixes the key exchange, the NOC/ICAC/RCAC algorithms, how the responder authenticates
(signature as in SIGMA, KEM as in KEMTLS, KEM-PDK as in KEMTLS-PDK) and which chains the peer already holds.
``handshake`` builds every message with the real encoder; ``case_message_sizes`` is ``len()`` of those bytes.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pqlab.case import algorithms, messages
from pqlab.case.certificates import Chain, build_chain, parts_of
from pqlab.case.material import Material, SizedMaterial
from pqlab.case.messages import Message, SessionParameters
from pqlab.errors import PqlabError
from pqlab.framing import MAX_APP_MESSAGE_OCTETS  # kMaxAppMessageLen, re-exported for the size model's callers

Auth = Literal["sig", "kem", "kem-pdk"]
Cached = Literal["none", "responder", "both"]


class CaseConfigError(PqlabError):
    """A configuration that cannot be built (unknown algorithm, impossible combination)."""

    code = "CASE_BAD_CONFIG"


@dataclass(frozen=True)
class CaseConfig:
    """One point of the design space.

    ``noc`` is the NOC signature algorithm of both parties (with ``auth`` "kem"/"kem-pdk" the responder's NOC
    carries the ``auth_kem`` key instead); ``icac`` None means no intermediate CA; a composite algorithm is
    written ``ECDSA-P256+ML-DSA-44``. ``cached``: "responder" = the initiator holds the responder's chain,
    "both" = each side holds the other's.
    """

    key_exchange: str = "P-256"
    noc: str = "ECDSA-P256"
    icac: str | None = "ECDSA-P256"
    rcac: str = "ECDSA-P256"
    auth: Auth = "sig"
    cached: Cached = "none"
    auth_kem: str | None = None  # responder static KEM; None: the key exchange's ML-KEM (else ML-KEM-768)
    name: str = ""
    group: str = ""
    initiator_session_id: int = 0x1234
    responder_session_id: int = 0x5678
    session_parameters: SessionParameters = field(default_factory=SessionParameters)

    def __post_init__(self) -> None:
        try:
            algorithms.key_exchange_parts(self.key_exchange)
            for alg in (self.noc, self.icac, self.rcac):
                if alg is not None:
                    for part in parts_of(alg):
                        algorithms.signature(part)
            if self.auth != "sig":
                algorithms.kem(self.responder_kem)
        except algorithms.UnknownCaseAlgorithmError as exc:
            raise CaseConfigError(str(exc), field=f"config {self.name or '?'}") from exc
        if self.auth not in ("sig", "kem", "kem-pdk"):
            raise CaseConfigError(f"auth must be sig, kem or kem-pdk (got {self.auth!r})", field="auth")
        if self.cached not in ("none", "responder", "both"):
            raise CaseConfigError(f"cached must be none, responder or both (got {self.cached!r})", field="cached")

    @property
    def responder_kem(self) -> str:
        if self.auth_kem is not None:
            return self.auth_kem
        kems = [p.name for p in algorithms.key_exchange_parts(self.key_exchange) if p.name != "P-256"]
        return kems[0] if kems else "ML-KEM-768"

    @property
    def chain_label(self) -> str:
        """Table I's chain notation, e.g. ``M/–/M`` (E, F, M, Y, U, S = SLH-DSA, N = SNOVA)."""
        short = {"ECDSA-P256": "E", "Falcon-512": "F", "ML-DSA-44": "M", "MAYO-2": "Y", "UOV-Is-pkc": "U",
                 "SLH-DSA-SHA2-128s": "S", "SNOVA-24-5-4": "N", "ML-DSA-65": "M65", "SLH-DSA-SHA2-128f": "Sf"}

        def one(alg: str | None) -> str:
            return "–" if alg is None else "+".join(short.get(p, p) for p in parts_of(alg))

        return "/".join(one(a) for a in (self.noc, self.icac, self.rcac))


@dataclass(frozen=True)
class Handshake:
    """The messages of one full CASE handshake and the chains behind them."""

    config: CaseConfig
    sigma1: Message
    sigma2: Message
    sigma3: Message
    status: Message
    responder_chain: Chain
    initiator_chain: Chain

    @property
    def messages(self) -> tuple[Message, ...]:
        return (self.sigma1, self.sigma2, self.sigma3, self.status)


def _kex(config: CaseConfig, material: Material, label: str) -> tuple[bytes, bytes]:
    """(initiator share, responder reply): concatenated per component, P-256 first, as in hybrid TLS."""
    share, reply = b"", b""
    for part in algorithms.key_exchange_parts(config.key_exchange):
        if part.name == "P-256":
            share += material.keypair("P-256", f"{label}/initiator-eph")[0]
            reply += material.keypair("P-256", f"{label}/responder-eph")[0]
        else:
            public, _secret = material.keypair(part.name, f"{label}/initiator-eph")
            share += public
            reply += material.encapsulate(part.name, public)
    return share, reply


def _sign(material: Material, chain: Chain, message: bytes) -> bytes:
    """A NOC-key signature; for a composite key, the component signatures concatenated."""
    return b"".join(material.sign(part, secret, message)
                    for part, secret in zip(parts_of(chain.noc.algorithm), chain.noc.secrets, strict=True))


def _destination_id(material: Material, random: bytes, chain: Chain) -> bytes:
    """HMAC-SHA256(IPK, random | root public key | fabric id | node id), as Sigma1's destination id."""
    ipk = material.random(16, "ipk")
    subject = dict(chain.noc.subject)
    message = random + chain.rcac.public_keys[0] + subject[21].to_bytes(8, "little") + subject[17].to_bytes(8, "little")
    return hmac.new(ipk, message, hashlib.sha256).digest()


@lru_cache(maxsize=8192)
def _sized_chain(noc: str, icac: str | None, rcac: str, seed: int, role: str, node_id: int) -> Chain:
    return build_chain(noc, icac, rcac, SizedMaterial(seed), f"{role}:{noc}/{icac}/{rcac}", node_id=node_id)


def clear_chain_cache() -> None:
    """Forget the shared sized chains (benchmarks time a cold sweep)."""
    _sized_chain.cache_clear()


def _chain(noc: str, icac: str | None, rcac: str, material: Material, role: str, node_id: int) -> Chain:
    """A party's chain; sized (deterministic) chains are built once per algorithm triple and reused.

    A design-space sweep meets each chain hundreds of times; chains are immutable, so sharing is safe.
    """
    if type(material) is SizedMaterial:
        return _sized_chain(noc, icac, rcac, material.seed, role, node_id)
    return build_chain(noc, icac, rcac, material, f"{role}:{noc}/{icac}/{rcac}", node_id=node_id)


def handshake(config: CaseConfig, material: Material | None = None) -> Handshake:
    """Build every message of a full handshake for ``config``."""
    material = material or SizedMaterial()
    label = config.name or "case"
    responder_noc = config.noc if config.auth == "sig" else config.responder_kem
    responder = _chain(responder_noc, config.icac, config.rcac, material, "responder", 0xDEDEDEDE00010001)
    initiator = _chain(config.noc, config.icac, config.rcac, material, "initiator", 0xDEDEDEDE00010002)
    params = config.session_parameters
    share, reply = _kex(config, material, label)
    s2_key = material.random(messages.AEAD_KEY_OCTETS, "s2k")
    s3_key = material.random(messages.AEAD_KEY_OCTETS, "s3k")

    pdk_ct = (material.encapsulate(config.responder_kem, responder.noc.public_keys[0])
              if config.auth == "kem-pdk" else None)
    random1 = material.random(messages.RANDOM_OCTETS, "initiator-random")
    s1 = messages.sigma1(random=random1, session_id=config.initiator_session_id,
                         destination_id=_destination_id(material, random1, responder), share=share, params=params,
                         pdk_ciphertext=pdk_ct)

    resumption_id = material.random(messages.RESUMPTION_ID_OCTETS, "resumption-id")
    if config.auth == "kem-pdk":  # the initiator holds the responder's key: no credentials, a key-confirmation MAC
        tbe2 = messages.tbe_data(chain=None, chain_reference=None, signature=None, resumption_id=resumption_id,
                                 key_confirmation=messages.key_confirmation(s2_key, s1.encoded + reply))
    else:
        reference = (material.random(messages.CHAIN_REFERENCE_OCTETS, "responder-chain-ref")
                     if config.cached in ("responder", "both") else None)
        signature = (_sign(material, responder, messages.tbs_data(responder, reply, share))
                     if config.auth == "sig" else None)
        tbe2 = messages.tbe_data(chain=responder, chain_reference=reference, signature=signature,
                                 resumption_id=resumption_id)
    s2 = messages.sigma2(random=material.random(messages.RANDOM_OCTETS, "responder-random"),
                         session_id=config.responder_session_id, share=reply, tbe=tbe2, key=s2_key, params=params)

    reference3 = (material.random(messages.CHAIN_REFERENCE_OCTETS, "initiator-chain-ref")
                  if config.cached == "both" else None)
    kem_ct = (material.encapsulate(config.responder_kem, responder.noc.public_keys[0])
              if config.auth == "kem" else None)
    tbe3 = messages.tbe_data(chain=initiator, chain_reference=reference3,
                             signature=_sign(material, initiator, messages.tbs_data(initiator, share, reply)),
                             kem_ciphertext=kem_ct)
    s3 = messages.sigma3(tbe=tbe3, key=s3_key)
    # KEM authentication: the responder's first proof of its static key comes after Sigma3 (KEMTLS Finished)
    confirmation = (messages.key_confirmation(material.random(messages.AEAD_KEY_OCTETS, "kc-key"),
                                              s1.encoded + s2.encoded + s3.encoded)
                    if config.auth == "kem" else None)
    status = messages.status_report(key_confirmation=confirmation)
    return Handshake(config, s1, s2, s3, status, responder, initiator)


def case_message_sizes(config: CaseConfig, material: Material | None = None) -> dict[str, int]:
    """Payload bytes of Sigma1, Sigma2, Sigma3 and the status report, and their total, from encoded messages."""
    hs = handshake(config, material)
    sizes = {m.name: len(m.encoded) for m in hs.messages}
    sizes["Total"] = sum(sizes.values())
    return sizes


def resumption(config: CaseConfig, with_share: bool = True, material: Material | None = None) -> dict[str, Message]:
    """Resumption: Sigma1 with resumption id and MIC (with or without the ephemeral share), Sigma2Resume, status."""
    material = material or SizedMaterial()
    label = f"{config.name or 'case'}/resume"
    share, _reply = _kex(config, material, label)
    key = material.random(messages.AEAD_KEY_OCTETS, "resume-key")
    params = config.session_parameters
    s1 = messages.sigma1(random=material.random(messages.RANDOM_OCTETS, f"{label}/random"),
                         session_id=config.initiator_session_id,
                         destination_id=material.random(messages.DESTINATION_ID_OCTETS, f"{label}/dest"),
                         share=share if with_share else None, params=params,
                         resumption_id=material.random(messages.RESUMPTION_ID_OCTETS, f"{label}/old-id"),
                         resume_mic=messages.resume_mic(key, messages.NONCE_RESUME1))
    s2r = messages.sigma2_resume(resumption_id=material.random(messages.RESUMPTION_ID_OCTETS, f"{label}/new-id"),
                                 mic=messages.resume_mic(key, messages.NONCE_RESUME2),
                                 session_id=config.responder_session_id, params=params)
    return {"Sigma1": s1, "Sigma2Resume": s2r, "StatusReport": messages.status_report()}


def resumption_sizes(config: CaseConfig, with_share: bool = True) -> dict[str, int]:
    sizes = {name: len(m) for name, m in resumption(config, with_share).items()}
    sizes["Total"] = sum(sizes.values())
    return sizes


def _c(name: str, group: str, kex: str, chain: tuple[str, str | None, str], auth: Auth = "sig",
       cached: Cached = "none") -> CaseConfig:
    return CaseConfig(key_exchange=kex, noc=chain[0], icac=chain[1], rcac=chain[2], auth=auth, cached=cached,
                      name=name, group=group)


E, F, M, Y, U = "ECDSA-P256", "Falcon-512", "ML-DSA-44", "MAYO-2", "UOV-Is-pkc"
EM = "ECDSA-P256+ML-DSA-44"
K768, K512 = "ML-KEM-768", "ML-KEM-512"
HYB768, HYB512 = "P-256+ML-KEM-768", "P-256+ML-KEM-512"

# Table I of Commey, arXiv:2610.13026 (key exchange, NOC/ICAC/RCAC, responder auth, cached chains)
TABLE1: tuple[CaseConfig, ...] = (
    _c("B", "baseline", "P-256", (E, E, E)),
    _c("D1", "drop-in", HYB768, (E, E, E)),
    _c("D2", "drop-in", HYB768, (F, F, F)),
    _c("D3", "drop-in", K768, (M, M, M)),
    _c("D4", "drop-in", HYB768, (EM, EM, EM)),
    _c("S1", "structural", K768, (M, None, M)),
    _c("S2", "structural", K768, (M, None, Y)),
    _c("S3", "structural", K768, (M, None, U)),
    _c("S4", "structural", K768, (M, M, M), auth="kem"),
    _c("S5", "structural", K768, (M, None, M), auth="kem"),
    _c("C1", "prior knowledge", HYB512, (E, E, E), cached="responder"),
    _c("C2", "prior knowledge", K768, (M, M, M), cached="responder"),
    _c("C3", "prior knowledge", K768, (M, M, M), cached="both"),
    _c("C4", "prior knowledge", K768, (M, None, M), auth="kem-pdk"),
    _c("C5", "prior knowledge", K768, (M, None, M), auth="kem-pdk", cached="both"),
)


def table1_config(name: str) -> CaseConfig:
    for config in TABLE1:
        if config.name == name:
            return config
    raise CaseConfigError(f"no Table I configuration {name!r}", field="name")


__all__ = ["MAX_APP_MESSAGE_OCTETS", "TABLE1", "CaseConfig", "CaseConfigError", "Handshake", "case_message_sizes",
           "handshake", "resumption", "resumption_sizes", "table1_config"]
