"""Loads the C fast path (``_amort_native``: amort_core.c + its CPython binding) and says why when it cannot.

``PQLAB_AMORT_NATIVE_LIB`` may name another build of the same extension (``make sanitize`` points it at an
AddressSanitizer + UBSan build); otherwise the one ``pip install -e .`` built beside this file is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

from pqlab.amort.errors import FastpathError

ENV = "PQLAB_AMORT_NATIVE_LIB"
MODULE = "pqlab.amort.native._amort_native"
_cache: dict[str, ModuleType | str] = {}


def _import() -> ModuleType:
    override = os.environ.get(ENV)
    if not override:
        return importlib.import_module(MODULE)
    spec = importlib.util.spec_from_file_location(MODULE, override)
    if spec is None or spec.loader is None:
        raise ImportError(f"{ENV}={override} is not a loadable extension")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
