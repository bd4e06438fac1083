"""The recovery stage end to end on the smoke profile (real swtpm, real prover processes), its params and CLI."""

from __future__ import annotations

import copy
import shutil

import pandas as pd
import pytest
import yaml

from pqlab import cli, params
from pqlab.errors import ParamsError
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.report import collect, load_reference
from pqlab.studies import recovery
from tests.conftest import REPO
from tests.recovery.conftest import require_tpm


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    (root / "params").mkdir()
    for name in ("params.yaml", "paper_reference.yaml"):
        (root / "params" / name).write_text((REPO / "params" / name).read_text())
    return root


@pytest.fixture(scope="module")
def result(project):
    require_tpm()
    settings = params.load(project / "params" / "params.yaml", "smoke")
    return settings, recovery.run(settings, ProjectPaths(project), progress=False)


@pytest.mark.slow  # runs the whole study
def test_every_output_is_written(result, project):
    _, run = result
    names = {p.relative_to(project).as_posix() for p in run.files}
    assert {"paper_figs/amort/table4_recovery.csv", "paper_figs/amort/table4_recovery.md",
            "paper_figs/amort/fig_recovery.pdf", "paper_figs/amort/fig_recovery.png",
            "data/derived/recovery_metrics.json", "data/raw/recovery_trials.parquet"} <= names
    trials = pd.read_parquet(project / "data/raw/recovery_trials.parquet")
    assert len(trials) == 6 and trials["killed_by_sigkill"].all()


@pytest.mark.slow  # runs the whole study
def test_table4_counts_come_from_the_trials(result):
    settings, run = result
    table = run.tables["table4_recovery"].set_index(["scenario", "arm"])
    n = settings.recovery.trials
    assert table.loc[("rollback", "naive"), "seq. reuse"] > 0
    assert table.loc[("rollback", "tpm"), "seq. reuse"] == 0
    assert table.loc[("rollback", "tpm"), "stale detected"] == f"{n}/{n}"
    assert table.loc[("restart", "tpm"), "new epoch"] == f"0/{n}"
    assert (table["killed by SIGKILL"] == f"{n}/{n}").all()


@pytest.mark.slow  # runs the whole study
def test_metrics_cover_every_report_row_and_name_the_software_tpm(result, project):
    assert result[1].metrics["window"] == 64
    m = read_json(project / "data/derived/recovery_metrics.json")
    assert m["tpm"]["software"] and "software TPM" in m["tpm"]["note"] and m["tpm"]["tpm2-pytss"]
    assert m["crash"]["all_fail_secure_or_resume"] and m["restart"]["bounded_by_k"]
    assert m["sizing"]["min_window"] == 631
    assert len(m["raw_samples"]["load_average"]["before"]) == len(m["raw_samples"]["load_average"]["after"]) == 3
    reference = load_reference(project / "params" / "paper_reference.yaml")
    rows = collect(reference, project / "data" / "derived")
    mine = rows[[q.metric.startswith("recovery_metrics.json:") for q in reference.quantities]]
    assert len(mine) >= 20 and mine["here"].notna().all()


@pytest.mark.slow  # runs the whole study
def test_the_cli_runs_the_stage_and_reports_a_missing_tpm_in_one_line(tmp_path, capsys):
    """In a project of its own: the module's study outputs stay those of the `result` fixture."""
    require_tpm()
    project = tmp_path
    shutil.copytree(REPO / "params", project / "params")
    assert cli.main(["recovery", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                     "--quiet"]) == 0
    assert "table4" not in capsys.readouterr().err
    raw = yaml.safe_load((project / "params" / "params.yaml").read_text())
    raw["recovery"]["tpm"] = "device:/dev/pqlab-no-such-tpm"
    bad = project / "params" / "no-tpm.yaml"
    bad.write_text(yaml.safe_dump(raw))
    assert cli.main(["recovery", "--params", str(bad), "--profile", "smoke", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [TPM_UNAVAILABLE]: tpm:")


def _raw() -> dict:
    return yaml.safe_load((REPO / "params" / "params.yaml").read_text())


def test_the_paper_profile_runs_150_trials_per_cell():
    assert params.resolve(_raw(), "paper").recovery.trials == 150
    assert params.resolve(_raw(), "quick").recovery.window == 64


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda r: r["recovery"].__setitem__("windows", 64), "recovery.windows"),
    (lambda r: r["recovery"].__setitem__("tpm", "mock"), "recovery.tpm"),
    (lambda r: r["recovery"].__setitem__("nv_index", 0x81000000), "recovery.nv_index"),
    (lambda r: r["recovery"]["profiles"]["quick"].__setitem__("trials", 0), "recovery.profiles.quick.trials"),
    (lambda r: r["recovery"].setdefault("sizing", {}).__setitem__("report_rate_hz", 0),
     "recovery.sizing.report_rate_hz"),
])
def test_bad_recovery_params_name_their_field(mutate, fragment):
    raw = copy.deepcopy(_raw())
    mutate(raw)
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "quick")
    assert fragment in str(caught.value)
