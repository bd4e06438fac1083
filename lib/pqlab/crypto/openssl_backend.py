"""OpenSSL backend through ``cryptography`` (ML-KEM-768/1024, ML-DSA-44/65/87)."""

from __future__ import annotations

from typing import Any

from pqlab.crypto.base import Kem, KeyPair, PackageBackend, Signer, require_bytes
from pqlab.errors import CryptoInputError

NAME = "openssl"

_KEMS = {"ML-KEM-768": ("MLKEM768PrivateKey", "MLKEM768PublicKey"),
         "ML-KEM-1024": ("MLKEM1024PrivateKey", "MLKEM1024PublicKey")}
_SIGNERS = {"ML-DSA-44": ("MLDSA44PrivateKey", "MLDSA44PublicKey"),
            "ML-DSA-65": ("MLDSA65PrivateKey", "MLDSA65PublicKey"),
            "ML-DSA-87": ("MLDSA87PrivateKey", "MLDSA87PublicKey")}


class _OpenSSLBackend(PackageBackend):
    """This cryptography build, usable when it exposes ML-KEM and ML-DSA."""

    missing = "cryptography without ML-KEM/ML-DSA"

    def probe(self) -> None:
        """Import cryptography's ML-DSA and ML-KEM modules."""
        from cryptography.hazmat.primitives.asymmetric import mldsa, mlkem  # noqa: F401

    def version(self) -> str:
        """cryptography's version and the OpenSSL it was built against."""
        import cryptography
        from cryptography.hazmat.backends.openssl import backend

        return f"cryptography {cryptography.__version__}, {backend.openssl_version_text()}"


BACKEND = _OpenSSLBackend(_KEMS, _SIGNERS)


class _OpenSSLKeys:
    """What ML-KEM and ML-DSA share through ``cryptography``: the key classes, keygen, public-key parsing."""

    backend = NAME

    def __init__(self, algorithm: str, module: Any, class_names: tuple[str, str]) -> None:
        self.algorithm = algorithm
        private_name, public_name = class_names
        self._private_cls = getattr(module, private_name)
        self._public_cls = getattr(module, public_name)

    def keygen(self) -> KeyPair:
        secret = self._private_cls.generate()
        return KeyPair(secret.public_key().public_bytes_raw(), secret)

    def _public(self, public_key: bytes) -> Any:
        public_key = require_bytes(public_key, "public_key")
        try:
            return self._public_cls.from_public_bytes(public_key)
        except ValueError as exc:
            raise CryptoInputError(str(exc), field="public_key") from exc


class OpenSSLKem(_OpenSSLKeys, Kem):
    """ML-KEM through OpenSSL; secret keys are ``cryptography`` private-key objects."""

    def __init__(self, algorithm: str) -> None:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        super().__init__(algorithm, mlkem, _KEMS[algorithm])

    def encaps(self, public_key: bytes) -> tuple[bytes, bytes]:
        shared, ciphertext = self._public(public_key).encapsulate()
        return ciphertext, shared

    def decaps(self, secret_key: Any, ciphertext: bytes) -> bytes:
        ciphertext = require_bytes(ciphertext, "ciphertext")
        try:
            return secret_key.decapsulate(ciphertext)
        except ValueError as exc:
            raise CryptoInputError(str(exc), field="ciphertext") from exc


class OpenSSLSigner(_OpenSSLKeys, Signer):
    """ML-DSA through OpenSSL; secret keys are ``cryptography`` private-key objects."""

    def __init__(self, algorithm: str) -> None:
        from cryptography.hazmat.primitives.asymmetric import mldsa

        super().__init__(algorithm, mldsa, _SIGNERS[algorithm])

    def sign(self, secret_key: Any, message: bytes, context: bytes = b"") -> bytes:
        return secret_key.sign(message, context or None)

    def verify(self, public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
        from cryptography.exceptions import InvalidSignature

        public = self._public(public_key)
        try:
            public.verify(require_bytes(signature, "signature"), message, context or None)
        except (InvalidSignature, ValueError):
            return False
        return True
