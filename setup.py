"""Build the Thread simulator's C core; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pqlab.thread._core",
            sources=["lib/pqlab/thread/_core.c", "lib/pqlab/thread/sim_core.c"],
            depends=["lib/pqlab/thread/sim_core.h"],
            # IEEE double semantics identical to the Python twin: no fused multiply-add, no fast-math.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra", "-Werror"],
        )
    ],
)
