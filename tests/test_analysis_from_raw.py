"""Every measuring study's analysis, run again from the raw samples its session smoke run wrote, gives that run's
outputs byte for byte (issue 26 items 4 and 6, per study: the DVC remote test checks the pull-and-rebuild path on
two of them)."""

from __future__ import annotations

import importlib
import shutil

import pytest

from pqlab import params
from pqlab.paths import ProjectPaths
from pqlab.studies.raw_samples import MEASURING
from tests.conftest import REPO


def _case(stage: str):
    marks = [pytest.mark.slow]
    if stage == "control_cycle":  # its smoke run pins the real-time core (tests/smoke.py)
        marks.append(pytest.mark.xdist_group("rt_core"))
    return pytest.param(stage, id=stage, marks=marks)


@pytest.mark.parametrize("stage", [_case(stage) for stage in MEASURING])
def test_analysis_of_the_smoke_runs_raw_samples_is_byte_identical_to_that_run(stage, smoke, tmp_path):
    measured = smoke.run(stage).ok()
    paths = ProjectPaths(tmp_path, REPO / "params")  # what `pqlab <study> --out-dir` uses: inputs from the repo
    paths.raw.mkdir(parents=True)
    for name in MEASURING[stage].files:
        shutil.copy(measured.root / "data" / "raw" / name, paths.raw / name)
    settings = params.load(REPO / "params" / "params.yaml", "smoke")
    study = importlib.import_module(f"pqlab.studies.{stage}")
    result = study.run(settings, paths, progress=False, analyse_only=True)
    rebuilt = {path.relative_to(tmp_path).as_posix() for path in result.files}
    assert rebuilt and not [name for name in rebuilt if name.startswith("data/raw/")], rebuilt
    missing = sorted(name for name in rebuilt if not (measured.root / name).is_file())
    assert not missing, f"the smoke run of {stage} wrote no {missing}"
    different = sorted(name for name in rebuilt
                       if (tmp_path / name).read_bytes() != (measured.root / name).read_bytes())
    assert different == [], f"{stage}: analysis from its raw samples differs from the run that measured them"
