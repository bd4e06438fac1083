"""Model stages are byte-stable: two runs with the same params and code give byte-identical outputs."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from pqlab import params
from pqlab.paths import ProjectPaths
from pqlab.studies import case_sizes, design_space, report

# The one file allowed to differ: when and from which commit the report was built.
RUN_RECORDS = {"data/derived/report_run.json"}


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_relative_to(root / "params")}


@pytest.mark.slow
def test_size_design_space_and_report_outputs_are_byte_identical_across_runs(project, smoke, tmp_path):
    """This process's run against the session's `pqlab case-sizes` / `pqlab design-space` runs (another process,
    another folder), and the report over each."""
    settings = params.load(project / "params" / "params.yaml", "smoke")
    paths = ProjectPaths(project)
    case_sizes.run(settings, paths)
    design_space.run(settings, paths)
    report.run(settings, paths)
    first = _digests(project)
    other = tmp_path / "other"
    shutil.copytree(project / "params", other / "params")  # the report's coverage also looks for params/ files
    for stage in ("case_sizes", "design_space"):
        shutil.copytree(smoke.run(stage).ok().root, other, dirs_exist_ok=True)
    report.run(settings, ProjectPaths(other))
    second = _digests(other)
    assert set(first) == set(second)
    assert any(name.endswith(".pdf") for name in first) and any(name.endswith(".png") for name in first)
    assert "paper_figs/REPORT.md" in first and "data/derived/design_space.parquet" in first
    changed = sorted(name for name in first if first[name] != second[name] and name not in RUN_RECORDS)
    assert changed == []
