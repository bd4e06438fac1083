"""Key derivation and MACs of AMORT-V1 §IV-A/B: HKDF-Extract/Expand (``cryptography``) and truncated HMAC-SHA-256."""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

KEY_OCTETS = 32


def transcript_hash(*parts: bytes) -> bytes:
    """H(transcript): SHA-256 over the concatenated epoch-exchange messages."""
    return hashlib.sha256(b"".join(parts)).digest()


def extract(salt: bytes, ikm: bytes) -> bytes:
    """HKDF-Extract(salt, IKM) (RFC 5869 §2.2) via ``cryptography``'s ``HKDF.extract``.

    Older ``cryptography`` releases have no public Extract; RFC 5869 defines it as HMAC-Hash(salt, IKM),
    so the fallback computes exactly that with the standard library (tested against RFC 5869 case 1).
    """
    if hasattr(HKDF, "extract"):
        return HKDF.extract(hashes.SHA256(), salt, ikm)
    return hmac.digest(salt, ikm, "sha256")


def expand(prk: bytes, info: bytes, length: int = KEY_OCTETS) -> bytes:
    """HKDF-Expand(PRK, info, L) (RFC 5869 §2.3)."""
    return HKDFExpand(hashes.SHA256(), length, info).derive(prk)


def label(name: bytes, dev_id: bytes, epoch: int) -> bytes:
    """The ``info`` string ``name ‖ dev_id ‖ epoch`` (epoch as 4 octets, big-endian)."""
    return name + dev_id + epoch.to_bytes(4, "big")


def epoch_keys(transcript: bytes, shared_secret: bytes, dev_id: bytes, epoch: int) -> tuple[bytes, bytes]:
    """(K_confirm, K_evid): K_ep = HKDF-Extract(H(transcript), ss), then two Expands with distinct labels."""
    k_ep = extract(transcript, shared_secret)
    return expand(k_ep, label(b"confirm", dev_id, epoch)), expand(k_ep, label(b"evidence", dev_id, epoch))


def mac(key: bytes, data: bytes, length: int = 32) -> bytes:
    """HMAC-SHA-256 truncated to its first ``length`` octets."""
    return hmac.digest(key, data, "sha256")[:length]


def mac_ok(key: bytes, data: bytes, tag: bytes) -> bool:
    """Constant-time check of a truncated tag (its own length decides the truncation)."""
    return len(tag) > 0 and hmac.compare_digest(mac(key, data, len(tag)), tag)


def evidence_input(record: bytes, dtag: bytes, hardened: bool) -> bytes:
    """What the evidence tag covers: the record (paper), or the record and the disclosure tag (hardened: a
    network change of the disclosure tag then fails the evidence MAC at the controller, N05)."""
    return record + dtag if hardened else record
