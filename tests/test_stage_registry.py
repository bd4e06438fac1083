"""The stage registry (pqlab.pipeline.registry) is the one list of stages: dvc.yaml, the report's stage table, the CLI,
the notebooks and the session's smoke runs agree with it (issue 22 item 3)."""

from __future__ import annotations

import importlib
import re
import subprocess

import pytest
import yaml

from pqlab import cli
from pqlab.params.schema import StudyParams
from pqlab.pipeline import registry
from tests import smoke
from tests.conftest import REPO


@pytest.fixture(scope="module")
def dvc_stages() -> dict:
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


def test_dvc_yaml_holds_exactly_the_registrys_stages_in_its_order(dvc_stages):
    assert list(dvc_stages) == registry.pipeline_stage_names()


def test_each_stage_runs_its_notebook_or_its_command(dvc_stages):
    for stage in registry.STAGES:
        cmd = dvc_stages[stage.name]["cmd"]
        if stage.notebook:
            notebook = f"notebooks/{stage.notebook}.ipynb"
            assert notebook in cmd and (REPO / notebook).is_file(), stage.name
        else:
            assert re.search(rf"\bpqlab {re.escape(stage.command)}\b", cmd), (stage.name, cmd)
        if stage.measure_stage:
            assert f"pqlab {stage.command} --measure-only" in dvc_stages[stage.measure_stage]["cmd"]


def test_a_measuring_stages_notebook_never_measures_under_the_pipeline():
    """Under dvc (``pipeline True``) the notebook runs the analysis only: the measure stage measured already."""
    for stage in registry.STAGES:
        if stage.measure_stage and stage.notebook:
            source = (REPO / "notebooks" / f"{stage.notebook}.ipynb").read_text()
            assert f"{stage.name}.run(settings, paths, analyse_only=pipeline" in source, stage.name


def test_each_stage_declares_its_metrics_file_and_the_report_reads_the_same(dvc_stages):
    reference = yaml.safe_load((REPO / "params" / "paper_reference.yaml").read_text())["stages"]
    for stage in registry.STAGES:
        outs = [next(iter(o)) if isinstance(o, dict) else o for o in dvc_stages[stage.name].get("outs", [])]
        if stage.metrics:
            assert f"data/derived/{stage.metrics}" in outs, stage.name
        else:
            assert not [o for o in outs if o.endswith("_metrics.json")], stage.name
    assert {name: spec["metrics"] for name, spec in reference.items()} == {
        name: registry.BY_NAME[name].metrics for name in reference}
    assert {name: spec["kind"] for name, spec in reference.items()} == {
        name: registry.BY_NAME[name].kind for name in reference}


def test_each_stage_has_its_study_module_and_cli_command():
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    for stage in registry.STAGES:
        assert hasattr(importlib.import_module(f"pqlab.studies.{stage.name}"), "run"), stage.name
        assert stage.command in commands, stage.name


# One name per concept (issue 38 item 3): a stage's files, module, notebook and params section carry its name. The
# only exceptions, stated here: the cost stage's notebook keeps the paper's word, the report has no params section.
NOTEBOOK_NAMED_OTHERWISE = {"costs": "01_cost_characterisation"}
WITHOUT_PARAMS_SECTION = {"report"}


def test_each_stages_files_module_notebook_and_params_section_carry_its_name():
    sections = set(StudyParams.model_fields)
    for stage in registry.STAGES:
        name = stage.name
        if stage.metrics:
            assert stage.metrics == f"{name}_metrics.json", name
        assert (REPO / "lib" / "pqlab" / "studies" / f"{name}.py").is_file(), name
        if stage.notebook:  # notebooks are NN_<name>
            expected = NOTEBOOK_NAMED_OTHERWISE.get(name)
            assert stage.notebook == expected if expected else re.fullmatch(rf"\d\d_{name}", stage.notebook), name
        if name in WITHOUT_PARAMS_SECTION:
            assert name not in sections, name
        else:
            assert name in sections and name in (stage.raw.sections if stage.raw else stage.reads), name
        for raw_file in stage.raw.files if stage.raw else ():
            assert raw_file == f"{name}.parquet" or raw_file.startswith(f"{name}_"), (name, raw_file)
    assert set(NOTEBOOK_NAMED_OTHERWISE) | WITHOUT_PARAMS_SECTION <= set(registry.BY_NAME)  # no stale exception


def test_the_smoke_runs_cover_every_stage_with_its_command():
    assert [argv[0] for argv in smoke.COMMANDS.values()] == [stage.command for stage in registry.STAGES]
    assert smoke.STAGES == tuple(stage.name for stage in registry.STAGES) and smoke.STAGES[-1] == "report"


def test_every_cached_output_is_git_ignored(dvc_stages):
    """DVC tracks the cached outputs; git must not see them, or a run leaves the clone dirty (`git status`)."""
    cached = sorted({next(iter(o)) if isinstance(o, dict) else o for stage in dvc_stages.values()
                     for o in stage.get("outs", []) if not (isinstance(o, dict) and next(iter(o.values())).get(
                         "cache") is False)})
    done = subprocess.run(["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *cached], cwd=REPO,
                          capture_output=True, text=True)
    not_ignored = [line.split("\t")[-1] for line in done.stdout.splitlines() if line.startswith("::")]
    assert not_ignored == [], f"add to the .gitignore beside each: {not_ignored}"
