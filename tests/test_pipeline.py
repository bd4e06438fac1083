"""The DVC pipeline: every stage declares deps, params (where it reads them) and outs that exist in the repo."""

from __future__ import annotations

import re

import pytest
import yaml


@pytest.fixture(scope="module")
def pipeline(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())


def test_every_stage_declares_deps_and_outs(pipeline, repo_root):
    for name, stage in pipeline["stages"].items():
        assert stage.get("deps"), name
        assert stage.get("outs") or stage.get("metrics"), name
        for dep in stage["deps"]:
            if not dep.startswith("data/"):
                assert (repo_root / dep).exists(), f"{name}: missing dep {dep}"


def test_notebook_stages_pass_only_profile_and_params_path(pipeline, repo_root):
    params_keys = set(yaml.safe_load((repo_root / "params" / "params.yaml").read_text()))
    for name, stage in pipeline["stages"].items():
        if "papermill" not in stage["cmd"]:
            continue
        papermill_args = stage["cmd"].split("papermill", 1)[1]
        assert set(re.findall(r"\s-p (\w+)", papermill_args)) == {"profile", "params_path"}, name
        assert "-k pqlab" in stage["cmd"]
        declared = stage["params"][0]["params/params.yaml"]
        assert "profile" in declared and set(declared) <= params_keys, name
        notebook = re.search(r"papermill (\S+\.ipynb)", stage["cmd"]).group(1)
        assert notebook in stage["deps"], name


def test_metrics_feed_the_report(pipeline):
    metrics = {next(iter(m)) if isinstance(m, dict) else m
               for stage in pipeline["stages"].values() for m in stage.get("metrics", [])}
    assert metrics <= set(pipeline["stages"]["report"]["deps"])
