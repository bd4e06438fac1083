"""CASE messages (Sigma1, Sigma2, Sigma3, status report, resumption) encoded as Matter TLV, with real AES-CCM.

Field layout follows connectedhomeip ``src/protocols/secure_channel/CASESession.cpp`` @ 28f443f (EncodeSigma1,
EncodeSigma2, Sigma3, EncodeSigma2Resume, ConstructTBSData), the session-parameter struct of
``PairingSession::EncodeSessionParameters`` and ``StatusReport::WriteToBuffer``. Fields the post-quantum
variants add sit under new context tags listed here and in ``docs/case-encoding.md``.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers.aead import AESCCM

from pqlab.case import tlv
from pqlab.case.certificates import Chain
from pqlab.case.tlv import Element
from pqlab.errors import PqlabError

RANDOM_OCTETS = 32  # kSigmaParamRandomNumberSize
DESTINATION_ID_OCTETS = 32  # HMAC-SHA256
RESUMPTION_ID_OCTETS = 16  # SessionResumptionStorage::kResumptionIdSize
MIC_OCTETS = 16  # AES-CCM tag
CHAIN_REFERENCE_OCTETS = 8  # a reference to a chain the peer already holds (paper §III-A)
KEY_CONFIRMATION_OCTETS = 16  # KEM-PDK key-confirmation MAC (HMAC-SHA256 truncated to 128 bits)
AEAD_KEY_OCTETS = 16

# Sigma1 tags: 1-7 from CASESession.cpp; 8 is new
S1_RANDOM, S1_SESSION_ID, S1_DESTINATION_ID, S1_SHARE, S1_PARAMS, S1_RESUMPTION_ID, S1_RESUME_MIC = range(1, 8)
S1_PDK_CIPHERTEXT = 8  # new: KEM-PDK encapsulation to the responder's pre-distributed static key
# Sigma2 tags (CASESession.cpp)
S2_RANDOM, S2_SESSION_ID, S2_SHARE, S2_ENCRYPTED, S2_PARAMS = range(1, 6)
# TBEData2/TBEData3 tags: 1-4 from CASESession.cpp; 5-7 are new
TBE_NOC, TBE_ICAC, TBE_SIGNATURE, TBE_RESUMPTION_ID = range(1, 5)
TBE_CHAIN_REFERENCE = 5  # new: replaces NOC and ICAC when the peer already holds the chain
TBE_KEY_CONFIRMATION = 6  # new: KEM-PDK key-confirmation MAC (TBEData2)
TBE_KEM_CIPHERTEXT = 7  # new: KEM authentication, encapsulation to the responder's NOC key (TBEData3)
S3_ENCRYPTED = 1
STATUS_KEY_CONFIRMATION = 1  # new: responder key confirmation in the final status report (KEM authentication)
# Sigma2Resume tags (CASESession.cpp)
R2_RESUMPTION_ID, R2_MIC, R2_SESSION_ID, R2_PARAMS = range(1, 5)
# TBS data (signed, not sent)
TBS_NOC, TBS_ICAC, TBS_SENDER_SHARE, TBS_RECEIVER_SHARE = range(1, 5)

NONCE_SIGMA2 = b"NCASE_Sigma2N"
NONCE_SIGMA3 = b"NCASE_Sigma3N"
NONCE_RESUME1 = b"NCASE_SigmaS1"
NONCE_RESUME2 = b"NCASE_SigmaS2"


class CaseMessageError(PqlabError):
    """A CASE message cannot be built from the given fields."""

    code = "CASE_BAD_MESSAGE"


@dataclass(frozen=True)
class SessionParameters:
    """The session-parameter struct every Sigma message carries (values of the reference build)."""

    idle_interval_ms: int = 500
    active_interval_ms: int = 300
    active_threshold_ms: int = 4000
    data_model_revision: int = 18
    interaction_model_revision: int = 12
    specification_version: int = 0x01040100
    max_paths_per_invoke: int = 1

    def element(self, tag: int) -> Element:
        values = (self.idle_interval_ms, self.active_interval_ms, self.active_threshold_ms, self.data_model_revision,
                  self.interaction_model_revision, self.specification_version, self.max_paths_per_invoke)
        return tlv.structure(tag, *(tlv.uint(v, i) for i, v in enumerate(values, start=1)))


@dataclass(frozen=True)
class Message:
    """One encoded message and the bytes each of its fields takes (from the encoder's own output)."""

    name: str
    encoded: bytes
    fields: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.encoded)


