"""``pqcrypto`` backend (PQClean via Rust): ML-KEM-512/768/1024, ML-DSA, SLH-DSA."""

from __future__ import annotations

import importlib
from typing import Any

from pqlab.crypto.base import Kem, KeyPair, PackageBackend, Signer, require_bytes
from pqlab.errors import CryptoInputError

NAME = "pqcrypto"

_KEMS = {"ML-KEM-512": "ml_kem_512", "ML-KEM-768": "ml_kem_768", "ML-KEM-1024": "ml_kem_1024"}
_SIGNERS = {
    "ML-DSA-44": "ml_dsa_44",
    "ML-DSA-65": "ml_dsa_65",
    "ML-DSA-87": "ml_dsa_87",
    "SLH-DSA-SHA2-128f": "slh_dsa_sha2_128f",
    "SLH-DSA-SHA2-128s": "slh_dsa_sha2_128s",
    "SLH-DSA-SHAKE-128f": "slh_dsa_shake_128f",
    "SLH-DSA-SHAKE-128s": "slh_dsa_shake_128s",
}


class _PqcryptoBackend(PackageBackend):
    """The pqcrypto wheel, usable when it imports."""

    missing = "pqcrypto not installed"

    def probe(self) -> None:
        """Import the pqcrypto wheel."""
        importlib.import_module("pqcrypto")

    def version(self) -> str:
        """The pqcrypto wheel's version."""
        return f"pqcrypto {importlib.import_module('pqcrypto').__version__}"


BACKEND = _PqcryptoBackend(_KEMS, _SIGNERS)


class _PqcryptoModule:
    """What a KEM and a signer share in pqcrypto: the algorithm's module, keygen, and secret keys held as bytes."""

    backend = NAME

    def __init__(self, algorithm: str, module: str) -> None:
        self.algorithm = algorithm
        self._module = importlib.import_module(module)

    def keygen(self) -> KeyPair:
        public, secret = self._module.keygen()
        return KeyPair(bytes(public), bytes(secret))

    def secret_key_octets(self, secret_key: Any) -> int | None:
        return len(secret_key)


class PqcryptoKem(_PqcryptoModule, Kem):
    """A pqcrypto KEM module; secret keys are the expanded FIPS 203 bytes."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(algorithm, f"pqcrypto.kem.{_KEMS[algorithm]}")

    def encaps(self, public_key: bytes) -> tuple[bytes, bytes]:
        public_key = require_bytes(public_key, "public_key", self._module.PUBLIC_KEY_SIZE)
        try:
            ciphertext, shared = self._module.encaps(public_key)
        except ValueError as exc:
            raise CryptoInputError(str(exc), field="public_key") from exc
        return bytes(ciphertext), bytes(shared)

    def decaps(self, secret_key: Any, ciphertext: bytes) -> bytes:
        ciphertext = require_bytes(ciphertext, "ciphertext", self._module.CIPHERTEXT_SIZE)
        return bytes(self._module.decaps(secret_key, ciphertext))


class PqcryptoSigner(_PqcryptoModule, Signer):
    """A pqcrypto signature module; secret keys are the expanded FIPS 204/205 bytes."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(algorithm, f"pqcrypto.sign.{_SIGNERS[algorithm]}")
        self._invalid = importlib.import_module("pqcrypto").InvalidSignatureError

    def sign(self, secret_key: Any, message: bytes, context: bytes = b"") -> bytes:
        return bytes(self._module.sign(secret_key, message, context or None))

    def verify(self, public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
        public_key = require_bytes(public_key, "public_key", self._module.PUBLIC_KEY_SIZE)
        signature = require_bytes(signature, "signature")
        try:
            self._module.verify(public_key, message, signature, context or None)
        except (self._invalid, ValueError):
            return False
        return True
