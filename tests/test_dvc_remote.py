"""Raw samples shared through a DVC remote (issue 26 item 4): clone A measures and analyses on the smoke profile and
pushes to a local-directory remote; clone B pulls only the raw samples and reproduces — no measurement runs, and every
analysis output is byte-identical to A's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pqlab.pipeline.registry import MEASURING
from tests.conftest import REPO

# one timed study and one simulated grid prove the push / pull / repro path; that every measuring stage's analysis is
# byte-stable from its raw samples is tests/test_notebooks.py's job (each stage's notebook, no DVC, no clone)
STUDIES = ("costs", "transport")
BIN = Path(sys.executable).parent


def _run(cwd: Path, *argv: str) -> str:
    env = os.environ | {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "GIT_AUTHOR_NAME": "pqlab test",
                        "GIT_AUTHOR_EMAIL": "test@pqlab.invalid", "GIT_COMMITTER_NAME": "pqlab test",
                        "GIT_COMMITTER_EMAIL": "test@pqlab.invalid"}
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{' '.join(argv)} in {cwd}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def _analysis_outputs(root: Path) -> dict[str, bytes]:
    """Every output of the analysis stages, except the executed notebooks (papermill records when cells ran)."""
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    names = [next(iter(e)) if isinstance(e, dict) else e
             for study in STUDIES for e in [*stages[study]["outs"], *stages[study].get("metrics", [])]]
    return {name: (root / name).read_bytes() for name in names if not name.startswith("data/derived/notebooks/")}


@pytest.mark.slow
def test_a_colleague_pulls_the_raw_samples_and_rebuilds_their_figures_without_measuring(tmp_path):
    remote, a, b = tmp_path / "remote", tmp_path / "clone-a", tmp_path / "clone-b"
    _run(tmp_path, "git", "clone", "-q", str(REPO), str(a))
    params = a / "params" / "params.yaml"
    params.write_text(params.read_text().replace("profile: quick", "profile: smoke", 1))
    dvc = str(BIN / "dvc")
    _run(a, dvc, "remote", "add", "-d", "shared", str(remote))
    measure = [MEASURING[s].measure_stage for s in STUDIES]
    _run(a, dvc, "repro", *STUDIES)
    _run(a, dvc, "push", *measure, *STUDIES)
    _run(a, "git", "add", "params/params.yaml", ".dvc/config", "dvc.lock")
    _run(a, "git", "commit", "-q", "-m", "smoke run, raw samples pushed")
    expected = _analysis_outputs(a)
    raw = {f"data/raw/{f}": (a / "data" / "raw" / f).read_bytes() for s in STUDIES for f in MEASURING[s].files}

    _run(tmp_path, "git", "clone", "-q", str(a), str(b))
    _run(b, dvc, "pull", *measure)  # only the raw samples
    assert not [name for name in expected if (b / name).exists()]  # no analysis output came with them
    log = _run(b, dvc, "repro", *STUDIES)
    assert "measure_" not in " ".join(line for line in log.splitlines() if line.startswith("Running stage")), log
    assert {name: (b / name).read_bytes() for name in raw} == raw
    rebuilt = _analysis_outputs(b)
    assert sorted(rebuilt) == sorted(expected)
    different = [name for name in expected if rebuilt[name] != expected[name]]
    assert different == [], f"not byte-identical to clone A: {different}"
    assert _run(b, dvc, "status", "--json", *measure, *STUDIES).strip() in ("{}", "")
