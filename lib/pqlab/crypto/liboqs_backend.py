"""liboqs backend through liboqs-python, imported only once the shared library is known present."""

from __future__ import annotations

import contextlib
import ctypes.util
import logging
import sys
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from pqlab.crypto.base import Backend, Kem, KeyPair, Signer, require_bytes
from pqlab.crypto.liboqs_probe import loaded_file, locate_liboqs
from pqlab.errors import UnknownBackendError

NAME = "liboqs"

# pqlab name -> liboqs mechanism name (liboqs 0.16, as listed in tests/vectors/pq_sizes.csv).
_KEMS = {"ML-KEM-512": "ML-KEM-512", "ML-KEM-768": "ML-KEM-768", "ML-KEM-1024": "ML-KEM-1024"}
_SIGNERS = {
    "ML-DSA-44": "ML-DSA-44",
    "ML-DSA-65": "ML-DSA-65",
    "ML-DSA-87": "ML-DSA-87",
    "SLH-DSA-SHA2-128f": "SLH_DSA_PURE_SHA2_128F",
    "SLH-DSA-SHA2-128s": "SLH_DSA_PURE_SHA2_128S",
    "SLH-DSA-SHAKE-128f": "SLH_DSA_PURE_SHAKE_128F",
    "SLH-DSA-SHAKE-128s": "SLH_DSA_PURE_SHAKE_128S",
    "Falcon-512": "Falcon-512",
    "MAYO-2": "MAYO-2",
    "SNOVA-24-5-4": "SNOVA_24_5_4",
    "UOV-Is-pkc": "OV-Is-pkc",
}
# pqlab name -> liboqs 0.16 CMake algorithm id: what `make liboqs` builds by default (OQS_MINIMAL_BUILD).
BUILD_IDS = {
    "ML-KEM-512": "KEM_ml_kem_512", "ML-KEM-768": "KEM_ml_kem_768", "ML-KEM-1024": "KEM_ml_kem_1024",
    "ML-DSA-44": "SIG_ml_dsa_44", "ML-DSA-65": "SIG_ml_dsa_65", "ML-DSA-87": "SIG_ml_dsa_87",
    "SLH-DSA-SHA2-128f": "SIG_slh_dsa_pure_sha2_128f", "SLH-DSA-SHA2-128s": "SIG_slh_dsa_pure_sha2_128s",
    "SLH-DSA-SHAKE-128f": "SIG_slh_dsa_pure_shake_128f", "SLH-DSA-SHAKE-128s": "SIG_slh_dsa_pure_shake_128s",
    "Falcon-512": "SIG_falcon_512", "MAYO-2": "SIG_mayo_2", "SNOVA-24-5-4": "SIG_snova_SNOVA_24_5_4",
    "UOV-Is-pkc": "SIG_uov_ov_Is_pkc",
}


class _WarningsOnly(logging.Filter):
    """liboqs-python's logger: its import-time chatter ("faulthandler is disabled") dropped, warnings kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING


@contextlib.contextmanager
def _importing_oqs(library: str) -> Iterator[None]:
    """While ``oqs`` is imported: its ``find_library`` answers with the file the probe chose (so liboqs-python
    loads exactly that one and never reaches its download path), and the stdout it binds its log handler to is
    stderr, so no log line ever lands in a command's machine-readable stdout."""
    logging.getLogger("oqs.oqs").addFilter(_WarningsOnly())
    find_library = ctypes.util.find_library
    ctypes.util.find_library = lambda name: library if name in ("oqs", "liboqs") else find_library(name)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        ctypes.util.find_library = find_library


@lru_cache(maxsize=1)
def _oqs() -> Any:
    location = locate_liboqs()
    if not location.present:
        raise UnknownBackendError(location.reason, field="liboqs")
    with _importing_oqs(location.path):
        import oqs

    return oqs


