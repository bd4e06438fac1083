"""Backend discovery and selection: by name, or ``auto`` (per algorithm: liboqs > openssl > pqcrypto)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from pqlab.crypto.base import Kem, Signer
from pqlab.errors import UnknownAlgorithmError, UnknownBackendError

PREFERENCE = ("liboqs", "openssl", "pqcrypto")
_MODULES = {
    "liboqs": ("pqlab.crypto.liboqs_backend", "LiboqsKem", "LiboqsSigner"),
    "openssl": ("pqlab.crypto.openssl_backend", "OpenSSLKem", "OpenSSLSigner"),
    "pqcrypto": ("pqlab.crypto.pqcrypto_backend", "PqcryptoKem", "PqcryptoSigner"),
}


@dataclass(frozen=True)
class BackendStatus:
    """One backend: whether it is usable here, its version, and what it offers."""

    name: str
    available: bool
    reason: str
    version: str | None
    kems: tuple[str, ...]
    signatures: tuple[str, ...]
    library: str | None = None  # the shared library file the backend loaded, where it can say


def _module(name: str) -> ModuleType:
    if name not in _MODULES:
        raise UnknownBackendError(f"unknown backend {name!r}; known: {', '.join(PREFERENCE)}, auto", field="backend")
    return importlib.import_module(_MODULES[name][0])


@cache
def backend_status(name: str) -> BackendStatus:
    """Probe one backend (cached for the process)."""
    backend = _module(name).BACKEND
    available, reason = backend.availability()
    if not available:
        return BackendStatus(name, False, reason, None, (), ())
    library = backend.library_file()
    return BackendStatus(
        name, True, reason, backend.version(), tuple(backend.kem_algorithms()), tuple(backend.signature_algorithms()),
        library,
    )


def backends() -> list[BackendStatus]:
    """Every known backend in preference order, available or not."""
    return [backend_status(name) for name in PREFERENCE]


def _resolve(algorithm: str, backend: str, kind: str) -> str:
    offered = "kems" if kind == "kem" else "signatures"
    if backend == "auto":
        for name in PREFERENCE:
            status = backend_status(name)
            if status.available and algorithm in getattr(status, offered):
                return name
        everywhere = sorted({a for name in PREFERENCE for a in getattr(backend_status(name), offered)})
        raise UnknownAlgorithmError(
            f"no backend here offers {kind} {algorithm!r}; available: {', '.join(everywhere)}", field="algorithm"
        )
    status = backend_status(backend)
    if not status.available:
        raise UnknownBackendError(f"backend {backend!r} is not usable here: {status.reason}", field="backend")
    if algorithm not in getattr(status, offered):
        raise UnknownAlgorithmError(
            f"backend {backend!r} has no {kind} {algorithm!r}; it offers {', '.join(getattr(status, offered))}",
            field="algorithm",
        )
    return backend


def resolve_backend(algorithm: str, backend: str = "auto", kind: str = "signature") -> str:
    """The backend name that ``get_kem``/``get_signer`` would use for ``algorithm``."""
    return _resolve(algorithm, backend, "kem" if kind == "kem" else "signature")


def get_kem(algorithm: str, backend: str = "auto") -> Kem:
    """A KEM object for ``algorithm`` from ``backend`` (or the preferred one with ``auto``)."""
    name = _resolve(algorithm, backend, "kem")
    module = _module(name)
    return getattr(module, _MODULES[name][1])(algorithm)


def get_signer(algorithm: str, backend: str = "auto") -> Signer:
    """A signature-scheme object for ``algorithm`` from ``backend`` (or the preferred one with ``auto``)."""
    name = _resolve(algorithm, backend, "signature")
    module = _module(name)
    return getattr(module, _MODULES[name][2])(algorithm)


def backends_offering(algorithm: str, kind: str = "signature") -> list[str]:
    """Every available backend that offers ``algorithm``, in preference order."""
    offered = "kems" if kind == "kem" else "signatures"
    return [s.name for s in backends() if s.available and algorithm in getattr(s, offered)]
