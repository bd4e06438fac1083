"""Every notebook is thin, committed without outputs, and runs once headless on the smoke profile as its DVC stage runs
it, writing every output the stage declares: byte for byte what `pqlab` writes from the same raw samples (a measuring
stage) or params (a byte-stable model stage), with the metrics keys the stage's command line writes; widget cells
never wait headless.

nbformat is imported inside the tests that read or write notebooks: importing it costs 1–2.6 s per process here
(its jsonschema imports rfc3987_syntax, which builds some thirty Lark parsers), and `make check` needs none of them."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from pqlab import io, params
from pqlab.notebook import EXPLORATION_DIR
from pqlab.paths import ProjectPaths
from pqlab.pipeline.registry import MEASURING

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PIPELINE = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
STAGE_OF = {Path(dep).name: name for name, stage in PIPELINE.items() for dep in stage["deps"]
            if dep.startswith("notebooks/") and dep.endswith(".ipynb")}
GROUPS = {"control_cycle": "rt_core"}  # the study pins the real-time core (tests/smoke.py)


def _meta(path: Path) -> dict:
    """``metadata.pqlab``: ``requires`` (e.g. ["tpm"]) and ``stage: null`` for a notebook of no DVC stage."""
    return json.loads(path.read_text())["metadata"].get("pqlab", {})


def _requirements(path: Path) -> list[str]:
    return _meta(path).get("requires", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean_with_a_parameters_cell(path):
    notebook = json.loads(path.read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "".join(tagged[0]["source"])
    assert 'profile = "smoke"' in source and "params_path" in source
    assert notebook["metadata"]["kernelspec"]["language"] == "python"
    assert path.name in STAGE_OF or _meta(path).get("stage", "") is None, "a notebook is a DVC stage or says none"


def _declared_outputs(stage: str) -> list[str]:
    """The files dvc.yaml says the stage writes, except the executed notebook itself (written by papermill)."""
    entries = [*PIPELINE[stage].get("outs", []), *PIPELINE[stage].get("metrics", [])]
    names = [next(iter(e)) if isinstance(e, dict) else e for e in entries]
    return [n for n in names if not n.startswith("data/derived/notebooks/")]


def _valid(path: Path) -> bool:
    data = path.read_bytes()
    if path.suffix == ".png":
        return data.startswith(b"\x89PNG")
    if path.suffix == ".pdf":
        return data.startswith(b"%PDF") and b"%%EOF" in data[-64:]
    if path.suffix in (".csv", ".md"):
        return data.count(b"\n") >= 2  # a header (and rule) and at least one row
    if path.name.endswith("_headline.json"):  # DVC's metrics: no stage reads them, written without a digest
        return bool(json.loads(data))
    if path.suffix == ".json":
        return bool(io.read_json(path))
    if path.suffix == ".parquet":
        return len(io.read_parquet(path)) > 0
    return path.is_dir() and any(path.iterdir())


# The stages whose outputs the same params make byte for byte (a measuring stage's analysis from the same raw samples
# is one of them too); the attack matrix times its cases, so there the files and metrics keys are compared.
BYTE_STABLE = {"case_sizes", "design_space", "extended_design_space", *MEASURING}
DERIVED_INPUTS = {"amortisation": ("costs", "data/derived/costs_stats.parquet")}  # stage: (producer, file it reads)


def _pipeline_project(stage: str, project: Path, smoke) -> None:
    """What ``dvc repro`` gives a notebook stage: a measuring stage's raw samples (from its session smoke run) and any
    output of another stage it reads, under the project."""
    if stage in MEASURING:
        (project / "data" / "raw").mkdir(parents=True)
        for name in MEASURING[stage].files:
            shutil.copy(smoke.run(stage).ok().root / "data" / "raw" / name, project / "data" / "raw" / name)
    if stage in DERIVED_INPUTS:
        producer, name = DERIVED_INPUTS[stage]
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(smoke.run(producer).ok().root / name, project / name)


def _reference(stage: str, project: Path, smoke, tmp_path: Path) -> Path:
    """Where the files the notebook must reproduce are. The smoke run of the stage, except where the stage reads
    another's output: the amortisation smoke run, alone in its folder, measured the cost statistics in memory, so its
    reference is the library's analysis of the same raw samples and statistics (``--analyse-only``)."""
    if stage not in DERIVED_INPUTS:
        return smoke.run(stage).ok().root
    reference = tmp_path / "reference"
    shutil.copytree(project / "data", reference / "data")  # the inputs only: made before the notebook runs
    settings = params.load(project / "params" / "params.yaml", "smoke")
    importlib.import_module(f"pqlab.studies.{stage}").run(settings, ProjectPaths(reference, project / "params"),
                                                         progress=False, analyse_only=True)
    return reference


