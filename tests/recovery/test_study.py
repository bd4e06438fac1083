"""The recovery stage end to end on the smoke profile (real swtpm, real prover processes), its params and CLI."""

from __future__ import annotations

import copy
import shutil

import pytest
import yaml

from pqlab import cli, params
from pqlab.errors import ParamsError
from pqlab.report import collect, load_reference
from tests.conftest import REPO
from tests.recovery.conftest import require_tpm


@pytest.fixture(scope="module")
def run(smoke):
    """The session's `pqlab recovery` smoke run (tests/smoke.py): the study is run once for every test that reads it."""
    return smoke.run("recovery").ok()


@pytest.mark.slow  # runs the whole study
def test_every_output_is_written_and_holds_what_the_trials_say(run):
    """Each output checked for its content, against the raw trials counted here (not by the study's code)."""
    tables = ("table4_recovery", "recovery_crash_injection", "recovery_restart")
    assert {f"paper_figs/amort/{name}.{ext}" for name in tables for ext in ("csv", "md")} \
        | {"paper_figs/amort/fig_recovery.pdf", "paper_figs/amort/fig_recovery.png",
           "data/derived/recovery_metrics.json"} \
        | {f"data/raw/recovery_{name}.parquet" for name in ("trials", "restart", "crashes", "reservations")} \
        <= run.files
    trials = run.parquet("data/raw/recovery_trials.parquet")  # read through pqlab.io: its digest checked
    assert len(trials) == 6 and trials["killed_by_sigkill"].all()
    table4, metrics = run.table("table4_recovery").set_index(["scenario", "arm"]), run.metrics
    cells = trials.groupby(["scenario", "arm"])
    assert set(table4.index) == set(cells.groups)
    for (scenario, arm), mine in cells:
        n, row, cell = len(mine), table4.loc[(scenario, arm)], metrics["table4"][scenario][arm]
        assert row["trials"] == cell["trials"] == n
        assert row["new epoch"] == f"{int(mine['new_epoch'].sum())}/{n}"
        assert cell["new_epoch"] == mine["new_epoch"].sum()
        assert row["stale detected"] == f"{int(mine['stale_detected'].sum())}/{n}"
        assert row["seq. reuse"] == cell["reissued"] == mine["reissued"].sum()
        assert row["killed by SIGKILL"] == f"{n}/{n}"
    markdown = (run.root / "paper_figs" / "amort" / "table4_recovery.md").read_text()
    body = [[cell.strip() for cell in line.strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("|")][2:]  # below the header and its rule
    assert [tuple(row[:2]) for row in body] == list(table4.index)
    assert [row[table4.columns.get_loc("new epoch") + 2] for row in body] == list(table4["new epoch"])
    crashes = run.parquet("data/raw/recovery_crashes.parquet")
    crash_table = run.table("recovery_crash_injection").set_index("case")
    assert crash_table["trials"].to_dict() == crashes.groupby("case").size().to_dict()
    assert metrics["crash"]["all_fail_secure_or_resume"] == bool(crashes["fails_secure_or_resumes"].all())
    restart = run.parquet("data/raw/recovery_restart.parquet")
    assert run.table("recovery_restart")["count"].sum() == len(restart)
    assert metrics["restart"]["interrupted_epochs"] == int(restart["interrupted"].sum())
    figures = run.root / "paper_figs" / "amort"
    png, pdf = (figures / "fig_recovery.png").read_bytes(), (figures / "fig_recovery.pdf").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and int.from_bytes(png[16:20], "big") > 0  # a width, from IHDR
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert "table4" not in run.stderr


@pytest.mark.slow  # runs the whole study
def test_table4_counts_come_from_the_trials(run):
    table = run.table("table4_recovery").set_index(["scenario", "arm"])
    n = params.load(REPO / "params" / "params.yaml", "smoke").recovery.trials
    assert table.loc[("rollback", "naive"), "seq. reuse"] > 0
    assert table.loc[("rollback", "tpm"), "seq. reuse"] == 0
    assert table.loc[("rollback", "tpm"), "stale detected"] == f"{n}/{n}"
    assert table.loc[("restart", "tpm"), "new epoch"] == f"0/{n}"
    assert (table["killed by SIGKILL"] == f"{n}/{n}").all()


@pytest.mark.slow  # runs the whole study
def test_metrics_cover_every_report_row_and_name_the_software_tpm(run):
    m = run.metrics
    assert m["window"] == 64
    assert m["tpm"]["software"] and "software TPM" in m["tpm"]["note"] and m["tpm"]["tpm2-pytss"]
    assert m["crash"]["all_fail_secure_or_resume"] and m["restart"]["bounded_by_k"]
    assert m["sizing"]["min_window"] == 631
    assert len(m["raw_samples"]["load_average"]["before"]) == len(m["raw_samples"]["load_average"]["after"]) == 3
    reference = load_reference(REPO / "params" / "paper_reference.yaml")
    rows = collect(reference, run.root / "data" / "derived")
    mine = rows[[q.metric.startswith("recovery_metrics.json:") for q in reference.quantities]]
    assert len(mine) >= 20 and mine["here"].notna().all()


def test_a_missing_tpm_is_one_line(tmp_path, capsys):
    """The stage's command run without a TPM (its run with one is the session's smoke run, above)."""
    require_tpm()  # as the smoke run: where swtpm or tpm2-pytss is missing, the message names that instead
    shutil.copytree(REPO / "params", tmp_path / "params")
    raw = yaml.safe_load((tmp_path / "params" / "params.yaml").read_text())
    raw["recovery"]["tpm"] = "device:/dev/pqlab-no-such-tpm"
    bad = tmp_path / "params" / "no-tpm.yaml"
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
