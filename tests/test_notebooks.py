"""Every notebook is thin, committed without outputs, and runs once headless on the smoke profile writing every output
its DVC stage declares, with the metrics keys the stage's command line writes; widget cells never wait headless."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
import yaml

from pqlab import io
from pqlab.notebook import EXPLORATION_DIR

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
    if path.suffix == ".json":
        return bool(io.read_json(path))
    if path.suffix == ".parquet":
        return len(io.read_parquet(path)) > 0
    return path.is_dir() and any(path.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("path", [pytest.param(p, id=p.name, marks=[pytest.mark.xdist_group(GROUPS[STAGE_OF[p.name]])]
                                               if STAGE_OF.get(p.name) in GROUPS else [])
                                  for p in NOTEBOOKS])
def test_notebook_runs_headless_on_the_smoke_profile_and_writes_its_stage_outputs(path, project, tmp_path, smoke):
    """One run through `pqlab papermill`'s runner (what dvc repro uses), bounded by the execution timeout."""
    from pqlab.notebook import run_headless

    if "tpm" in _requirements(path):
        from tests.recovery.conftest import require_tpm

        require_tpm()
    stage = STAGE_OF.get(path.name)
    params_path = project / "params" / "params.yaml"
    executed = tmp_path / f"executed-{path.name}"
    pipeline_outputs = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (project / folder).rglob("*")
                        if p.is_file()}
    run_headless(path, executed, {"profile": "smoke", "params_path": str(params_path)}, execution_timeout=300,
                 cwd=path.parent, progress=False)  # by hand: no pipeline flag
    after = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (project / folder).rglob("*")
             if p.is_file()}
    assert after == pipeline_outputs, "a notebook run by hand changed the pipeline's outputs"
    result = nbformat.read(executed, as_version=4)
    outputs = [o for c in result.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    assert any("image/png" in o.get("data", {}) for o in outputs), "the notebook shows no figure"
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    scratch = project / EXPLORATION_DIR  # where a hand run writes
    if stage is None:  # `stage: null`: a notebook of no DVC stage shows its answers and writes no stage output
        written = [p for folder in ("paper_figs", "data/derived") for p in (scratch / folder).rglob("*") if p.is_file()]
        assert written == []
        return
    missing = [name for name in _declared_outputs(stage) if not (scratch / name).exists()]
    assert missing == [], f"{path.name} did not write what dvc.yaml declares (under {EXPLORATION_DIR}/)"
    invalid = [name for name in _declared_outputs(stage) if not _valid(scratch / name)]
    assert invalid == []
    metrics = next(n for n in _declared_outputs(stage) if n.endswith("_metrics.json"))
    written = io.read_json(scratch / metrics)
    assert written["profile"] == "smoke"
    assert set(written) == set(smoke.run(stage).ok().metrics), "the notebook and `pqlab` write different metrics"
    headline = io.read_json(scratch / next(n for n in _declared_outputs(stage) if n.endswith("_headline.json")))
    assert set(headline) == {"profile", "headline", "value", "unit"} and headline["profile"] == "smoke"


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata = json.loads((REPO / "notebooks" / "01_cost_characterisation.ipynb").read_text())["metadata"]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_interactive_cells_never_wait_in_a_headless_kernel(tmp_path):
    """The hang protection, in a real kernel run by papermill: `pqlab.notebook.interact` returns the function without
    calling it or building widgets (a widget nobody answers would hang the run), and says so in one line."""
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
