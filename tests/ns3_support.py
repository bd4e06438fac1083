"""ns-3 for the transport cross-check's tests: skip, saying why, where Debian's libns3-dev (or the scenario program)
is missing; with PQLAB_REQUIRE_NS3=1 (.ci/run sets it when it runs as root, where `make setup` installs ns-3) a
missing ns-3 fails the test instead."""

from __future__ import annotations

import functools
import os

import pytest

from pqlab.crosscheck import ns3_program


@functools.cache
def ns3_problem() -> str | None:
    ok, why = ns3_program.status()
    return None if ok else why


def required() -> bool:
    return os.environ.get(ns3_program.REQUIRE_ENV) == "1"


def require_ns3() -> None:
    """Skip (or, with PQLAB_REQUIRE_NS3=1, fail) the calling test when ns-3 or its scenario program is missing."""
    problem = ns3_problem()
    if problem is None:
        return
    if required():
        pytest.fail(f"{ns3_program.REQUIRE_ENV}=1 but the ns-3 cross-check cannot run: {problem}")
    pytest.skip(f"no ns-3 here: {problem}")
