"""Timing harness, statistics, and the AMORT-V1 timing experiments."""

from pqlab.native_override import load_override as _load_override

# PQLAB_CYCLE_LIB / PQLAB_SYMMETRIC_LIB may name other builds of the control-cycle and symmetric-timing extensions
# (`make sanitize` points them at ASan/UBSan builds); each is registered before anything imports it.
_load_override(f"{__name__}._cycle", "PQLAB_CYCLE_LIB")
_load_override(f"{__name__}._symmetric", "PQLAB_SYMMETRIC_LIB")
