"""`--out-dir` means outputs only (issue 24 item 4): every stage's command line, run on the smoke profile into a new
empty folder, finds its inputs (params, the pqm4 cycle table, the paper reference) in the project and writes only
data/ and paper_figs/ there. The runs are the session's smoke outputs (tests/smoke.py) that other tests read too."""

from __future__ import annotations

import hashlib

import pytest

from tests.smoke import REPO, STAGES

GROUPS = {"control_cycle": "rt_core"}  # pins the real-time core: one at a time with the other tests that do


def _project_inputs() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((REPO / "params").iterdir())}


@pytest.mark.slow
@pytest.mark.parametrize("stage", [pytest.param(s, marks=[pytest.mark.xdist_group(GROUPS[s])] if s in GROUPS else [])
                                   for s in STAGES])
def test_every_stage_writes_into_a_new_empty_out_dir(smoke, stage):
    before = _project_inputs()
    run = smoke.run(stage).ok()
    assert {p.name for p in run.root.iterdir()} <= {"data", "paper_figs"}, "inputs must not be looked up or copied"
    assert any(name.startswith("data/") for name in run.files)
    written = run.written  # files, and for image-tree the generated tree (a folder)
    assert written and all(p.is_relative_to(run.root) and p.exists() for p in written), run.stdout
    published = {q.relative_to(run.root).as_posix() for p in written for q in ([p] if p.is_file() else p.rglob("*"))
                 if q.is_file()}
    assert published and published <= run.files
    assert _project_inputs() == before  # the project's inputs are read, never written
