"""The KEM and signature interfaces every backend implements, their size records, and what the registry asks of a
backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pqlab.errors import CryptoInputError


@dataclass(frozen=True)
class KemSizes:
    """Octet lengths of one KEM's objects, measured from real backend output."""

    public_key: int
    secret_key: int | None
    ciphertext: int
    shared_secret: int


@dataclass(frozen=True)
class SignatureSizes:
    """Octet lengths of one signature scheme's objects, measured from real backend output."""

    public_key: int
    secret_key: int | None
    signature: int


@dataclass(frozen=True)
class KeyPair:
    """A public key as bytes and a backend-specific secret-key handle."""

    public: bytes
    secret: Any


def require_bytes(value: object, name: str, length: int | None = None) -> bytes:
    """Check a wire value is bytes (of ``length`` octets when given) or raise CryptoInputError."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise CryptoInputError(f"must be bytes, not {type(value).__name__}", field=name)
    value = bytes(value)
    if length is not None and len(value) != length:
        raise CryptoInputError(f"must be {length} octets, got {len(value)}", field=name)
    return value


class Kem(ABC):
    """Key encapsulation: keygen, encaps to a public key, decaps with the matching secret."""

    backend: str
    algorithm: str

    @abstractmethod
    def keygen(self) -> KeyPair:
        """A fresh key pair from the backend's own randomness."""

    @abstractmethod
    def encaps(self, public_key: bytes) -> tuple[bytes, bytes]:
        """Encapsulate to ``public_key``; returns ``(ciphertext, shared_secret)``."""

    @abstractmethod
    def decaps(self, secret_key: Any, ciphertext: bytes) -> bytes:
        """Recover the shared secret from ``ciphertext`` with this backend's secret key."""

    def secret_key_octets(self, secret_key: Any) -> int | None:
        """Length of the secret key in FIPS 203 expanded form, or None if the backend keeps a seed."""
        return None

    @cached_property
    def sizes(self) -> KemSizes:
        """Sizes measured by one real keygen and encapsulation."""
        pair = self.keygen()
        ciphertext, shared = self.encaps(pair.public)
        return KemSizes(len(pair.public), self.secret_key_octets(pair.secret), len(ciphertext), len(shared))

    def __repr__(self) -> str:
        return f"<Kem {self.algorithm} via {self.backend}>"


class Signer(ABC):
    """Signatures: keygen, sign with a secret-key handle, verify with public-key bytes."""

    backend: str
    algorithm: str

    @abstractmethod
    def keygen(self) -> KeyPair:
        """A fresh key pair from the backend's own randomness."""

    @abstractmethod
    def sign(self, secret_key: Any, message: bytes, context: bytes = b"") -> bytes:
        """Sign ``message`` (pure mode, FIPS 204/205 context string ``context``)."""

    @abstractmethod
    def verify(self, public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
        """True when ``signature`` is valid; False for any invalid or malformed signature."""

    def secret_key_octets(self, secret_key: Any) -> int | None:
        """Length of the secret key in FIPS expanded form, or None if the backend keeps a seed."""
        return None

    @cached_property
    def sizes(self) -> SignatureSizes:
        """Sizes measured by one real keygen and signature."""
        pair = self.keygen()
        signature = self.sign(pair.secret, b"pqlab size probe")
        return SignatureSizes(len(pair.public), self.secret_key_octets(pair.secret), len(signature))

    def __repr__(self) -> str:
        return f"<Signer {self.algorithm} via {self.backend}>"


class Backend(ABC):
    """What the registry asks of a backend: whether it is usable here and why, its version, the algorithms it offers
    (by default every name in its tables: pqlab name -> the backend's own) and the shared library it loaded."""

    def __init__(self, kems: Mapping[str, Any], signers: Mapping[str, Any]) -> None:
        self._kems = kems
        self._signers = signers

    @abstractmethod
    def availability(self) -> tuple[bool, str]:
        """``(True, note)`` when the backend is usable here, else ``(False, why not)``."""

    @abstractmethod
    def version(self) -> str:
        """The versions of what the backend runs on."""

    def kem_algorithms(self) -> list[str]:
        """The KEMs it offers here."""
        return list(self._kems)

    def signature_algorithms(self) -> list[str]:
        """The signature schemes it offers here."""
        return list(self._signers)

    def library_file(self) -> str | None:
        """The shared library file it loaded, where it can say."""
        return None


class PackageBackend(Backend):
    """A backend usable exactly when its Python package imports; otherwise the reason opens with ``missing``."""

    missing: str

    @abstractmethod
    def probe(self) -> None:
        """Import what the backend needs; raises ImportError where it is missing."""

    def availability(self) -> tuple[bool, str]:
        """``(True, "ok")`` when ``probe`` imports, else ``(False, "<missing> (<the ImportError>)")``."""
        try:
            self.probe()
        except ImportError as exc:
            return False, f"{self.missing} ({exc})"
        return True, "ok"
