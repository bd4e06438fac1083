"""Build the native parts: the Thread simulator's C core and the control-cycle harness; the rest is in pyproject."""

from setuptools import Extension, setup

CYCLE = "lib/pqlab/bench/cycle"

setup(
    ext_modules=[
        Extension(
            "pqlab.thread._core",
            sources=["lib/pqlab/thread/_core.c"],
            # IEEE double semantics identical to the Python twin: no fused multiply-add, no fast-math.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
        ),
        Extension(
            "pqlab.bench._cycle",
            sources=[f"{CYCLE}/cycle_module.c", f"{CYCLE}/cycle_core.c", f"{CYCLE}/cycle_evidence.c"],
            depends=[f"{CYCLE}/cycle_core.h", f"{CYCLE}/cycle_evidence.h"],
            include_dirs=[CYCLE],
            define_macros=[("_GNU_SOURCE", None)],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Werror"],
        ),
    ],
)
