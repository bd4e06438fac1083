"""Shared fixtures: the repository root, the vendored test vectors (tests/vectors/), and a scratch project tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VECTORS = REPO / "tests" / "vectors"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def vectors() -> Path:
    """Test data vendored from upstream sources (tests/vectors/SOURCES.md names each file's origin)."""
    return VECTORS


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch project tree with the repo's params files, so studies write under tmp_path."""
    (tmp_path / "params").mkdir()
    for source in (REPO / "params").glob("*.yaml"):
        shutil.copy(source, tmp_path / "params" / source.name)
    return tmp_path


def pytest_terminal_summary(terminalreporter):
    """The fault-injection count (tests/faults.py), when fault-injection tests ran."""
    from tests import faults

    if faults.LOG:
        terminalreporter.write_line(faults.summary())
