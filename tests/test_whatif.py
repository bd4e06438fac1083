"""`pqlab whatif case|amort`: answers from the real models, one clear line for bad input, JSON, figures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from pqlab import cli, io, params
from pqlab.amort import eq1
from pqlab.amort.sizes import checkpoint_octets
from pqlab.case.configurations import case_message_sizes, table1_config
from pqlab.case.device_compute import device_pq_ms, load_cycles
from pqlab.paths import ProjectPaths
from pqlab.transport import core
from pqlab.transport.model import Scenario, build_plan
from pqlab.whatif import amort, case, deployment

MESSAGES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


@pytest.fixture(scope="module")
def settings(repo_root):
    return params.load(repo_root / "params" / "params.yaml", "smoke")


@pytest.fixture(scope="module")
def context(settings, repo_root):
    return case.CaseContext.load(settings, repo_root / "params")


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- pqlab whatif case ----------------------------------------------------------------------------------------------

def test_a_preset_is_answered_from_the_encoder_pqm4_and_the_c_simulator(context, repo_root):
    answer = case.answer(context, name="D3 here", key_exchange="ML-KEM-768", noc="ML-DSA-44", icac="ML-DSA-44",
                         rcac="ML-DSA-44", hops=3, interference="heavy_wifi", runs=60, transport="block")
    sizes = case_message_sizes(table1_config("D3"))
    assert answer.messages == {m: sizes[m] for m in MESSAGES}
    assert answer.fits == {m: sizes[m] <= 1178 for m in MESSAGES}
    paper = load_cycles(repo_root / "params" / "pqm4_cycles.yaml")  # 64 MHz, the fastest implementations
    assert answer.device.total_ms == pytest.approx(device_pq_ms(table1_config("D3"), paper).milliseconds)
    plan = build_plan(Scenario(tuple(answer.messages.values()), 3, "heavy_wifi", False, "block",
                               (answer.device.before_sigma2_ms, answer.device.after_sigma3_ms)), context.transport)
    raw = core.run(plan, 0, 60)
    completed = raw[raw[:, 0] == 1, 1] / 1e6
    assert answer.best.runs == 60 and answer.best.median_s == pytest.approx(float(np.median(completed)))
    assert answer.best.failure_rate == pytest.approx(float((raw[:, 0] == 0).mean()))
    assert sum(answer.frames_per_hop.values()) > sum(case.answer(context, preset="D3", runs=5).frames_per_hop.values())
    assert case.answer(context, preset="D3", hops=3, interference="heavy_wifi", runs=60, transport="block",
                       name="D3 here").to_dict()["handshake"] == answer.to_dict()["handshake"]  # same seed, same run


def test_the_clock_scales_device_time_and_the_best_transport_is_the_most_reliable_fastest(context):
    slow = case.answer(context, preset="C5", clock_mhz=64.0, runs=20)
    fast = case.answer(context, preset="C5", clock_mhz=128.0, runs=20)
    assert fast.device.total_ms == pytest.approx(slow.device.total_ms / 2)
    best = case.answer(context, preset="D3", hops=2, interference="heavy_wifi", runs=40)
    assert [t.transport for t in best.transports] == ["ipv6", "pull", "block"]
    key = [(t.failure_rate, t.median_s if t.median_s is not None else np.inf) for t in best.transports]
    assert best.chosen == best.transports[int(np.argmin([k[0] * 1e9 + k[1] for k in key]))].transport
    fitting = case.answer(context, preset="B", runs=10)
    assert fitting.chosen == case.DATAGRAM and all(fitting.fits.values())


def test_a_missing_cycle_count_is_said_never_guessed(context):
    answer = case.answer(context, key_exchange="HQC-1", noc="SQIsign-I", icac="none", rcac="SQIsign-I", runs=10)
    assert answer.device.total_ms is None and "SQIsign-I sign" in answer.device.unmeasured
    notes = "\n".join(case.notes([answer]))
    assert "no Cortex-M4 cycle count published" in notes and "HQC-128 of 2023-04-30" in notes
    assert answer.to_dict()["times_are_lower_bounds"] is True
    typed = case.answer(context, noc="SQIsign-I", icac="none", rcac="SQIsign-I", runs=10,
                        cycles={"SQIsign-I": {"sign": 64_000_000, "verify": 6_400_000}})
    assert typed.device.total_ms is not None and "cycles given" in "\n".join(case.notes([typed]))


def test_three_deployments_in_one_call_with_json_out_and_figure(capsys, tmp_path):
    out, figure = tmp_path / "answer.json", tmp_path / "case.png"
    code, stdout, err = _run(capsys, "whatif", "case", "--preset", "D3", "--preset", "C5", "--preset", "S2",
                             "--hops", "2", "--runs", "30", "--json", "--out", str(out), "--figure", str(figure))
    assert code == 0, err
    document = json.loads(stdout)
    assert [d["label"] for d in document["deployments"]] == ["D3", "C5", "S2"]
    assert all(d["deployment"]["mesh"]["hops"] == 2 and d["handshake"]["runs"] == 30 for d in document["deployments"])
    assert json.loads(out.read_text())["deployments"] == document["deployments"]
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, text, _ = _run(capsys, "whatif", "case", "--preset", "D3", "--preset", "C5", "--runs", "10")
    assert code == 0 and "frames per hop" in text and "answered in" in text and "load average" in text


def test_a_deployment_file_with_defaults_and_a_list(capsys, tmp_path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"defaults": {"mesh": {"hops": 3}, "runs": 10},
                                    "deployments": [{"preset": "D3"}, {"name": "hqc", "key_exchange": "HQC-1",
                                                                        "device": {"clock_mhz": 128.0}}]}))
    code, stdout, err = _run(capsys, "whatif", "case", "-d", str(path), "--json")
    assert code == 0, err
    deployments = json.loads(stdout)["deployments"]
    assert [d["label"] for d in deployments] == ["D3", "hqc"]
    assert [d["deployment"]["mesh"]["hops"] for d in deployments] == [3, 3]
    path.write_text(yaml.safe_dump({"deployments": [{"preset": "D3"}, {"mesh": {"hops": 0}}]}))
    code, _, err = _run(capsys, "whatif", "case", "-d", str(path))
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: deployments[1].mesh.hops: Input should be greater than or equal to 1" in err


@pytest.mark.parametrize(("argv", "names"), [
    (("whatif", "case", "--noc", "Dilithium9"), ("--noc", "'Dilithium9' is not a signature algorithm")),
    (("whatif", "case", "--hops", "0"), ("--hops", "mesh.hops", "greater than or equal to 1")),
    (("whatif", "case", "--clock-mhz", "0"), ("--clock-mhz", "device.clock_mhz", "greater than 0")),
    (("whatif", "case", "--kex", "HQC-9"), ("--kex", "'HQC-9' is not a key exchange")),
    (("whatif", "case", "--interference", "microwave"), ("--interference", "'microwave' is not an interference")),
    (("whatif", "case", "--implementation", "m4f"), ("device.implementation", "no 'm4f' implementation of ML-KEM")),
    (("whatif", "amort", "--rate", "-5", "--window-s", "30"), ("--rate", "rate_hz", "greater than 0")),
    (("whatif", "amort", "--rate", "1", "--window-s", "30", "--storage", "/no/such/folder"),
     ("--storage", "no such folder '/no/such/folder'")),
    (("whatif", "amort", "--rate", "1", "--window-s", "30", "--signer", "Dilithium9"), ("--signer", "Dilithium9")),
    (("whatif", "amort", "--rate", "1"), ("exactly one of window_s (--window-s) and budget_us",)),
    (("whatif", "amort", "--rate", "1", "--window-s", "0.0001", "--identities", "1", "--storage", "none",
      "--c-mac", "1", "--c-leaf", "1", "--c-sign", "100"), ("window_s", "shorter than one report")),
])
def test_bad_input_is_one_line_naming_the_field_and_exit_2(capsys, argv, names):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("pqlab: error [") and err.count("\n") == 1, err
    for name in names:
        assert name in err, err


# --- pqlab whatif amort ---------------------------------------------------------------------------------------------

def test_typed_costs_give_eq1s_answer_and_a_real_checkpoint_size(settings, project):
    paths = ProjectPaths(project)
    answer = amort.answer(settings, paths, rate_hz=10.0, identities=1000, window_s=30.0, storage="none",
                          c_mac=0.25, c_leaf=0.3, c_sign=600.0, size_budget_octets=50_000)
    inputs = eq1.CostInputs(0.25, 0.3, 600.0, 0.0)
    expected = eq1.tradeoff(inputs, 10.0 * 1000, window_s=30.0)
    assert (answer.point.k, answer.point.cost_us) == (expected.k, pytest.approx(expected.cost_us))
    assert answer.cost_lo_us == answer.cost_hi_us == pytest.approx(expected.cost_us)  # typed: no interval
    assert answer.spans == 1000 and answer.checkpoint_octets == checkpoint_octets(1000, answer.signature_octets)
    assert not answer.passes_budget  # 1,000 spans of 60 octets do not fit 50 kB
    within = answer.identities_within_budget
    assert checkpoint_octets(within, 3309) <= 50_000 < checkpoint_octets(within + 1, 3309)
    budget = amort.answer(settings, paths, rate_hz=1.0, identities=10, budget_us=1.0, storage="none", c_mac=0.25,
                          c_leaf=0.3, c_sign=600.0)
    assert budget.point.limited_by == "budget" and budget.point.cost_us <= 1.0 and budget.spans == 10


def test_measured_costs_come_from_the_costs_stage_or_a_short_probe_said_so(settings, project, tmp_path, capsys):
    paths = ProjectPaths(project)
    probed = amort.answer(settings, paths, rate_hz=5.0, identities=20, window_s=10.0, storage=str(tmp_path))
    assert "short probe in this run" in probed.terms["c_sign"].source
    assert probed.terms["c_fsync"].source.startswith(f"write_fsync [os], probed in {tmp_path}")
    for term in probed.terms.values():
        assert term.lo_us <= term.value_us <= term.hi_us
    assert probed.cost_lo_us <= probed.point.cost_us <= probed.cost_hi_us
    # the costs stage's statistics, written as that stage writes them, are read (and checked) through pqlab.io
    op_ids = {t.source.split(" ")[0] for name, t in probed.terms.items() if name != "c_fsync"}
    stats = amort.probe(settings, op_ids, "ML-DSA-65", "openssl", tmp_path).assign(median=lambda f: f["median"] * 2)
    stats[["median_lo", "median_hi"]] = stats[["median_lo", "median_hi"]] * 2
    io.write_parquet(paths.derived / amort.COSTS_STATS, stats, {"params": {"profile": "smoke"}})
    staged = amort.answer(settings, paths, rate_hz=5.0, identities=20, window_s=10.0, storage=str(tmp_path),
                          backend="openssl")
    assert "costs stage" in staged.terms["c_sign"].source
    row = stats[stats["op_id"] == "sign_ML-DSA-65"].iloc[0]
    assert staged.terms["c_sign"].value_us == pytest.approx(row["median"])
    corrupt = pd.read_parquet(paths.derived / amort.COSTS_STATS).assign(median=1.0)
    (paths.derived / amort.COSTS_STATS).write_bytes(io.parquet_table(corrupt).to_pandas().to_json().encode())
    capsys.readouterr()
    code, _, err = _run(capsys, "whatif", "amort", "--params", str(project / "params" / "params.yaml"), "--rate", "1",
                        "--window-s", "5", "--storage", str(tmp_path))
    assert code == 2 and "INPUT_CORRUPT" in err and amort.COSTS_STATS in err, err


def test_amort_cli_prints_the_table_and_json(capsys, project, tmp_path):
    argv = ["whatif", "amort", "--params", str(project / "params" / "params.yaml"), "--identities", "1000",
            "--rate", "10", "--window-s", "30", "--storage", "none", "--c-mac", "0.25", "--c-leaf", "0.3",
            "--c-sign", "600"]
    code, text, err = _run(capsys, *argv)
    assert code == 0, err
    assert "checkpoint interval k" in text and "300,000" in text and "typed in" in text
    code, stdout, _ = _run(capsys, *argv, "--json", "--figure", str(tmp_path / "amort.pdf"))
    fleet = json.loads(stdout)["fleets"][0]
    assert fleet["k"] == 300_000 and fleet["window_s"] == pytest.approx(30.0) and fleet["checkpoint"]["spans"] == 1000
    assert (tmp_path / "amort.pdf").read_bytes()[:4] == b"%PDF"


def test_flat_values_and_the_deployment_model_agree():
    flags = deployment.field_values({"mode": "kem-pdk/both", "icac": "none", "hops": 2}, deployment.CASE_FIELDS)
    assert flags == {("auth",): "kem-pdk", ("cached",): "both", ("icac",): None, ("mesh", "hops"): 2}
    assert deployment.parse_cycles(["ML-KEM-768.encaps=700_000"]) == {"ML-KEM-768": {"encaps": 700000}}
    assert deployment.parse_gilbert_elliott("0.02,0.9,0.3,30") == {"p_good": 0.02, "p_bad": 0.9, "fraction_bad": 0.3,
                                                                   "mean_burst_ms": 30.0}
