"""Parameters split by owner: a measuring study's measurement keys rerun only its measure stage, its analysis keys
(and its figure and statistics code) only its analysis stage — checked in params/resolved.yaml's blocks and with
`dvc status`."""

from __future__ import annotations

import pytest
import yaml

from pqlab import params
from pqlab.pipeline.raw_provenance import analysis_params, is_analysis_key, measurement_params
from pqlab.pipeline.registry import MEASURING
from pqlab.studies import resolve_params
from tests import dvc_scratch as scratch
from tests.conftest import REPO


@pytest.fixture(scope="module")
def settings():
    return params.load(REPO / "params" / "params.yaml")


def test_a_measure_stage_sees_exactly_what_its_raw_files_record(settings):
    """measure_<stage>'s block is the measurement_params its raw files carry (and the analysis checks), with profile
    and seed; the analysis stage's block is its analysis keys — never both for one key."""
    blocks = resolve_params.blocks(settings)
    for name, raw in MEASURING.items():
        measured = measurement_params(raw, settings)
        assert blocks[raw.measure_stage] == {"profile": settings.profile, "seed": settings.seed, **measured}, name
        analysed = blocks[name]
        for key in raw.analysis_keys:
            node = analysed
            for part in key.split("."):
                node = node[part]
            assert node == analysis_params(raw, settings)[key]
            section, _, rest = key.partition(".")
            assert rest.split(".")[0] not in measured.get(section, {}), (name, key)


def test_analysis_keys_match_both_spellings():
    costs = MEASURING["costs"]
    assert is_analysis_key(costs, "costs.bootstrap_resamples")
    assert is_analysis_key(costs, "costs.profiles.quick.bootstrap_resamples")
    assert not is_analysis_key(costs, "costs.profiles.quick.reps") and not is_analysis_key(costs, "costs.reps")
    assert is_analysis_key(MEASURING["sensitivity"], "sensitivity.report.short_burst_ms")


# --- dvc status in a scratch copy ---------------------------------------------------------------------------------

def _params_edit(key_path: list[str], change):
    def edit(root) -> None:
        path = root / "params" / "params.yaml"
        doc = yaml.safe_load(path.read_text())
        node = doc
        for part in key_path[:-1]:
            node = node[part]
        node[key_path[-1]] = change(node[key_path[-1]])
        path.write_text(yaml.safe_dump(doc))
    return edit


MEASURE_STAGES = {raw.measure_stage for raw in MEASURING.values()}
RESOLVE = {"resolve_params"}  # its dependency params.yaml changed: it reruns (and rewrites an identical file or not)


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_editing_a_figure_module_makes_only_its_analysis_stage_stale(dvc_scratch, tmp_path):
    def edit(root) -> None:
        path = root / "lib" / "pqlab" / "figures" / "costs.py"
        path.write_text(path.read_text() + "\n# a colour changed\n")

    stale = scratch.status(scratch.edited(dvc_scratch, tmp_path, edit))
    assert "costs" in stale and not stale & MEASURE_STAGES, stale


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_changing_the_bootstrap_resamples_makes_only_analysis_stages_stale(dvc_scratch, tmp_path):
    root = scratch.edited(dvc_scratch, tmp_path, _params_edit(["costs", "profiles", "quick", "bootstrap_resamples"],
                                                              lambda n: n + 1))
    assert scratch.status(root) == RESOLVE | {"costs"}
    root = scratch.edited(dvc_scratch, tmp_path / "transport", _params_edit(
        ["transport", "profiles", "quick", "bootstrap_resamples"], lambda n: n + 1))
    assert scratch.status(root) == RESOLVE | {"transport", "sensitivity", "assumptions", "transport_crosscheck"}


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_changing_a_measurement_key_makes_the_measure_stage_stale(dvc_scratch, tmp_path):
    root = scratch.edited(dvc_scratch, tmp_path, _params_edit(["costs", "profiles", "quick", "reps"], lambda n: n + 1))
    assert scratch.status(root) == RESOLVE | {"measure_costs"}  # costs reruns once its raw file changes


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_a_notebook_run_by_hand_leaves_dvc_status_and_the_pipeline_outputs_unchanged(dvc_scratch, tmp_path):
    """Issue 26 item 5: opening 04_design_space.ipynb and running it (no pipeline flag, the smoke profile it
    defaults to) writes under exploration/, never data/derived or paper_figs."""
    import shutil

    from pqlab.notebook import EXPLORATION_DIR, run_headless

    root = tmp_path / "copy"
    shutil.copytree(dvc_scratch, root, symlinks=True)
    before = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (root / folder).rglob("*") if p.is_file()}
    run_headless(root / "notebooks" / "04_design_space.ipynb", tmp_path / "executed.ipynb",
                 {"profile": "smoke", "params_path": str(root / "params" / "params.yaml")}, execution_timeout=300,
                 cwd=root / "notebooks", progress=False)
    after = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (root / folder).rglob("*") if p.is_file()}
    assert after == before
    assert scratch.stale(root) == set()
    assert (root / EXPLORATION_DIR / "paper_figs" / "case" / "fig6_design_space.png").is_file()