def seal(key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """AES-CCM with a 16-byte tag, as CASE encrypts TBEData2/3.

    The 13-byte CASE nonces leave a 2-byte length field (plaintexts up to 65,535 B). Larger plaintexts, which
    only extreme design points produce (e.g. a UOV key in a sent certificate), use the first 12 nonce bytes,
    which allows 16 MiB; the ciphertext is plaintext + 16 B either way.
    """
    if len(plaintext) > 0xFFFF:
        nonce = nonce[:12]
    return AESCCM(key, tag_length=MIC_OCTETS).encrypt(nonce, plaintext, None)


def _encoded_with_breakdown(element: Element) -> tuple[bytes, dict[str, int]]:
    """A structure's encoding and the bytes each member takes in it, by context tag name, plus its own 2."""
    encoded, member_sizes = tlv.encode_with_member_sizes(element)
    sizes = {_name(child.tag): size for child, size in zip(element.value, member_sizes, strict=True)}
    sizes["struct"] = 2  # control byte + end-of-container of the anonymous outer structure
    return encoded, sizes


def _name(tag: tlv.Tag) -> str:
    return f"tag{tag.number}" if isinstance(tag, tlv.ContextTag) else repr(tag)


def _labelled(sizes: dict[str, int], names: dict[str, str]) -> dict[str, int]:
    return {names.get(key, key): value for key, value in sizes.items()}


def status_report(general_code: int = 0, protocol_id: int = 0x0000, protocol_code: int = 0,
                  key_confirmation: bytes | None = None) -> Message:
    """StatusReport::WriteToBuffer: general code (2) | protocol id (4) | protocol code (2), little-endian.

    With KEM authentication the responder proves it decapsulated the initiator's ciphertext (KEMTLS's server
    Finished): the 16-byte MAC follows as protocol-specific data, a TLV octet string under context tag
    ``STATUS_KEY_CONFIRMATION`` (new), encoded as it appears inside a container.
    """
    encoded = struct.pack("<HIH", general_code, protocol_id, protocol_code)
    fields = {"general code": 2, "protocol id": 4, "protocol code": 2}
    if key_confirmation is not None:
        element = tlv.octets(key_confirmation, STATUS_KEY_CONFIRMATION)
        member = tlv.encode(tlv.structure(None, element))[1:-1]
        encoded += member
        fields["key confirmation"] = len(member)
    return Message("StatusReport", encoded, fields)


def sigma1(*, random: bytes, session_id: int, destination_id: bytes, share: bytes | None,
           params: SessionParameters, resumption_id: bytes | None = None, resume_mic: bytes | None = None,
           pdk_ciphertext: bytes | None = None) -> Message:
    """Sigma1; ``share`` None omits the ephemeral share (the optional-share resumption variant)."""
    members = [tlv.octets(random, S1_RANDOM), tlv.uint(session_id, S1_SESSION_ID),
               tlv.octets(destination_id, S1_DESTINATION_ID)]
    if share is not None:
        members.append(tlv.octets(share, S1_SHARE))
    members.append(params.element(S1_PARAMS))
    if (resumption_id is None) != (resume_mic is None):
        raise CaseMessageError("resumption id and resume MIC go together (CASESession.cpp ParseSigma1)",
                               field="sigma1")
    if resumption_id is not None:
        members += [tlv.octets(resumption_id, S1_RESUMPTION_ID), tlv.octets(resume_mic, S1_RESUME_MIC)]
    if pdk_ciphertext is not None:
        members.append(tlv.octets(pdk_ciphertext, S1_PDK_CIPHERTEXT))
    element = tlv.structure(None, *members)
    names = {"tag1": "random", "tag2": "session id", "tag3": "destination id", "tag4": "ephemeral share",
             "tag5": "session params", "tag6": "resumption id", "tag7": "resume MIC", "tag8": "KEM-PDK ciphertext",
             "struct": "struct"}
    encoded, sizes = _encoded_with_breakdown(element)
    return Message("Sigma1", encoded, _labelled(sizes, names))


_TBE_NAMES = {"tag1": "NOC", "tag2": "ICAC", "tag3": "signature", "tag4": "resumption id",
              "tag5": "chain reference", "tag6": "key confirmation", "tag7": "KEM ciphertext", "struct": "struct"}


def tbe_data(*, chain: Chain | None, chain_reference: bytes | None, signature: bytes | None,
             resumption_id: bytes | None = None, key_confirmation: bytes | None = None,
             kem_ciphertext: bytes | None = None) -> Element:
    """TBEData2 (with a resumption id) or TBEData3 (without): the sender's credentials and proof."""
    members = []
    if chain_reference is not None:
        members.append(tlv.octets(chain_reference, TBE_CHAIN_REFERENCE))
    elif chain is not None:
        members.append(tlv.octets(chain.noc.encoded, TBE_NOC))
        if chain.icac is not None:
            members.append(tlv.octets(chain.icac.encoded, TBE_ICAC))
    if signature is not None:
        members.append(tlv.octets(signature, TBE_SIGNATURE))
    if resumption_id is not None:
        members.append(tlv.octets(resumption_id, TBE_RESUMPTION_ID))
    if key_confirmation is not None:
        members.append(tlv.octets(key_confirmation, TBE_KEY_CONFIRMATION))
    if kem_ciphertext is not None:
        members.append(tlv.octets(kem_ciphertext, TBE_KEM_CIPHERTEXT))
    return tlv.structure(None, *members)


def tbs_data(chain: Chain, sender_share: bytes, receiver_share: bytes) -> bytes:
    """ConstructTBSData: what a Sigma2/Sigma3 signature covers (not transmitted)."""
    members = [tlv.octets(chain.noc.encoded, TBS_NOC)]
    if chain.icac is not None:
        members.append(tlv.octets(chain.icac.encoded, TBS_ICAC))
    members += [tlv.octets(sender_share, TBS_SENDER_SHARE), tlv.octets(receiver_share, TBS_RECEIVER_SHARE)]
    return tlv.encode(tlv.structure(None, *members))


def _sealed(prefix: str, tbe: Element, key: bytes, nonce: bytes, tag: int) -> tuple[Element, dict[str, int]]:
    """The encrypted member carrying ``tbe`` and the bytes of each TBE field, the MIC and the element header;
    ``element header`` is completed by the caller from the member's size in the message."""
    plaintext, tbe_sizes = _encoded_with_breakdown(tbe)
    encrypted = tlv.octets(seal(key, nonce, plaintext), tag)
    sizes = {f"{prefix}/{k}": v for k, v in _labelled(tbe_sizes, _TBE_NAMES).items()}
    sizes[f"{prefix}/MIC"] = MIC_OCTETS
    return encrypted, sizes


def sigma2(*, random: bytes, session_id: int, share: bytes, tbe: Element, key: bytes,
           params: SessionParameters) -> Message:
    encrypted, tbe_fields = _sealed("Encrypted2", tbe, key, NONCE_SIGMA2, S2_ENCRYPTED)
    element = tlv.structure(None, tlv.octets(random, S2_RANDOM), tlv.uint(session_id, S2_SESSION_ID),
                            tlv.octets(share, S2_SHARE), encrypted, params.element(S2_PARAMS))
    encoded, sizes = _encoded_with_breakdown(element)
    fields = {"random": sizes["tag1"], "session id": sizes["tag2"], "ephemeral share": sizes["tag3"],
              "session params": sizes["tag5"], "struct": 2}
    fields |= tbe_fields
    fields["Encrypted2/element header"] = sizes["tag4"] - len(encrypted.value)
    return Message("Sigma2", encoded, fields)


def sigma3(*, tbe: Element, key: bytes) -> Message:
    encrypted, tbe_fields = _sealed("Encrypted3", tbe, key, NONCE_SIGMA3, S3_ENCRYPTED)
    encoded, sizes = _encoded_with_breakdown(tlv.structure(None, encrypted))
    fields = {"struct": 2} | tbe_fields
    fields["Encrypted3/element header"] = sizes["tag1"] - len(encrypted.value)
    return Message("Sigma3", encoded, fields)


def sigma2_resume(*, resumption_id: bytes, mic: bytes, session_id: int, params: SessionParameters) -> Message:
    element = tlv.structure(None, tlv.octets(resumption_id, R2_RESUMPTION_ID), tlv.octets(mic, R2_MIC),
                            tlv.uint(session_id, R2_SESSION_ID), params.element(R2_PARAMS))
    names = {"tag1": "resumption id", "tag2": "resume MIC", "tag3": "session id", "tag4": "session params",
             "struct": "struct"}
    encoded, sizes = _encoded_with_breakdown(element)
    return Message("Sigma2Resume", encoded, _labelled(sizes, names))


def resume_mic(key: bytes, nonce: bytes) -> bytes:
    """A resumption MIC: the AES-CCM tag over an empty plaintext."""
    return seal(key, nonce, b"")


def key_confirmation(key: bytes, transcript: bytes) -> bytes:
    """KEM-PDK key confirmation: HMAC-SHA256 over the transcript, truncated to 16 bytes."""
    return hmac.new(key, hashlib.sha256(transcript).digest(), hashlib.sha256).digest()[:KEY_CONFIRMATION_OCTETS]
