"""Loads a C extension once: the build an environment variable names (``make sanitize``'s ASan/UBSan builds) or the
one ``pip install -e .`` built, or says why it cannot."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from functools import cache
from types import ModuleType


def load_override(module: str, env: str) -> ModuleType | None:
    """The extension file ``$env`` names, registered as ``module`` before anything imports it; None when unset.

    ImportError when the variable names something that is not a loadable extension."""
    path = os.environ.get(env)
    if not path:
        return None
    spec = importlib.util.spec_from_file_location(module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{env}={path} is not a loadable extension")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    sys.modules[module] = loaded
    return loaded


def load_extension(module: str, env: str | None = None) -> ModuleType | str:
    """The extension ``module`` (``$env``'s build when set), imported once per build; else why not, as one line."""
    return _load(module, env, os.environ.get(env) if env else None)


@cache
def _load(module: str, env: str | None, path: str | None) -> ModuleType | str:
    try:
        return (load_override(module, env) if path else None) or importlib.import_module(module)
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"


def require_extension(module: str, error: Callable[..., Exception], unavailable: str, field: str,
                      env: str | None = None) -> ModuleType:
    """The extension ``module`` as :func:`load_extension` loads it, else ``error``: ``unavailable``, why, and how to
    build it."""
    found = load_extension(module, env)
    if isinstance(found, str):
        raise error(f"{unavailable} ({found}); run `make setup` (needs libssl-dev)", field=field)
    return found


def extension_status(load: Callable[[], ModuleType], error: type[Exception],
                     describe: Callable[[ModuleType], tuple[bool, str]]) -> tuple[bool, str]:
    """``describe(module)`` of the module ``load`` returns, or (False, the message of the ``error`` it raised)."""
    try:
        module = load()
    except error as exc:
        return False, str(exc)
    return describe(module)
