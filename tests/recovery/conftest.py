"""Recovery fixtures: a private swtpm per test session and the long-term keys of the trials.

TPM tests skip, printing why, only where swtpm or the tpm2-pytss binding is missing; with PQLAB_REQUIRE_TPM=1
(.ci/run sets it once the TPM stack is installed) a missing TPM fails the test instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqlab.amort.recovery.config import RecoveryParams
from pqlab.amort.recovery.tpm import binding_problem, ensure_counter, remove_counter
from pqlab.experiments.recovery import trials
from pqlab.experiments.recovery.swtpm import Swtpm, swtpm_problem


def tpm_problem() -> str | None:
    return swtpm_problem() or binding_problem()


def require_tpm() -> None:
    """Skip (or, with PQLAB_REQUIRE_TPM=1, fail) the calling test when no TPM stack is installed."""
    problem = tpm_problem()
    if problem is None:
        return
    if os.environ.get("PQLAB_REQUIRE_TPM") == "1":
        pytest.fail(f"PQLAB_REQUIRE_TPM=1 but no TPM stack: {problem}")
    pytest.skip(f"no TPM 2.0 stack here: {problem}")


@pytest.fixture(scope="session")
def swtpm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Swtpm]:
    require_tpm()
    with Swtpm(tmp_path_factory.mktemp("swtpm")) as tpm:
        yield tpm


@pytest.fixture(scope="session")
def world(swtpm: Swtpm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[trials.World]:
    """Keys, the swtpm endpoint and a defined NV counter, shared by the process-level trials."""
    cfg = RecoveryParams()
    w = trials.World.create(cfg, tmp_path_factory.mktemp("recovery"), swtpm.tcti)
    defined = ensure_counter(swtpm.tcti, cfg.nv_index)
    yield w
    if defined:
        remove_counter(swtpm.tcti, cfg.nv_index)


@pytest.fixture(scope="session")
def keyless_world(tmp_path_factory: pytest.TempPathFactory) -> trials.World:
    """The same keys without a TPM (for the fresh and naive arms)."""
    return trials.World.create(RecoveryParams(), Path(tmp_path_factory.mktemp("recovery-notpm")), None)
