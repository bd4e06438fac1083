"""Shared AMORT fixtures: one long-term key set per test session (keygen is the slow part)."""

from __future__ import annotations

import pytest

from pqlab.amort.profile import PAPER_PROFILE
from pqlab.experiments.amort_lab import KeySet, Lab


@pytest.fixture(scope="session")
def keys() -> KeySet:
    return KeySet.generate(4)


@pytest.fixture
def lab(keys, tmp_path) -> Lab:
    world = Lab(keys, 20261202, tmp_path, profile=PAPER_PROFILE)  # the paper's design (hardened_lab: the default)
    yield world
    world.close()
