"""Thread transport Monte Carlo simulator for CASE handshakes (PQ-CASE §IV-C): C core and Python twin."""

from pqlab.native_override import load_override as _load_override

# PQLAB_TRANSPORT_CORE_LIB may name another build of the C core's extension (`make sanitize` points it at an
# ASan/UBSan build); it is registered as pqlab.transport._core before anything imports that module.
_load_override(f"{__name__}._core", "PQLAB_TRANSPORT_CORE_LIB")
