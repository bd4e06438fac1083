"""Loads the C fast path (``_amort_native``: amort_core.c + its CPython binding) and says why when it cannot.

``PQLAB_AMORT_NATIVE_LIB`` may name another build of the same extension (``make sanitize`` points it at an
AddressSanitizer + UBSan build); otherwise the one ``pip install -e .`` built beside this file is used.
"""

from __future__ import annotations

from types import ModuleType

from pqlab.amort.errors import FastpathError
from pqlab.native_override import extension_status, require_extension

ENV = "PQLAB_AMORT_NATIVE_LIB"
MODULE = "pqlab.amort.fastpath.native._amort_native"


def load() -> ModuleType:
    """The extension module; FastpathError (naming the reason) when it is not built or does not load."""
    return require_extension(MODULE, FastpathError, "the native AMORT-V1 fast path is not available", "path", ENV)


def status() -> tuple[bool, str]:
    """(loaded, what): the extension file and the libcrypto it runs against, or why it is unavailable."""
    return extension_status(load, FastpathError,
                            lambda module: (True, f"{module.__file__} ({module.openssl_version()})"))
