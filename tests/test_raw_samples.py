"""Measure once, analyse many times: raw files with provenance, analysis only from them, imports from elsewhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from pqlab import cli, io, params
from pqlab.errors import InputError, RawSamplesError
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance
from pqlab.provenance import PROVENANCE_KEY
from pqlab.studies import costs, measure_costs
from pqlab.studies import report as report_study
from tests import faults


def _project(root: Path, **costs_overrides) -> tuple[params.StudyParams, ProjectPaths]:
    faults.make_project(root)
    path = root / "params" / "params.yaml"
    if costs_overrides:
        doc = yaml.safe_load(path.read_text())
        doc.update({k: v for k, v in costs_overrides.items() if k == "seed"})
        doc["costs"]["profiles"]["smoke"].update({k: v for k, v in costs_overrides.items() if k != "seed"})
        path.write_text(yaml.safe_dump(doc))
    return params.load(path, "smoke"), ProjectPaths(root)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One project whose costs samples were measured once (smoke profile)."""
    settings, paths = _project(tmp_path_factory.mktemp("measured") / "project")
    written = measure_costs.measure(settings, paths, progress=False)
    return settings, paths, written


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """Another clone, another seed: its raw costs file (what a colleague's Pi would hand over)."""
    settings, paths = _project(tmp_path_factory.mktemp("elsewhere") / "project", seed=7)
    (file,) = measure_costs.measure(settings, paths, progress=False)
    return file


def _copy(project: Path, tmp_path: Path) -> tuple[params.StudyParams, ProjectPaths]:
    root = tmp_path / "copy"
    shutil.copytree(project, root)
    return params.load(root / "params" / "params.yaml", "smoke"), ProjectPaths(root)


def test_measure_writes_only_the_raw_file_with_its_provenance(measured):
    settings, paths, written = measured
    assert written == [paths.raw / "costs.parquet"]
    assert not (paths.derived).exists() and not (paths.root / "paper_figs").exists()
    block = io.read_parquet_metadata(written[0])[PROVENANCE_KEY]
    assert block["stage"] == "costs" and block["file"] == "costs.parquet" and block["seed"] == settings.seed
    assert block["machine"] and len(block["load_average"]["before"]) == 3 and len(block["load_average"]["after"]) == 3
    assert block["params_hash"] == raw_provenance.params_hash(block["measurement_params"])
    assert block["measurement_params"]["costs"]["reps"] == settings.costs.reps
    # analysis-only keys are not measurement parameters: changing them never calls for a new measurement
    assert "bootstrap_resamples" not in block["measurement_params"]["costs"]


def test_analysis_from_the_same_samples_is_byte_identical(measured, tmp_path):
    settings, paths = _copy(measured[1].root, tmp_path)
    first = costs.run(settings, paths, progress=False, analyse_only=True)
    before = {p: p.read_bytes() for p in first.files}
    again = costs.run(settings, paths, progress=False, analyse_only=True)
    assert sorted(again.files) == sorted(before)
    changed = [p.name for p in again.files if p.read_bytes() != before[p]]
    assert not changed
    assert first.metrics["raw_samples"]["seed"] == settings.seed


