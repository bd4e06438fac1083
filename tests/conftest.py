"""Shared fixtures: the repository root, the shared test-vector folder, and a scratch project tree."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test vectors not found at {SHARED_DATA} (they live beside the repo, not in it)")
    return SHARED_DATA


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch project tree with the repo's params files, so studies write under tmp_path."""
    (tmp_path / "params").mkdir()
    for source in (REPO / "params").glob("*.yaml"):
        shutil.copy(source, tmp_path / "params" / source.name)
    return tmp_path
