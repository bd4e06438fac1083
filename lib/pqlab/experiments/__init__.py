"""The AMORT-V1 experiment drivers: the timing harness and what each measuring study runs (costs, the interval
sweep, scaling and isolation, device origin, the control cycle, the image); ``benchmarks/`` holds the benchmarks."""

from pqlab.native_override import load_override as _load_override

# PQLAB_CYCLE_LIB / PQLAB_SYMMETRIC_LIB may name other builds of the control-cycle and symmetric-timing extensions
# (`make sanitize` points them at ASan/UBSan builds); each is registered before anything imports it.
_load_override(f"{__name__}._cycle", "PQLAB_CYCLE_LIB")
_load_override(f"{__name__}._symmetric", "PQLAB_SYMMETRIC_LIB")
