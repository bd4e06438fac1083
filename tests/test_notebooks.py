"""Every notebook is thin, committed without outputs, and runs end to end as a smoke test."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


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


def _skip_without(requirements: list[str]) -> None:
    """A notebook that needs a real TPM (``metadata.pqlab.requires``) skips, saying why, where there is none."""
    if "tpm" in requirements:
        from tests.recovery.conftest import require_tpm

        require_tpm()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_headless_several_times_in_a_row(path, project, tmp_path):
    """Three headless runs in a row through `pqlab papermill` (what dvc repro uses), each bounded by the execution
    timeout: the first on the smoke profile, two more on a smaller one. Widget cells are skipped, never waited on."""
    import yaml

    from pqlab.notebook import run_headless
    from tests.faults import small_params

    meta = json.loads(path.read_text())["metadata"].get("pqlab", {})
    _skip_without(meta.get("requires", []))
    writes_outputs = meta.get("stage", "") is not None  # `stage: null`: a notebook of no DVC stage writes nothing
    params_path = project / "params" / "params.yaml"
    for run in range(3):
        if run == 1:
            raw = yaml.safe_load(params_path.read_text())
            small_params(raw)
            params_path.write_text(yaml.safe_dump(raw))
        executed = tmp_path / f"executed-{run}-{path.name}"
        run_headless(path, executed, {"profile": "smoke", "params_path": str(params_path)}, execution_timeout=300,
                     cwd=path.parent, progress=False)
        result = nbformat.read(executed, as_version=4)
        outputs = [o for c in result.cells if c.cell_type == "code" for o in c.outputs]
        assert [o for o in outputs if o.output_type == "error"] == []
        assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        assert any((project / "paper_figs").rglob("*.png")) == writes_outputs, "a stage notebook writes figures"
