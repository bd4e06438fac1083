"""Every measuring study's analysis, run again from the raw samples its session smoke run wrote, gives that run's
outputs byte for byte (issue 26 items 4 and 6, per study: the DVC remote test checks the pull-and-rebuild path on
two of them).

The amortisation analysis also reads the cost study's statistics. Its smoke run, alone in an empty folder, measured
them in memory (nothing to compare with), so there the reference is a first analysis from the same raw samples and
the costs smoke run's statistics, and the second must give it byte for byte."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

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


DERIVED_INPUTS = {"amortisation": ("costs", "data/derived/costs_stats.parquet")}  # stage: (producer, file)


def _analyse(stage: str, smoke, root: Path) -> set[str]:
    """The stage's analysis in a new project at ``root`` from its smoke run's raw samples; the files it wrote."""
    paths = ProjectPaths(root, REPO / "params")  # what `pqlab <study> --out-dir` uses: inputs from the repo
    paths.raw.mkdir(parents=True)
    for name in MEASURING[stage].files:
        shutil.copy(smoke.run(stage).root / "data" / "raw" / name, paths.raw / name)
    if stage in DERIVED_INPUTS:
        producer, name = DERIVED_INPUTS[stage]
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(smoke.run(producer).ok().root / name, root / name)
    settings = params.load(REPO / "params" / "params.yaml", "smoke")
    study = importlib.import_module(f"pqlab.studies.{stage}")
    result = study.run(settings, paths, progress=False, analyse_only=True)
    return {path.relative_to(root).as_posix() for path in result.files}


@pytest.mark.parametrize("stage", [_case(stage) for stage in MEASURING])
def test_analysis_of_the_smoke_runs_raw_samples_is_byte_identical_to_that_run(stage, smoke, tmp_path):
    measured = smoke.run(stage).ok()
    if stage in DERIVED_INPUTS:
        reference = tmp_path / "first"
        _analyse(stage, smoke, reference)
    else:
        reference = measured.root
    project = tmp_path / "project"
    rebuilt = _analyse(stage, smoke, project)
    assert rebuilt and not [name for name in rebuilt if name.startswith("data/raw/")], rebuilt
    missing = sorted(name for name in rebuilt if not (reference / name).is_file())
    assert not missing, f"the reference run of {stage} wrote no {missing}"
    different = sorted(name for name in rebuilt
                       if (project / name).read_bytes() != (reference / name).read_bytes())
    assert different == [], f"{stage}: analysis from its raw samples differs from the run that measured them"
