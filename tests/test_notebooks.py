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
def test_notebook_runs_on_the_smoke_profile(path, project, tmp_path):
    import papermill

    _skip_without(json.loads(path.read_text())["metadata"].get("pqlab", {}).get("requires", []))

    executed = tmp_path / f"executed-{path.name}"
    papermill.execute_notebook(
        str(path), str(executed), kernel_name="pqlab", progress_bar=False, cwd=str(path.parent),
        parameters={"profile": "smoke", "params_path": str(project / "params" / "params.yaml")},
    )
    result = nbformat.read(executed, as_version=4)
    errors = [o for c in result.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    assert any((project / "paper_figs").rglob("*.png")), "the notebook wrote no figure"
