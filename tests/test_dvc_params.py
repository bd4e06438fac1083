"""Every parameter DVC needs, DVC sees; params.yaml validated before DVC parses anything (issue 36, items 2 and 3).

dvc.yaml's stages read params/resolved.yaml (pqlab.studies.resolve_params): per stage, every field of what it reads,
defaults included. The tests:

- every model field (tests/param_fields.py: 288 of them; two allow a single value) is set to a valid non-default
  value, one at a time, and the stages whose block changes must be exactly the stages that read it: the measuring
  stage's RawSpec split (measurement keys -> measure_<stage>, analysis keys -> <stage>), a model stage's registry
  ``reads``, profile / seed / the notebook timeout as each stage records them. This runs on the resolved blocks, not
  through DVC (268 `dvc status` runs would take many minutes);
- dvc.yaml wires each stage to exactly its block, and nothing in it makes DVC parse params.yaml;
- a sample of those edits (each kind of field: a first-time key, a shared section, the section kept out of
  model_dump, analysis keys params.yaml does not set, a stage without raw samples, top-level keys; the analysis and
  measurement keys of tests/test_params_split.py) goes through real `dvc status` in a scratch copy of the pipeline;
- an alias bomb and a malformed params.yaml under `make repro`, and under a bare `dvc status`: one line, at once.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pqlab import params
from pqlab.pipeline import registry
from pqlab.pipeline.raw_provenance import is_analysis_key
from pqlab.pipeline.registry import MEASURING
from pqlab.studies import resolve_params
from tests import dvc_scratch as scratch
from tests import param_fields
from tests.conftest import REPO
from tests.test_bounded_parsing import alias_bomb


@pytest.fixture(scope="module")
def document() -> dict:
    return yaml.safe_load((REPO / "params" / "params.yaml").read_text())


def readers(path: tuple) -> set[str]:
    """The stages that read a field, from what each stage declares it reads (not from resolved.yaml)."""
    name = param_fields.dotted(path)
    top = path[0]
    found: set[str] = set()
    for stage in registry.STAGES:
        raw = MEASURING.get(stage.name)
        if raw is not None:
            if top in ("profile", "seed"):
                found |= {raw.measure_stage, stage.name}
            elif top in raw.sections:
                found.add(stage.name if is_analysis_key(raw, name) else raw.measure_stage)
        elif top in stage.reads:
            found.add(stage.name)
        if top == "execution_timeout_s" and stage.notebook:
            found.add(stage.name)
    return found


def _edits(document: dict) -> list[param_fields.FieldValue]:
    settings = params.resolve(document)
    found = []
    for path, annotation in param_fields.fields(settings):
        if param_fields.single_valued(annotation):
            continue
        value = param_fields.value_for(document, path, annotation)
        assert value is not None, f"no valid non-default value for {param_fields.dotted(path)}: add one to " \
                                  "tests/param_fields.CANDIDATES"
        found.append(value)
    return found


@pytest.fixture(scope="module")
def edits(document) -> dict[str, param_fields.FieldValue]:
    return {param_fields.dotted(v.path): v for v in _edits(document)}


def test_every_field_set_to_another_valid_value_changes_exactly_the_blocks_of_the_stages_that_read_it(document,
                                                                                                       edits):
    base = resolve_params.blocks(params.resolve(document))
    assert len(edits) > 250  # every leaf of the models (tests/param_fields.py)
    wrong = {}
    for name, edit in edits.items():
        changed = {stage for stage, block in resolve_params.blocks(edit.settings).items() if block != base[stage]}
        if changed != readers(edit.path):
            wrong[name] = (sorted(changed), sorted(readers(edit.path)))
    assert not wrong, f"field: (stages whose block changed, stages that read it): {wrong}"


def test_a_field_no_stage_reads_is_only_the_profile_list(edits):
    assert sorted(name for name, edit in edits.items() if not readers(edit.path)) == ["profiles"]


def test_the_fields_that_allow_one_value_are_known():
    settings = params.load(REPO / "params" / "params.yaml")
    single = [param_fields.dotted(p) for p, a in param_fields.fields(settings) if param_fields.single_valued(a)]
    assert single == ["attack_matrix.checkpoint_signer", "attack_matrix.alternative_signer"]


def test_dvc_yaml_lists_for_each_stage_exactly_its_block_and_never_params_yaml():
    text = (REPO / "dvc.yaml").read_text()
    pipeline = yaml.safe_load(text)
    assert "vars" not in pipeline and "${" not in text  # nothing in dvc.yaml makes DVC parse params.yaml
    blocks = resolve_params.blocks(params.load(REPO / "params" / "params.yaml"))
    for name, stage in pipeline["stages"].items():
        declared = stage.get("params")
        if name in blocks:
            assert declared == [{"params/resolved.yaml": [name]}], name
        else:
            assert declared is None, name
    first = next(iter(pipeline["stages"].items()))
    assert first[0] == registry.RESOLVE_STAGE and first[1]["cmd"] == "pqlab params --resolve"
    assert "params/params.yaml" in first[1]["deps"]
    assert first[1]["outs"] == [{"params/resolved.yaml": {"cache": False}}]


def test_the_committed_resolved_file_is_current():
    """params/resolved.yaml is committed (so `dvc exp show` compares experiments' parameters); a default changed in
    the code or a key added to params.yaml without `pqlab params --resolve` fails here."""
    committed = (REPO / "params" / resolve_params.RESOLVED).read_text()
    assert committed == resolve_params.text(params.load(REPO / "params" / "params.yaml")), \
        "run `pqlab params --resolve` and commit params/resolved.yaml"


# --- real `dvc status` -----------------------------------------------------------------------------------------

# each kind of field the other `dvc status` tests do not cover (a first-time key: below; an analysis key and a
# measurement key: tests/test_params_split.py): a shared section, the section kept out of model_dump, an analysis key
# inside a sub-model, an analysis key no params.yaml sets, a stage without raw samples, top-level keys
SAMPLE = ["framing.iphc_bytes", "extended_design_space.add_noc", "recovery.sizing.nv_write_budget",
          "full_image.reference_operation", "image_tree.files", "seed", "execution_timeout_s", "profiles"]


def _write(root: Path, document: dict) -> None:
    (root / "params" / "params.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_a_value_set_for_the_first_time_reruns_exactly_the_stages_that_read_it(dvc_scratch, tmp_path):
    """The try: `transport: channel_priority: message_age` (valid, a default nobody had written) left `dvc status` up to
    date. Now the resolve stage is stale at once, and once resolved (`make status`) the transport grids are."""
    def edit(root: Path) -> None:
        path = root / "params" / "params.yaml"
        document = yaml.safe_load(path.read_text())
        document["transport"]["channel_priority"] = "message_age"
        path.write_text(yaml.safe_dump(document, sort_keys=False))

    root = scratch.edited(dvc_scratch, tmp_path, edit)
    assert scratch.stale(root) == {registry.RESOLVE_STAGE}  # a bare `dvc status`: never "up to date"
    assert scratch.status(root) == {registry.RESOLVE_STAGE, "measure_transport", "measure_sensitivity",
                                    "measure_assumptions", "measure_transport_crosscheck"}


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_dvc_status_marks_the_stages_that_read_each_sampled_field(dvc_scratch, edits, tmp_path):
    wrong = {}
    for number, name in enumerate(SAMPLE):
        edit = edits[name]
        root = scratch.edited(dvc_scratch, tmp_path / str(number), lambda r, e=edit: _write(r, e.document))
        stages, expected = scratch.status(root), {registry.RESOLVE_STAGE} | readers(edit.path)
        if stages != expected:
            wrong[name] = (sorted(stages), sorted(expected))
        shutil.rmtree(root)
    assert not wrong, f"field: (dvc status, expected): {wrong}"


# --- validated before DVC parses anything -------------------------------------------------------------------------

MALFORMED = {"alias bomb": lambda text: text + alias_bomb(),
             "a duplicate key": lambda text: text + "seed: 1\n",
             "not YAML": lambda text: text + "costs: [unclosed\n"}


def _limited() -> None:
    """A child under a 1 GiB address-space limit: a parser that expands the bomb fails instead of eating the host."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("what", list(MALFORMED))
def test_make_repro_refuses_a_malformed_params_yaml_in_one_line_before_anything_else(what, tmp_path):
    """`make repro` validates params.yaml with pqlab's bounded parser first (before setup, before DVC): the bomb
    reached 3.5 GB in DVC's own parser before."""
    project = tmp_path / "project"
    (project / "params").mkdir(parents=True)
    shutil.copy2(REPO / "Makefile", project / "Makefile")
    (project / ".venv").symlink_to(Path(sys.executable).parent.parent)
    source = (REPO / "params" / "params.yaml").read_text()
    (project / "params" / "params.yaml").write_text(MALFORMED[what](source))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # `-o setup`: should the validation ever let the file through, make must not reinstall the shared venv (linked
    # here) into this scratch folder; the validation runs before setup either way
    outside_make = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}  # `make test`
    done = subprocess.run(["make", "--no-print-directory", "-o", "setup", "repro"], cwd=project, capture_output=True,
                          text=True, timeout=120, preexec_fn=_limited, env=outside_make)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert lines[0].startswith("pqlab: error [PARAMS_INVALID]: params/params.yaml: ") and len(lines) == 2, lines
    assert lines[1].startswith("make: *** [Makefile:") and "params-resolved] Error 2" in lines[1]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert cpu < 1.0, f"{cpu:.2f} s of CPU (make and the interpreter's start included)"


@pytest.mark.slow
@scratch.SHARES_THE_SCRATCH
def test_a_bare_dvc_status_never_parses_params_yaml(dvc_scratch, tmp_path):
    """DVC reads only params/resolved.yaml: a bomb in params.yaml is a changed dependency of resolve_params to it,
    and `dvc repro` stops at that stage with pqlab's line."""
    def edit(root: Path) -> None:
        path = root / "params" / "params.yaml"
        path.write_text(path.read_text() + alias_bomb())

    root = scratch.edited(dvc_scratch, tmp_path, edit)
    done = subprocess.run([scratch.DVC, "status", "--json"], cwd=root, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited)
    assert done.returncode == 0, done.stderr[-2000:]
    assert set(yaml.safe_load(done.stdout)) == {registry.RESOLVE_STAGE}
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    repro = subprocess.run([scratch.DVC, "repro", registry.RESOLVE_STAGE], cwd=root, capture_output=True, text=True,
                           timeout=300, preexec_fn=_limited, env=env)
    assert repro.returncode != 0
    assert "pqlab: error [PARAMS_INVALID]: params/params.yaml: parameters file: its aliases expand" in repro.stderr
