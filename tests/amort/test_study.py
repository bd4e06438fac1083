"""The attack-matrix study writes Table VI, the extra-case table, a figure and metrics from one real run."""

from __future__ import annotations

import pandas as pd
import pytest

from pqlab import params
from pqlab.attacks.summary import TABLE_COLUMNS
from pqlab.errors import ParamsError


@pytest.mark.slow
def test_smoke_run_writes_tables_figure_and_metrics(smoke):
    """`pqlab attacks` on the smoke profile (the session's run, tests/smoke.py)."""
    run = smoke.run("attack_matrix").ok()
    assert "table6_attack_matrix.csv" in run.stdout and "A27" in run.stdout
    figs = run.root / "paper_figs" / "amort"
    table = pd.read_csv(figs / "table6_attack_matrix.csv")
    assert list(table.columns) == TABLE_COLUMNS
    assert list(table["case"]) == [f"A{i:02d}" for i in range(1, 28)] + [f"P{i}" for i in range(1, 6)]
    assert table["pass"].all()
    extra = pd.read_csv(figs / "attack_matrix_extra.csv")
    assert len(extra) >= 8 and extra["pass"].all()
    assert (figs / "table6_attack_matrix.md").read_text().startswith("| case")
    assert (figs / "attack_matrix_overview.png").read_bytes().startswith(b"\x89PNG")
    metrics = run.metrics
    assert metrics["table6"]["cases_passed"] == 27 and metrics["table6"]["controls_passed"] == 5
    assert metrics["table6"]["by_class_passed"] == {"C": 9, "D": 4, "S": 14}
    assert metrics["p5"]["fsync_count"] == 10 and metrics["p5"]["records"] == 640
    # the metrics and the table are one run's: every case and control the table passes is counted
    assert metrics["table6"]["cases_passed"] + metrics["table6"]["controls_passed"] == int(table["pass"].sum())
    # both variants, one table and one figure: attack × variant -> observed code
    variants = pd.read_csv(figs / "attack_matrix_variants.csv")
    assert len(variants) == len(table) + len(extra) + 16 + 16 and variants["pass"].all()
    gaps = variants[variants["kind"] == "gap"].set_index("case")
    assert list(gaps.index) == ["N03", "N04", "N05", "O05", "O11"]
    assert list(gaps["paper"]) == ["ACCEPT", "ACCEPT", "ACCEPT", "ACCEPT", "EPOCH_STALE"]  # O11: a denial
    assert list(gaps["hardened"]) == ["SIG_FAIL", "CKPT_FORK", "MAC_FAIL", "SIG_FAIL", "ACCEPT"]
    assert (figs / "attack_matrix_variants.png").stat().st_size > 0
    assert metrics["variants"]["paper"]["attacks_succeeded"] == ["N03", "N04", "N05", "O05", "O11"]
    assert metrics["variants"]["hardened"]["attacks_succeeded"] == []
    assert metrics["issue27"]["defects"] == {"total": 13, "stopped_by_paper": 13, "stopped_by_hardened": 13}
    assert metrics["issue27"]["gaps"] == {"total": 3, "succeed_under_paper": 3, "stopped_by_hardened": 3}
    assert metrics["outsider"]["defects"] == {"total": 14, "stopped_by_paper": 14, "stopped_by_hardened": 14}
    assert metrics["outsider"]["gaps"] == {"total": 2, "succeed_under_paper": 2, "stopped_by_hardened": 2}
    # what hardening costs, both variants from one run, with the load average
    cost = pd.read_csv(figs / "hardening_cost.csv").set_index("metric")
    assert cost.loc["report_octets", "ratio"] == cost.loc["checkpoint_octets", "ratio"] == 1.0
    # the anchor signature with its 2-octet length in EPOCH_CONFIRM and in EPOCH_OPEN (2 x 3,311), and the signed
    # EPOCH_REQ's signature-algorithm octet, length and ML-DSA-65 signature (1 + 2 + 3,309)
    assert cost.loc["epoch_exchange_octets", "hardened"] - cost.loc["epoch_exchange_octets", "paper"] == \
        2 * 3311 + 3312
    assert cost.loc["device_state_octets_per_checkpoint", "hardened"] == 40
    assert (cost[cost["unit"] == "µs"]["hardened"] > 0).all()
    hardened_only = cost.index.str.startswith("device_receipts")  # the paper's device signs no receipts
    assert (cost[(cost["unit"] == "µs") & ~hardened_only]["paper"] > 0).all()
    assert (cost[hardened_only]["paper"] == 0).all() and cost.loc["receipts_octets", "paper"] == 0
    assert metrics["hardening_cost"]["controller_ingest_us_per_report"]["ratio"] > 0
    assert len(metrics["load_average"]["before"]) == len(metrics["load_average"]["after"]) == 3


@pytest.mark.parametrize(("section", "value"), [("stream_k", 0), ("repeats", 0), ("checkpoint_signer", "RSA")])
def test_bad_attack_matrix_params_name_the_field(project, section, value):
    raw = params.load_raw(project / "params" / "params.yaml")
    if section == "repeats":
        raw["attack_matrix"]["profiles"]["smoke"]["repeats"] = value
    else:
        raw["attack_matrix"][section] = value
    with pytest.raises(ParamsError) as info:
        params.resolve(raw, "smoke")
    where = "attack_matrix.profiles.smoke.repeats" if section == "repeats" else f"attack_matrix.{section}"
    assert where in str(info.value)


def test_cli_reports_bad_params_in_one_line(project, capsys):
    import yaml

    from pqlab import cli

    params_file = project / "params" / "params.yaml"
    raw = yaml.safe_load(params_file.read_text())
    raw["attack_matrix"]["stream_k"] = 0
    params_file.write_text(yaml.safe_dump(raw))
    assert cli.main(["attacks", "--params", str(params_file)]) == 2
    stderr = capsys.readouterr().err
    assert "attack_matrix.stream_k" in stderr and len(stderr.strip().splitlines()) == 1
    assert not (project / "paper_figs").exists()
