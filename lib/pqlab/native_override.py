"""Loads another build of a C extension named by an environment variable (``make sanitize``'s ASan/UBSan builds)."""

from __future__ import annotations

import importlib.util
import os
import sys
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
