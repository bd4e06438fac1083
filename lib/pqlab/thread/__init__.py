"""Thread transport Monte Carlo simulator for CASE handshakes (PQ-CASE §IV-C): C core and Python twin."""

import os as _os

# PQLAB_THREAD_CORE_LIB may name another build of the C core's extension (`make sanitize` points it at an
# ASan/UBSan build); it is registered as pqlab.thread._core before anything imports that module.
if _os.environ.get("PQLAB_THREAD_CORE_LIB"):
    import importlib.util as _util
    import sys as _sys

    _spec = _util.spec_from_file_location(f"{__name__}._core", _os.environ["PQLAB_THREAD_CORE_LIB"])
    if _spec is None or _spec.loader is None:
        raise ImportError(f"PQLAB_THREAD_CORE_LIB={_os.environ['PQLAB_THREAD_CORE_LIB']} is not a loadable extension")
    _core = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_core)
    _sys.modules[_spec.name] = _core