@pytest.mark.slow
@pytest.mark.parametrize("path", [pytest.param(p, id=p.name, marks=[pytest.mark.xdist_group(GROUPS[STAGE_OF[p.name]])]
                                               if STAGE_OF.get(p.name) in GROUPS else [])
                                  for p in NOTEBOOKS])
def test_notebook_runs_headless_as_its_dvc_stage_and_writes_its_outputs(path, project, tmp_path, smoke):
    """One run through `pqlab papermill`'s runner, bounded by the execution timeout, as ``dvc repro`` runs it
    (``pipeline = True``, smoke profile): a measuring stage's notebook analyses the raw samples of its session smoke
    run and must give that run's outputs byte for byte (issue 26: figures rebuilt from raw samples); a model stage's
    gives the same files and metrics as `pqlab`. A notebook of no stage runs as opened by hand. (Opened by hand,
    the study notebooks write under exploration/: tests/test_params_split.py and test_entry_points.py run two so.)"""
    import nbformat  # see the module docstring

    from pqlab.notebook import run_headless

    if "tpm" in _requirements(path):
        from tests.recovery.conftest import require_tpm

        require_tpm()
    if "ns3" in _requirements(path):
        from tests.ns3_support import require_ns3

        require_ns3()
    stage = STAGE_OF.get(path.name)
    parameters = {"profile": "smoke", "params_path": str(project / "params" / "params.yaml")}
    if stage is not None:
        _pipeline_project(stage, project, smoke)
        parameters["pipeline"] = True
    inputs = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    reference = _reference(stage, project, smoke, tmp_path) if stage is not None else None
    executed = tmp_path / f"executed-{path.name}"
    run_headless(path, executed, parameters, execution_timeout=300, cwd=path.parent, progress=False)
    result = nbformat.read(executed, as_version=4)
    outputs = [o for c in result.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    assert any("image/png" in o.get("data", {}) for o in outputs), "the notebook shows no figure"
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert {p: p.read_bytes() for p in inputs if p.is_file()} == inputs, "the notebook changed its inputs"
    if stage is None:  # `stage: null`: a notebook of no DVC stage shows its answers and writes no stage output
        written = [p for p in project.rglob("*") if p.is_file() and p not in inputs and p != executed]
        assert written == []
        return
    assert not (project / EXPLORATION_DIR).exists(), "run as a pipeline stage, the notebook wrote under exploration/"
    missing = [name for name in _declared_outputs(stage) if not (project / name).exists()]
    assert missing == [], f"{path.name} did not write what dvc.yaml declares"
    invalid = [name for name in _declared_outputs(stage) if not _valid(project / name)]
    assert invalid == []
    if stage in BYTE_STABLE:
        different = [name for name in _declared_outputs(stage)
                     if (project / name).read_bytes() != (reference / name).read_bytes()]
        assert different == [], f"{path.name}: not byte-identical to `pqlab {stage}` on the same inputs"
    metrics = next(n for n in _declared_outputs(stage) if n.endswith("_metrics.json"))
    written = io.read_json(project / metrics)
    assert written["profile"] == "smoke"
    assert set(written) == set(io.read_json(reference / metrics)), "the notebook and `pqlab` write different metrics"
    headline = json.loads((project / next(n for n in _declared_outputs(stage) if n.endswith("_headline.json")))
                          .read_text())
    assert set(headline) == {"profile", "headline", "value", "unit"} and headline["profile"] == "smoke"


def _notebook(path: Path, *cells: str) -> Path:
    import nbformat  # see the module docstring
    nb = nbformat.v4.new_notebook()
    nb.metadata = json.loads((REPO / "notebooks" / "01_cost_characterisation.ipynb").read_text())["metadata"]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_interactive_cells_never_wait_in_a_headless_kernel(tmp_path):
    """The hang protection, in a real kernel run by papermill: `pqlab.notebook.interact` returns the function without
    calling it or building widgets (a widget nobody answers would hang the run), and says so in one line."""
    import nbformat  # see the module docstring

    from pqlab.notebook import run_headless

    path = _notebook(tmp_path / "widgets.ipynb", "from pqlab import notebook\n"
                     "def never(limit=1):\n    raise AssertionError('called headless')\n"
                     "assert notebook.interact(never, limit=(1, 5)) is never\n"
                     "assert notebook.widget('IntSlider', value=3) is None\n"
                     "assert not notebook.interactive()")
    run_headless(path, tmp_path / "out.ipynb", {}, execution_timeout=60, progress=False)
    result = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    outputs = [o for c in result.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "never: interactive controls need a live Jupyter front end; skipped in this headless run" in text
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