def test_analyse_only_without_raw_samples_is_one_line_and_never_measures(tmp_path, capsys):
    root = faults.make_project(tmp_path / "project")
    argv = ["costs", "--params", str(root / "params" / "params.yaml"), "--profile", "smoke", "--analyse-only"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "[RAW_SAMPLES]" in err and "measure_costs" in err
    assert not (root / "data" / "raw").exists() or not any((root / "data" / "raw").iterdir())


def test_measure_only_cli_writes_just_the_raw_file_and_says_where(tmp_path, capsys):
    root = faults.make_project(tmp_path / "project")
    argv = ["costs", "--params", str(root / "params" / "params.yaml"), "--profile", "smoke", "--measure-only",
            "--quiet"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"writing under {root.resolve()} (the project of ")  # no --out-dir: it says where
    assert f"wrote {root / 'data' / 'raw' / 'costs.parquet'}" in out
    assert [p.name for p in (root / "data" / "raw").iterdir()] == ["costs.parquet"]
    assert not (root / "paper_figs").exists()


def test_analysis_refuses_samples_measured_with_other_measurement_params(measured, tmp_path):
    _, paths = _copy(measured[1].root, tmp_path)
    _project_path = paths.root / "params" / "params.yaml"
    doc = yaml.safe_load(_project_path.read_text())
    doc["costs"]["profiles"]["smoke"]["reps"] += 1
    _project_path.write_text(yaml.safe_dump(doc))
    with pytest.raises(RawSamplesError, match=r"costs\.reps = \d+ there, \d+ here"):
        costs.run(params.load(_project_path, "smoke"), paths, progress=False, analyse_only=True)


def test_import_from_another_clone_with_another_seed_and_the_metrics_name_its_source(elsewhere, tmp_path, capsys):
    root = faults.make_project(tmp_path / "project")
    argv = ["raw", "import", str(elsewhere), "--params", str(root / "params" / "params.yaml"), "--profile", "smoke"]
    assert cli.main(argv) == 0
    target = root / "data" / "raw" / "costs.parquet"
    assert f"as {target}" in capsys.readouterr().out
    assert target.read_bytes() == elsewhere.read_bytes()
    settings = params.load(root / "params" / "params.yaml", "smoke")
    result = costs.run(settings, ProjectPaths(root), progress=False, analyse_only=True)
    assert result.metrics["raw_samples"]["seed"] == 7 != settings.seed
    source = io.read_parquet_metadata(elsewhere)[PROVENANCE_KEY]
    report_study.run(None, ProjectPaths(root, root / "params"))
    costs_row = next(line for line in (root / "paper_figs" / "REPORT.md").read_text().splitlines()
                     if line.startswith("| `costs` |"))
    assert f"host {source['machine']}" in costs_row and "seed 7" in costs_row
    assert io.read_parquet_metadata(elsewhere)["timestamp_utc"] in costs_row


def test_import_for_a_named_stage_refuses_another_stages_file(elsewhere, tmp_path, capsys):
    root = faults.make_project(tmp_path / "project")
    argv = ["raw", "import", str(elsewhere), "--stage", "control_cycle", "--params",
            str(root / "params" / "params.yaml"), "--profile", "smoke"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "[RAW_SAMPLES]" in err and "measured for stage 'costs', not 'control_cycle'" in err
    assert not (root / "data" / "raw").exists() or not any((root / "data" / "raw").iterdir())


def _rewritten(source: Path, dest: Path, change) -> Path:
    """``source`` with its table changed by ``change`` and its metadata (checksum included) kept as it was."""
    table = pq.read_table(source)
    pq.write_table(change(table).replace_schema_metadata(table.schema.metadata), dest)
    return dest


def test_import_refuses_a_tampered_file(elsewhere, tmp_path):
    settings, paths = _project(tmp_path / "project")

    def slower(table: pa.Table) -> pa.Table:
        index = table.schema.get_field_index("net_ns")
        column = table.column(index).to_pylist()
        column[0] = column[0] * 10 + 1
        return table.set_column(index, "net_ns", pa.array(column, type=table.schema.field(index).type))

    tampered = _rewritten(elsewhere, tmp_path / "costs.parquet", slower)
    with pytest.raises(InputError, match="does not match the SHA-256"):
        raw_io.import_file(tampered, settings, paths)
    assert not (paths.raw / "costs.parquet").exists()


def test_import_refuses_a_file_measured_with_other_measurement_params(elsewhere, tmp_path):
    settings, paths = _project(tmp_path / "project", reps=21)
    with pytest.raises(RawSamplesError, match=r"costs\.reps = 5 there, 21 here"):
        raw_io.import_file(elsewhere, settings, paths)
    assert not paths.raw.exists() or not any(paths.raw.iterdir())


def test_import_refuses_a_file_that_is_no_raw_sample(measured, tmp_path):
    settings, paths = _copy(measured[1].root, tmp_path)
    derived = costs.run(settings, paths, progress=False, analyse_only=True).files
    stats = next(p for p in derived if p.name == "costs_stats.parquet")
    with pytest.raises(RawSamplesError, match="names no measuring stage"):
        raw_io.import_file(stats, settings, paths)
