"""One KEM and one signature interface over liboqs, OpenSSL (``cryptography``) and ``pqcrypto``.

Importing this package loads no backend: each is probed on first use, and liboqs-python is
imported only after a liboqs shared library has been found (see ``liboqs_probe``).
"""

from pqlab.crypto.base import Kem, KemSizes, KeyPair, SignatureSizes, Signer
from pqlab.crypto.registry import (
    PREFERENCE,
    BackendStatus,
    backend_status,
    backends,
    backends_offering,
    get_kem,
    get_signer,
    resolve_backend,
)

__all__ = [
    "PREFERENCE",
    "BackendStatus",
    "Kem",
    "KemSizes",
    "KeyPair",
    "SignatureSizes",
    "Signer",
    "backend_status",
    "backends",
    "backends_offering",
    "get_kem",
    "get_signer",
    "resolve_backend",
]
