"""docs/architecture.md is generated from pqlab.layers, the stage registry, the import graph and the papers'
coverage (issue 38 item 5): the committed page is current, names every layer and stage, and `pqlab pipeline --check`
fails in one line when it is stale."""

from __future__ import annotations

import yaml

from pqlab import cli
from pqlab.layers import LAYERS
from pqlab.pipeline import architecture
from pqlab.pipeline.registry import STAGES


def test_the_committed_page_is_what_the_generator_gives(repo_root):
    assert (repo_root / "docs" / "architecture.md").read_text() == architecture.render(), \
        "run `pqlab pipeline --write-docs`"


def test_the_page_names_every_layer_every_stage_and_every_figure_function(repo_root):
    page = architecture.render()
    for layer in LAYERS:
        assert f"| {layer.rank} | {layer.name} |" in page
    for stage in STAGES:
        assert f"| `{stage.name}` | {stage.kind} | `pqlab {stage.command}` |" in page
    coverage = yaml.safe_load((repo_root / "params" / "paper_reference.yaml").read_text())["coverage"]
    figures = [item for item in coverage if item["item"].startswith("Fig") and item.get("kind") != "illustration"
               and item.get("stage") in {stage.name for stage in STAGES}]
    assert len(figures) >= 10
    for item in figures:  # each figure's stem is drawn by the function of the same name (the house rule)
        stems = {out.rsplit("/", 1)[-1].split(".")[0] for out in item["outputs"] if out.startswith("paper_figs/")}
        assert any(f".py:{stem}`" in page for stem in stems), item["id"]


def test_a_stale_page_fails_the_check_in_one_line(tmp_path, repo_root, capsys):
    stale = tmp_path / "architecture.md"
    stale.write_text(architecture.render().replace("| 0 | base |", "| 0 | basement |"))
    dvc_yaml = str(repo_root / "dvc.yaml")
    assert cli.main(["pipeline", "--check", "--dvc-yaml", dvc_yaml, "--docs", str(stale)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--write-docs" in err
    assert cli.main(["pipeline", "--write-docs", "--docs", str(stale)]) == 0
    assert cli.main(["pipeline", "--check", "--dvc-yaml", dvc_yaml, "--docs", str(stale)]) == 0
