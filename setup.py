"""Build the native extensions (Thread simulator core, AMORT-V1 fast path, control-cycle harness, symmetric
timing loops); the rest is in pyproject.toml."""

import os
import shlex
import subprocess

from setuptools import Extension, setup

AMORT = "lib/pqlab/amort/fastpath/native"
CYCLE = "lib/pqlab/experiments/cycle"
SYMMETRIC = "lib/pqlab/experiments/symmetric"
BINDING = "lib/pqlab/include"  # pqlab_binding.h, shared by the three bindings


def libcrypto_flags() -> tuple[list[str], list[str]]:
    """(compile flags, link flags) for OpenSSL's libcrypto: pkg-config, else $CONDA_PREFIX, else -lcrypto."""
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "libcrypto"], check=True, capture_output=True, text=True)
        libs = subprocess.run(["pkg-config", "--libs", "libcrypto"], check=True, capture_output=True, text=True)
        return shlex.split(cflags.stdout), shlex.split(libs.stdout)
    except (OSError, subprocess.CalledProcessError):
        prefix = os.environ.get("CONDA_PREFIX")
        if prefix:
            return [f"-I{prefix}/include"], [f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib", "-lcrypto"]
        return [], ["-lcrypto"]


CRYPTO_CFLAGS, CRYPTO_LIBS = libcrypto_flags()

setup(
    ext_modules=[
        Extension(
            "pqlab.transport._core",
            sources=["lib/pqlab/transport/_core.c", "lib/pqlab/transport/sim_core.c"],
            depends=["lib/pqlab/transport/sim_core.h"],
            # IEEE double semantics identical to the Python twin: no fused multiply-add, no fast-math.
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra", "-Werror"],
        ),
        Extension(
            "pqlab.amort.fastpath.native._amort_native",
            sources=[f"{AMORT}/_amort_native.c", f"{AMORT}/amort_core.c"],
            depends=[f"{AMORT}/amort_core.h", f"{BINDING}/pqlab_binding.h"],
            include_dirs=[BINDING],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", *CRYPTO_CFLAGS],
            extra_link_args=CRYPTO_LIBS,
        ),
        Extension(
            # the control-cycle loop calls the native device path (amort_core.c) directly, compiled in
            "pqlab.experiments._cycle",
            sources=[f"{CYCLE}/cycle_module.c", f"{CYCLE}/cycle_core.c", f"{CYCLE}/cycle_evidence.c",
                     f"{AMORT}/amort_core.c"],
            depends=[f"{CYCLE}/cycle_core.h", f"{CYCLE}/cycle_evidence.h", f"{AMORT}/amort_core.h",
                     f"{BINDING}/pqlab_binding.h"],
            include_dirs=[CYCLE, AMORT, BINDING],
            define_macros=[("_GNU_SOURCE", None)],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", *CRYPTO_CFLAGS],
            extra_link_args=CRYPTO_LIBS,
        ),
        Extension(
            # Table I's symmetric rows timed in a C loop over libcrypto (the costs stage)
            "pqlab.experiments._symmetric",
            sources=[f"{SYMMETRIC}/_symmetric.c", f"{SYMMETRIC}/sym_timing.c"],
            depends=[f"{SYMMETRIC}/sym_timing.h", f"{BINDING}/pqlab_binding.h"],
            include_dirs=[SYMMETRIC, BINDING],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", *CRYPTO_CFLAGS],
            extra_link_args=CRYPTO_LIBS,
        ),
    ],
)
