"""Key, signature and ciphertext bytes for building CASE messages: real where a backend exists, or sized.

Every algorithm in the size model produces outputs of one fixed length (Falcon in its padded form), so
message sizes do not depend on the bytes themselves. ``SizedMaterial`` therefore fills each field with
deterministic pseudo-random bytes of the algorithm's exact length (fast enough for design-space sweeps);
``RealMaterial`` generates real keys, signatures and encapsulations through ``pqlab.crypto`` and
``cryptography`` for the algorithms available here, and tests check that both give identical sizes.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from pqlab.case import algorithms


class Material(Protocol):
    """What message and certificate builders need from cryptography."""

    def keypair(self, algorithm: str, label: str) -> tuple[bytes, Any]: ...

    def sign(self, algorithm: str, secret: Any, message: bytes) -> bytes: ...

    def encapsulate(self, algorithm: str, public_key: bytes) -> bytes: ...

    def random(self, length: int, label: str) -> bytes: ...


def _public_length(algorithm: str) -> int:
    if algorithm in algorithms.KEMS:
        return algorithms.kem(algorithm).public_key
    if algorithm == "P-256":
        return algorithms.P256_POINT
    return algorithms.signature(algorithm).public_key


class SizedMaterial:
    """Deterministic bytes of each algorithm's exact output length (SHAKE-256 of seed and label)."""

    real = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._seed = seed.to_bytes(8, "little", signed=False)

    def _bytes(self, length: int, *parts: bytes) -> bytes:
        shake = hashlib.shake_256(self._seed)
        for part in parts:
            shake.update(len(part).to_bytes(4, "little") + part)
        return shake.digest(length)

    def random(self, length: int, label: str) -> bytes:
        return self._bytes(length, b"random", label.encode())

    def keypair(self, algorithm: str, label: str) -> tuple[bytes, Any]:
        public = self._bytes(_public_length(algorithm), b"key", algorithm.encode(), label.encode())
        if algorithm in ("ECDSA-P256", "P-256"):
            public = b"\x04" + public[1:]  # uncompressed point marker, as on the wire
        return public, (algorithm, label)

    def sign(self, algorithm: str, secret: Any, message: bytes) -> bytes:
        digest = hashlib.sha256(message).digest()
        return self._bytes(algorithms.signature(algorithm).signature, b"sig", repr(secret).encode(), digest)

    def encapsulate(self, algorithm: str, public_key: bytes) -> bytes:
        return self._bytes(algorithms.kem(algorithm).ciphertext, b"ct", algorithm.encode(), public_key)


class RealMaterial(SizedMaterial):
    """Real keys, signatures and ciphertexts (P-256 via cryptography; ML-KEM / ML-DSA / SLH-DSA via pqlab.crypto).

    Raises ``UnknownAlgorithmError`` for algorithms no backend here offers (Falcon, MAYO, SNOVA, UOV without
    liboqs). Random fields (nonces, session randoms) stay deterministic from the seed.
    """

    real = True

    def __init__(self, seed: int = 0, backend: str = "auto") -> None:
        super().__init__(seed)
        self._backend = backend

    def keypair(self, algorithm: str, label: str) -> tuple[bytes, Any]:
        from pqlab import crypto

        if algorithm in ("ECDSA-P256", "P-256"):
            secret = ec.generate_private_key(ec.SECP256R1())
            return secret.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint), secret
        if algorithm in algorithms.KEMS:
            pair = crypto.get_kem(algorithm, self._backend).keygen()
        else:
            pair = crypto.get_signer(algorithm, self._backend).keygen()
        return pair.public, pair.secret

    def sign(self, algorithm: str, secret: Any, message: bytes) -> bytes:
        from pqlab import crypto

        if algorithm == "ECDSA-P256":
            r, s = decode_dss_signature(secret.sign(message, ec.ECDSA(hashes.SHA256())))
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")  # Matter carries raw r||s
        return crypto.get_signer(algorithm, self._backend).sign(secret, message)

    def encapsulate(self, algorithm: str, public_key: bytes) -> bytes:
        from pqlab import crypto

        ciphertext, _shared = crypto.get_kem(algorithm, self._backend).encaps(public_key)
        return ciphertext
