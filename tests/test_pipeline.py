"""The DVC pipeline: every stage declares deps, params and outs; its deps cover every module its study imports."""

from __future__ import annotations

import re

import pytest
import yaml

from pqlab import cli
from pqlab.pipeline import dvc_file
from pqlab.pipeline.import_closure import LIB, closure
from pqlab.pipeline.registry import MEASURING


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


def test_notebook_stages_pass_only_the_params_file_and_pipeline(pipeline, repo_root):
    """A notebook stage runs `pqlab papermill NB OUT --params params/params.yaml -p pipeline True`: the notebook's
    profile and params_path come from the validated file (never from DVC's templating, which would parse it), and
    its parameters are the resolved block dvc.yaml lists for it (tests/test_dvc_params.py)."""
    for name, stage in pipeline["stages"].items():
        if "papermill" not in stage["cmd"]:
            continue
        papermill_args = stage["cmd"].split("papermill", 1)[1]
        assert set(re.findall(r"\s-p (\w+)", papermill_args)) == {"pipeline"}, name
        assert "--params params/params.yaml" in papermill_args, name
        # run by the pipeline: write into the project (and a measuring study's analysis stage never measures)
        assert "-p pipeline True" in papermill_args, name
        assert "-k pqlab" in stage["cmd"]
        assert stage["params"] == [{"params/resolved.yaml": [name]}], name
        notebook = re.search(r"papermill (\S+\.ipynb)", stage["cmd"]).group(1)
        assert notebook in stage["deps"], name


def _names(entries: list) -> set[str]:
    return {next(iter(e)) if isinstance(e, dict) else e for e in entries}


def test_metrics_feed_the_report(pipeline):
    """Every stage's full metrics file (<stage>_metrics.json, an uncached out) is a dep of the report."""
    full = {path for stage in pipeline["stages"].values() for path in _names(stage.get("outs", []))
            if path.endswith("_metrics.json")}
    assert full and full <= set(pipeline["stages"]["report"]["deps"])


def test_dvc_metrics_are_the_compact_headline_files(pipeline):
    """`dvc metrics show` is one narrow row per study: only <stage>_headline.json files are DVC metrics (each
    written by OutputSet.metrics beside the stage's full <stage>_metrics.json, with the same four keys)."""
    for name, stage in pipeline["stages"].items():
        for path in _names(stage.get("metrics", [])):
            assert path.endswith("_headline.json"), f"{name}: {path} is not a compact headline file"
            assert path.replace("_headline.json", "_metrics.json") in _names(stage["outs"]), name


def _covered(path: str, deps: list[str]) -> bool:
    return any(path == dep or path.startswith(dep.rstrip("/") + "/") for dep in deps)


def test_every_stage_has_a_study_module_named_after_it(pipeline):
    for name in pipeline["stages"]:
        assert (LIB / "pqlab" / "studies" / f"{name}.py").is_file(), f"no pqlab.studies.{name} for stage {name}"


def test_stage_deps_cover_the_import_closure_of_its_study(pipeline):
    """A change to any module a study imports must rerun its stage: dvc.yaml may not list fewer files."""
    for name, stage in pipeline["stages"].items():
        needed = sorted(str(p.relative_to(LIB.parent)) for p in closure(f"pqlab.studies.{name}"))
        missing = [path for path in needed if not _covered(path, stage["deps"])]
        assert not missing, f"stage {name} does not declare {missing}"


def test_dvc_yaml_is_what_the_registry_gives(repo_root):
    """dvc.yaml is generated (`pqlab pipeline --write-dvc`): the committed file is exactly the generator's output."""
    assert (repo_root / "dvc.yaml").read_text() == dvc_file.text(), "run `pqlab pipeline --write-dvc`"


