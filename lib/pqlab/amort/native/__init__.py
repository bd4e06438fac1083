"""Loads the C fast path (``_amort_native``: amort_core.c + its CPython binding) and says why when it cannot.

``PQLAB_AMORT_NATIVE_LIB`` may name another build of the same extension (``make sanitize`` points it at an
AddressSanitizer + UBSan build); otherwise the one ``pip install -e .`` built beside this file is used.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from pqlab.amort.errors import FastpathError
from pqlab.native_override import load_override

ENV = "PQLAB_AMORT_NATIVE_LIB"
MODULE = "pqlab.amort.native._amort_native"
_cache: dict[str, ModuleType | str] = {}


def _import() -> ModuleType:
    return load_override(MODULE, ENV) or importlib.import_module(MODULE)


def load() -> ModuleType:
    """The extension module; FastpathError (naming the reason) when it is not built or does not load."""
    if "module" not in _cache:
        try:
            _cache["module"] = _import()
        except ImportError as exc:
            _cache["module"] = f"{type(exc).__name__}: {exc}"
    found = _cache["module"]
    if isinstance(found, str):
        raise FastpathError(f"the native AMORT-V1 fast path is not available ({found}); "
                            "run `make setup` (needs libssl-dev)", field="path")
    return found


def status() -> tuple[bool, str]:
    """(loaded, what): the extension file and the libcrypto it runs against, or why it is unavailable."""
    try:
        module = load()
    except FastpathError as exc:
        return False, str(exc)
    return True, f"{module.__file__} ({module.openssl_version()})"
