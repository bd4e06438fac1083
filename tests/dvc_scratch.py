"""A scratch copy of the pipeline for `dvc status`: dvc.yaml, params/, notebooks/, lib/ and placeholders for every
output, committed to a dvc.lock after `pqlab params --resolve`, so `dvc status` reports exactly what an edit makes
stale. Building it takes seconds: its tests share one xdist worker (``SHARES_THE_SCRATCH``) and one session copy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pqlab.pipeline import registry
from pqlab.studies import resolve_params
from tests.conftest import REPO

SHARES_THE_SCRATCH = pytest.mark.xdist_group("dvc_status_scratch")
DVC = str(Path(sys.executable).with_name("dvc"))


def dvc(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([DVC, *args], cwd=root, capture_output=True, text=True, timeout=600, check=True)


def stale(root: Path) -> set[str]:
    """The stages `dvc status` names, as DVC sees the project now (nothing resolved first)."""
    return set(json.loads(dvc(root, "status", "--json").stdout or "{}"))


def status(root: Path) -> set[str]:
    """What `make status` shows: params.yaml resolved (pqlab params --resolve), then `dvc status`'s stages."""
    resolve_params.run(root / "params" / "params.yaml")
    return stale(root)


def build(root: Path) -> Path:
    root.mkdir(parents=True)
    dvc(root, "init", "--no-scm", "-q")
    for name in ("dvc.yaml", "params", "notebooks", "lib", ".dvc/plots"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.so", "*.o", "build", "*.egg-info", ".pqlab-staging"))
        else:
            shutil.copy(source, root / name)
    for stage in yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"].values():
        for entry in [*stage.get("outs", []), *stage.get("metrics", [])]:
            path = root / (next(iter(entry)) if isinstance(entry, dict) else entry)
            if path == resolve_params.path_for(root / "params" / "params.yaml"):
                continue  # written below, by pqlab
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix:
                path.write_text(f"placeholder {path.name}\n")
            else:  # a folder output (data/raw/image_tree)
                path.mkdir(exist_ok=True)
                (path / "file").write_text("placeholder\n")
    resolve_params.run(root / "params" / "params.yaml")
    dvc(root, "commit", "--force", "-q")
    assert stale(root) == set()
    return root


def edited(scratch: Path, into: Path, edit) -> Path:
    """A copy of the scratch project with ``edit(root)`` applied."""
    root = into / "copy"
    shutil.copytree(scratch, root, symlinks=True)
    edit(root)
    return root


ALL_STAGES = set(registry.pipeline_stage_names())