def test_pipeline_check_is_one_line_and_exit_1_when_stale(tmp_path, repo_root, capsys):
    stale = tmp_path / "dvc.yaml"
    stale.write_text((repo_root / "dvc.yaml").read_text().replace("cache: false", "cache: true", 1))
    page = str(repo_root / "docs" / "architecture.md")
    assert cli.main(["pipeline", "--check", "--dvc-yaml", str(stale), "--docs", page]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stale" in err and "--write-dvc" in err
    assert cli.main(["pipeline", "--check", "--dvc-yaml", str(repo_root / "dvc.yaml"), "--docs", page]) == 0
    assert cli.main(["pipeline", "--write-dvc", "--dvc-yaml", str(stale)]) == 0
    assert stale.read_text() == dvc_file.text()


def test_measuring_studies_are_a_measure_stage_and_an_analysis_stage(pipeline):
    """measure_<stage> writes exactly the raw files and reads no analysis code; <stage> reads those files, writes
    none of them, and its study's import closure holds no measurement module (so editing a figure, a statistic or
    an analysis module reruns only the analysis, and the analysis cannot re-measure)."""
    stages = pipeline["stages"]
    for name, raw in MEASURING.items():
        measure, analyse = stages[raw.measure_stage], stages[name]
        files = {f"data/raw/{file}" for file in raw.files}
        assert _names(measure["outs"]) == files, name
        assert files <= set(analyse["deps"]) and not files & _names(analyse["outs"]), name
        assert f"pqlab {raw.command} --measure-only" in measure["cmd"] and "papermill" not in measure["cmd"], name
        measured = {str(p.relative_to(LIB.parent)) for p in closure(f"pqlab.studies.{raw.measure_stage}")}
        assert not {p for p in measured if p.startswith(("lib/pqlab/figures/", "lib/pqlab/analysis/"))
                    or p == "lib/pqlab/stats.py"}, f"{raw.measure_stage} imports analysis code"
        analysed = {str(p.relative_to(LIB.parent)) for p in closure(f"pqlab.studies.{name}")}
        assert not {p for p in analysed if "/studies/measure_" in p}, f"{name} imports its measurement"
        assert not [dep for dep in analyse["deps"] if "/studies/measure_" in dep], name
    assert not {n.removeprefix("measure_") for n in stages if n.startswith("measure_")} - set(MEASURING)


def test_closure_follows_relative_submodule_and_extension_imports():
    files = {str(p.relative_to(LIB.parent)) for p in closure("pqlab.studies.transport")}
    assert {"lib/pqlab/transport/_core.c", "lib/pqlab/framing.py", "lib/pqlab/transport/__init__.py"} <= files
    assert "lib/pqlab/amort/controller.py" not in files


def test_domain_packages_never_write_or_draw():
    """amort, case, thread, crypto, experiments, attacks and analysis compute and return data; only pqlab.studies writes
    and draws."""
    import ast

    banned = {"pqlab.figures", "pqlab.io", "pqlab.paths", "pqlab.studies", "matplotlib"}
    for package in ("amort", "case", "transport", "crypto", "experiments", "attacks", "analysis"):
        for path in (LIB / "pqlab" / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                for module in names:
                    assert not any(module == b or module.startswith(b + ".") for b in banned), (path, module)


def test_no_two_pqlab_packages_import_each_other():
    import ast
    import itertools

    edges: dict[str, set[str]] = {}
    for path in (LIB / "pqlab").rglob("*.py"):
        rel = path.relative_to(LIB / "pqlab").parts
        source = rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pqlab.") and not node.level:
                target = node.module.split(".")[1]
                if target != source:
                    edges.setdefault(source, set()).add(target)
    for a, b in itertools.combinations(sorted(edges), 2):
        assert not (b in edges.get(a, set()) and a in edges.get(b, set())), f"{a} and {b} import each other"


def test_notebook_stages_run_through_pqlab_papermill_with_the_execution_timeout(pipeline, repo_root):
    """Bounded and short: every notebook stage runs through `pqlab papermill --params`, which takes papermill's
    execution timeout from the file's execution_timeout_s (in the stage's resolved block), so a failure is one line
    in `dvc repro`, never a papermill traceback."""
    from pqlab import params
    from pqlab.studies import resolve_params

    blocks = resolve_params.blocks(params.load(repo_root / "params" / "params.yaml"))
    for name, stage in pipeline["stages"].items():
        if "papermill" not in stage["cmd"]:
            continue
        assert "pqlab papermill notebooks/" in stage["cmd"], name
        assert "--params params/params.yaml" in stage["cmd"] and "--execution-timeout" not in stage["cmd"], name
        assert "execution_timeout_s" in blocks[name], name
        assert "lib/pqlab/notebook.py" in stage["deps"], name


def test_every_notebook_finds_its_params_and_keeps_widgets_for_a_live_front_end(repo_root):
    import json

    for path in sorted((repo_root / "notebooks").glob("*.ipynb")):
        code = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        first = next(c for c in code if "params.load(params_path" in c)
        assert "params_path = notebook.setup(params_path)" in first, path.name
        for cell in code:
            assert "widgets.interact" not in cell and "ipywidgets" not in cell, f"{path.name}: use notebook.interact"
