"""The CASE size study end to end: outputs written, metrics feed every REPORT.md row, parameters validated."""

from __future__ import annotations

import pytest
import yaml

from pqlab import params
from pqlab.case import size_tables
from pqlab.case.configurations import CaseConfig, case_message_sizes
from pqlab.errors import ParamsError
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.report import _lookup
from pqlab.studies import case_sizes as sizes_study


@pytest.fixture(scope="module")
def study(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("case")
    (root / "params").mkdir()
    for name in ("params.yaml", "paper_reference.yaml"):
        (root / "params" / name).write_text((repo_root / "params" / name).read_text())
    settings = params.load(root / "params" / "params.yaml", "smoke")
    return root, sizes_study.run(settings, ProjectPaths(root))


@pytest.mark.slow  # runs the whole study
def test_study_writes_every_output(study):
    root, result = study
    for name in ("table1_case_sizes.csv", "table1_case_sizes.md", "table1_case_breakdown.csv",
                 "resumption_sizes.csv", "fig1_case_sizes.pdf", "fig1_case_sizes.png"):
        assert (root / "paper_figs" / "case" / name).stat().st_size > 0, name
    assert len(result.tables['table1_case_sizes']) == 15
    assert result.data['real_material']["identical_sizes"].all() and len(result.data['real_material']) == 2


@pytest.mark.slow  # runs the whole study
def test_every_case_reference_row_has_a_value_here(study, repo_root):
    root, _ = study
    metrics = read_json(root / "data" / "derived" / "case_sizes_metrics.json")
    reference = yaml.safe_load((repo_root / "params" / "paper_reference.yaml").read_text())
    rows = [q for q in reference["quantities"] if q["metric"].startswith("case_sizes_metrics.json:")
            and q["kind"] == "exact" and "expr" not in q]  # claims and derived rows read lists and mappings
    assert len(rows) >= 66
    for q in rows:
        key = q["metric"].partition(":")[2]
        assert isinstance(_lookup(metrics, key), int), q["id"]


@pytest.mark.slow  # runs the whole study
def test_table_sizes_come_from_the_size_function(study):
    _, result = study
    for row in result.tables['table1_case_sizes'].to_dict("records"):
        assert row["Total"] == row["Sigma1"] + row["Sigma2"] + row["Sigma3"] + row["StatusReport"]
    table = result.tables['table1_case_sizes'].set_index("config")
    assert bool(table.loc["B", "fits_limit"]) and table.loc["B", "frames_total"] == 20
    # PQ-CASE §V: "1576 B in 20 frames", "22.8 kB in 244 frames" under the paper's framing model (the default);
    # OpenThread's mesh-local IPHC (25 B) and fragment rounding need 263 for D3.
    assert table.loc["D3", "frames_total"] == 244 and table.loc["D3", "frames_total_openthread"] == 263


def test_unknown_configuration_is_a_params_error_naming_the_field():
    with pytest.raises(ParamsError, match=r"case_sizes\.configurations"):
        size_tables.configurations(("B", "Z9"))


def test_extreme_design_points_still_encode():
    """A UOV ICAC (66.6 kB key) pushes TBEData2 past AES-CCM's 65,535-B limit for 13-byte nonces."""
    sizes = case_message_sizes(CaseConfig(key_exchange="ML-KEM-768", noc="ML-DSA-44", icac="UOV-Is-pkc",
                                          rcac="SLH-DSA-SHA2-128s"))
    assert sizes["Sigma2"] > 66576 + 2420


def test_bad_framing_parameter_names_the_field(repo_root):
    raw = params.load_raw(repo_root / "params" / "params.yaml")
    raw["framing"]["iphc_bytes"] = 1
    with pytest.raises(ParamsError, match=r"framing\.iphc_bytes"):
        params.resolve(raw, "smoke")


def test_cli_runs_the_study_and_reports_bad_parameters(tmp_path, repo_root, capsys):
    from pqlab import cli

    (tmp_path / "params").mkdir()
    raw = params.load_raw(repo_root / "params" / "params.yaml")
    raw["case_sizes"]["configurations"] = ["B", "C1"]
    path = tmp_path / "params" / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert cli.main(["case-sizes", "--params", str(path), "--profile", "smoke"]) == 0
    assert "wrote" in capsys.readouterr().out
    raw["case_sizes"]["configurations"] = ["Q1"]
    path.write_text(yaml.safe_dump(raw))
    assert cli.main(["case-sizes", "--params", str(path), "--profile", "smoke"]) == 2
    assert "case_sizes.configurations" in capsys.readouterr().err
