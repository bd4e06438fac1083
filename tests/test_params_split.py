"""Parameters split by owner: a measuring study's measurement keys rerun only its measure stage, its analysis keys
(and its figure and statistics code) only its analysis stage — checked against dvc.yaml and with `dvc status`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pqlab.studies.raw_samples import MEASURING, dvc_params, is_analysis_key
from tests.conftest import REPO

COMMON = {"profile", "seed", "execution_timeout_s"}


@pytest.fixture(scope="module")
def pipeline():
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


@pytest.fixture(scope="module")
def params_doc():
    return yaml.safe_load((REPO / "params" / "params.yaml").read_text())


def _declared(stage: dict) -> list[str]:
    return [k for k in stage["params"][0]["params/params.yaml"] if k not in COMMON]


def _covered(key: str, declared: list[str]) -> bool:
    return any(key == d or key.startswith(d + ".") for d in declared)


def _leaves(node, prefix: str) -> list[str]:
    if isinstance(node, dict) and node:
        return [leaf for k, v in node.items() for leaf in _leaves(v, f"{prefix}.{k}")]
    return [prefix]


def test_dvc_yaml_declares_the_split_params_keys(pipeline, params_doc):
    """dvc.yaml's lists are what raw_samples.dvc_params derives from params.yaml and the stage registry."""
    for name, raw in MEASURING.items():
        measure, analysis = dvc_params(raw, params_doc)
        assert _declared(pipeline[raw.measure_stage]) == measure, raw.measure_stage
        assert _declared(pipeline[name]) == analysis, name


def test_every_key_params_yaml_sets_is_owned_by_exactly_one_stage_of_its_study(pipeline, params_doc):
    """A key added to params.yaml under a measuring study's section must be declared: by the measure stage when
    the measurement reads it, by the analysis stage when only the analysis does — never by both, never by none."""
    for name, raw in MEASURING.items():
        measure, analysis = _declared(pipeline[raw.measure_stage]), _declared(pipeline[name])
        for section in raw.sections:
            for leaf in _leaves(params_doc.get(section, {}), section):
                owner_is_analysis = is_analysis_key(raw, leaf)
                assert _covered(leaf, analysis) == owner_is_analysis, (name, leaf)
                assert _covered(leaf, measure) == (not owner_is_analysis), (raw.measure_stage, leaf)


def test_analysis_keys_match_both_spellings():
    costs = MEASURING["costs"]
    assert is_analysis_key(costs, "costs.bootstrap_resamples")
    assert is_analysis_key(costs, "costs.profiles.quick.bootstrap_resamples")
    assert not is_analysis_key(costs, "costs.profiles.quick.reps") and not is_analysis_key(costs, "costs.reps")
    assert is_analysis_key(MEASURING["sensitivity"], "sensitivity.report.short_burst_ms")


# --- dvc status in a scratch copy ---------------------------------------------------------------------------------

def _dvc(root: Path, *args: str) -> subprocess.CompletedProcess:
    dvc = Path(sys.executable).with_name("dvc")
    return subprocess.run([str(dvc), *args], cwd=root, capture_output=True, text=True, timeout=600, check=True)


def _stale(root: Path) -> set[str]:
    return set(json.loads(_dvc(root, "status", "--json").stdout or "{}"))


# the scratch project takes seconds to build and commit: its tests share one worker, which builds it once per run
# (session scope: a random order may run other modules' tests between them)
SHARES_THE_SCRATCH = pytest.mark.xdist_group("dvc_status_scratch")