class _LiboqsBackend(Backend):
    """liboqs through liboqs-python, offering the mechanisms the loaded library has enabled."""

    def availability(self) -> tuple[bool, str]:
        """Present only when a loadable liboqs shared library exists; never imports ``oqs`` to find out."""
        location = locate_liboqs()
        if not location.present:
            return False, location.reason
        try:
            _oqs()
        except (ImportError, RuntimeError, SystemExit) as exc:
            return False, f"liboqs at {location.path} but liboqs-python unusable: {exc}"
        return True, f"ok ({location.path})"

    def library_file(self) -> str | None:
        """The liboqs shared library file liboqs-python loaded (resolved through one of its functions)."""
        return loaded_file(_oqs().native().OQS_version)

    def version(self) -> str:
        """liboqs's and liboqs-python's versions."""
        oqs = _oqs()
        return f"liboqs {oqs.oqs_version()}, liboqs-python {oqs.oqs_python_version()}"

    def kem_algorithms(self) -> list[str]:
        """The KEMs in the table that the loaded liboqs has enabled."""
        enabled = set(_oqs().get_enabled_kem_mechanisms())
        return [name for name, mech in self._kems.items() if mech in enabled]

    def signature_algorithms(self) -> list[str]:
        """The signature schemes in the table that the loaded liboqs has enabled."""
        enabled = set(_oqs().get_enabled_sig_mechanisms())
        return [name for name, mech in self._signers.items() if mech in enabled]


BACKEND = _LiboqsBackend(_KEMS, _SIGNERS)


class _LiboqsHolders:
    """What a KEM and a signer share in liboqs-python: the mechanism, keygen into a fresh holder object (the
    secret-key handle), and the secret key's length as that object exports it."""

    backend = NAME

    def __init__(self, algorithm: str, mechanism: str, holder: str) -> None:
        self.algorithm = algorithm
        self._mechanism = mechanism
        self._holder = getattr(_oqs(), holder)

    def keygen(self) -> KeyPair:
        holder = self._holder(self._mechanism)
        public = bytes(holder.generate_keypair())
        return KeyPair(public, holder)

    def secret_key_octets(self, secret_key: Any) -> int | None:
        return len(secret_key.export_secret_key())


class LiboqsKem(_LiboqsHolders, Kem):
    """A liboqs KEM; the secret-key handle is the ``oqs.KeyEncapsulation`` object holding it."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(algorithm, _KEMS[algorithm], "KeyEncapsulation")
        self._encapsulator = self._holder(self._mechanism)
        self._public_octets = int(self._encapsulator.length_public_key)
        self._ciphertext_octets = int(self._encapsulator.length_ciphertext)

    def encaps(self, public_key: bytes) -> tuple[bytes, bytes]:
        public_key = require_bytes(public_key, "public_key", self._public_octets)
        ciphertext, shared = self._encapsulator.encap_secret(public_key)
        return bytes(ciphertext), bytes(shared)

    def decaps(self, secret_key: Any, ciphertext: bytes) -> bytes:
        ciphertext = require_bytes(ciphertext, "ciphertext", self._ciphertext_octets)
        return bytes(secret_key.decap_secret(ciphertext))


class LiboqsSigner(_LiboqsHolders, Signer):
    """A liboqs signature scheme; the secret-key handle is the ``oqs.Signature`` object holding it."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(algorithm, _SIGNERS[algorithm], "Signature")
        self._verifier = self._holder(self._mechanism)
        self._public_octets = int(self._verifier.length_public_key)

    def sign(self, secret_key: Any, message: bytes, context: bytes = b"") -> bytes:
        if context:
            return bytes(secret_key.sign_with_ctx_str(message, context))
        return bytes(secret_key.sign(message))

    def verify(self, public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
        public_key = require_bytes(public_key, "public_key", self._public_octets)
        signature = require_bytes(signature, "signature")
        try:
            if context:
                return bool(self._verifier.verify_with_ctx_str(message, signature, context, public_key))
            return bool(self._verifier.verify(message, signature, public_key))
        except (RuntimeError, ValueError):
            return False