@pytest.fixture(scope="session")
def scratch(tmp_path_factory):
    """A copy of the pipeline's inputs with every output present (placeholders) and committed to a dvc.lock, so
    `dvc status` reports exactly what an edit makes stale."""
    root = tmp_path_factory.mktemp("status") / "project"
    root.mkdir()
    _dvc(root, "init", "--no-scm", "-q")
    for name in ("dvc.yaml", "params", "notebooks", "lib", ".dvc/plots"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.so", "*.o", "build", "*.egg-info", ".pqlab-staging"))
        else:
            shutil.copy(source, root / name)
    for stage in yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"].values():
        for entry in [*stage.get("outs", []), *stage.get("metrics", [])]:
            path = root / (next(iter(entry)) if isinstance(entry, dict) else entry)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix:
                path.write_text(f"placeholder {path.name}\n")
            else:  # a folder output (data/raw/image_tree)
                path.mkdir(exist_ok=True)
                (path / "file").write_text("placeholder\n")
    _dvc(root, "commit", "--force", "-q")
    assert _stale(root) == set()
    return root


def _edited(scratch: Path, tmp_path: Path, edit) -> set[str]:
    root = tmp_path / "copy"
    shutil.copytree(scratch, root, symlinks=True)
    edit(root)
    return _stale(root)


def _params_edit(key_path: list[str], change):
    def edit(root: Path) -> None:
        path = root / "params" / "params.yaml"
        doc = yaml.safe_load(path.read_text())
        node = doc
        for part in key_path[:-1]:
            node = node[part]
        node[key_path[-1]] = change(node[key_path[-1]])
        path.write_text(yaml.safe_dump(doc))
    return edit


ANALYSIS_STAGES = set(MEASURING)
MEASURE_STAGES = {raw.measure_stage for raw in MEASURING.values()}


@pytest.mark.slow
@SHARES_THE_SCRATCH
def test_editing_a_figure_module_makes_only_its_analysis_stage_stale(scratch, tmp_path):
    def edit(root: Path) -> None:
        path = root / "lib" / "pqlab" / "figures" / "costs.py"
        path.write_text(path.read_text() + "\n# a colour changed\n")

    stale = _edited(scratch, tmp_path, edit)
    assert "costs" in stale and not stale & MEASURE_STAGES, stale


@pytest.mark.slow
@SHARES_THE_SCRATCH
def test_changing_the_bootstrap_resamples_makes_only_analysis_stages_stale(scratch, tmp_path):
    stale = _edited(scratch, tmp_path, _params_edit(["costs", "profiles", "quick", "bootstrap_resamples"],
                                                    lambda n: n + 1))
    assert stale == {"costs"}, stale
    stale = _edited(scratch, tmp_path / "thread", _params_edit(["thread", "profiles", "quick", "bootstrap_resamples"],
                                                               lambda n: n + 1))
    assert stale == {"transport", "sensitivity", "assumptions", "transport_crosscheck"}, stale


@pytest.mark.slow
@SHARES_THE_SCRATCH
def test_changing_a_measurement_key_makes_the_measure_stage_stale(scratch, tmp_path):
    stale = _edited(scratch, tmp_path, _params_edit(["costs", "profiles", "quick", "reps"], lambda n: n + 1))
    assert "measure_costs" in stale and "costs" not in stale, stale  # costs reruns once its raw file changes


@pytest.mark.slow
@SHARES_THE_SCRATCH
def test_a_notebook_run_by_hand_leaves_dvc_status_and_the_pipeline_outputs_unchanged(scratch, tmp_path):
    """Issue 26 item 5: opening 04_design_space.ipynb and running it (no pipeline flag, the smoke profile it
    defaults to) writes under exploration/, never data/derived or paper_figs."""
    from pqlab.notebook import EXPLORATION_DIR, run_headless

    root = tmp_path / "copy"
    shutil.copytree(scratch, root, symlinks=True)
    before = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (root / folder).rglob("*") if p.is_file()}
    run_headless(root / "notebooks" / "04_design_space.ipynb", tmp_path / "executed.ipynb",
                 {"profile": "smoke", "params_path": str(root / "params" / "params.yaml")}, execution_timeout=300,
                 cwd=root / "notebooks", progress=False)
    after = {p: p.read_bytes() for folder in ("data", "paper_figs") for p in (root / folder).rglob("*") if p.is_file()}
    assert after == before
    assert _stale(root) == set()
    assert (root / EXPLORATION_DIR / "paper_figs" / "case" / "fig6_design_space.png").is_file()
