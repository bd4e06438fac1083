"""The transport cross-check (issue 37): the ns-3 scenario program reads pqlab's own plan, builds and runs here, its
loss model and runs are deterministic and behave as specified, and the stage's outputs say what they must.

Tests that run ns-3 skip, saying why, where Debian's libns3-dev is missing; .ci/run (as root) sets
PQLAB_REQUIRE_NS3=1 so they fail there instead (tests/ns3_support.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pqlab.crosscheck import analysis, ns3_program, scenario_file, scenarios
from pqlab.errors import ParamsError
from pqlab.params import load, resolve
from pqlab.transport.case_inputs import table1_inputs
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import fitting_configs
from pqlab.transport.model import Scenario, build_plan
from pqlab.transport.sweep_config import CrosscheckParams
from tests.conftest import REPO
from tests.ns3_support import require_ns3

PARAMS = REPO / "params" / "params.yaml"
CYCLES = REPO / "params" / "pqm4_cycles.yaml"


def _parse(text: str) -> dict[str, list[float]]:
    return {line.split()[0]: [float(v) for v in line.split()[1:]] for line in text.splitlines()}


@pytest.fixture(scope="module")
def d3() -> tuple[tuple[int, ...], tuple[float, float]]:
    configs, compute = table1_inputs(["D3"], CYCLES)
    return configs["D3"], compute["D3"]


def _render(scenario: Scenario, thread: TransportParams, mode=scenario_file.HANDSHAKE, runs=2, first=0,
            topology="chain"):
    return scenario_file.render(scenario_file.Ns3Run(scenario, mode, topology, first, runs), thread, seed=7,
                                start_ms=100.0, spacing_m=10.0)


def test_the_scenario_file_holds_pqlabs_plan_and_params_never_a_second_copy(d3):
    sizes, compute = d3
    thread = TransportParams()
    scenario = Scenario(sizes, 3, "light_wifi", False, "block", compute)
    plan = build_plan(scenario, thread)
    values = _parse(_render(scenario, thread))
    for hs in range(4):
        units = range(plan.first_unit[hs], plan.first_unit[hs] + plan.n_units[hs])
        assert values[f"msg_units_{hs}"] == [plan.payloads[u] for u in units]
        assert values[f"msg_bytes_{hs}"] == [sizes[hs] + thread.framing.matter_header_bytes]
    assert values["msg_mode"] == plan.mode
    assert values["max_retries"] == [15] and values["min_be"] == [3] and values["unit_symbols"] == [20]
    assert values["fraction_bad"] == [0.1] and values["burst_us"] == [10_000.0] and values["good_us"] == [90_000.0]
    assert values["dev_compute2_us"] == [round(compute[0] * 1000)]
    # a changed transport: param reaches the file, with no other edit
    changed = _parse(_render(scenario, thread.model_copy(update={"mac_max_frame_retries": 7,
                                                                 "mrp_controller_interval_ms": 450})))
    assert changed["max_retries"] == [7] and changed["ctrl_interval_us"] == [450_000]


def test_the_piggyback_estimate_is_pqlabs_own_loss_free_time(d3):
    sizes, compute = d3
    thread = TransportParams()
    scenario = Scenario(sizes, 2, "none", False, "ipv6", compute)
    plan = build_plan(scenario, thread)
    values = _parse(_render(scenario, thread))
    from pqlab.transport.reference import DOWN, Handshake

    units = list(range(plan.first_unit[0], plan.first_unit[0] + plan.n_units[0]))
    whole = Handshake(plan, 0).loss_free_arrival(1_000, units, DOWN) - 1_000
    assert math.isclose(sum(values["msg_unit_lf_us_0"]), whole)


def test_a_sleepy_device_or_an_odd_symbol_time_is_refused_not_approximated(d3):
    sizes, compute = d3
    with pytest.raises(ValueError, match="indirect"):
        _render(Scenario(sizes, 1, "none", True, "ipv6", compute), TransportParams())
    with pytest.raises(ValueError, match="16-us symbols"):
        _render(Scenario(sizes, 1, "none", False, "ipv6", compute), TransportParams(backoff_unit_us=330))


def test_the_section_names_only_known_loss_scenarios_and_roles():
    import yaml

    raw = yaml.safe_load(PARAMS.read_text())
    raw["transport_crosscheck"]["losses"] = ["none", "storm"]
    with pytest.raises(ParamsError, match=r"transport_crosscheck\.losses\.1"):
        resolve(raw)
    with pytest.raises(ValueError, match="shared_losses"):
        CrosscheckParams(losses=("none",), shared_losses=("iid_15",))


def test_the_cases_cover_every_role_hop_loss_and_transport():
    settings = load(PARAMS, "quick")
    cross, thread = settings.transport_crosscheck, settings.transport
    names = [thread.figure_configs[r] for r in cross.roles]
    configs, compute = table1_inputs(names, CYCLES)
    cases = scenarios.cases(cross, thread, configs, compute)
    hand = [c for c in cases if c.kind == "handshake"]
    fitting = fitting_configs(configs, thread)
    assert fitting == {"B"}  # C5 and D3 each have a message above Matter's 1178 B: every transport
    expected = {(n, t) for n in names for t in (["datagram"] if n in fitting else cross.transports)}
    assert {(c.config, c.transport) for c in hand} == expected
    assert len(hand) == len(expected) * len(cross.hops) * len(cross.losses)
    assert all(c.topologies == ("chain", "shared") if c.loss == "none" else c.topologies == ("chain",) for c in hand)
    transfers = [c for c in cases if c.kind == "transfer"]
    assert {c.loss for c in transfers} == {"none"}
    assert {(c.config, c.message, c.transport) for c in transfers} >= {("D3", "Sigma2", "ipv6"),
                                                                       ("D3", "Sigma2", "block"),
                                                                       ("B", "StatusReport", "datagram")}


def test_pqlabs_transfer_time_is_its_simulated_delivery_not_an_estimate():
    thread = TransportParams()
    case = scenarios.Case("transfer", "X", "r", 2, "none", "datagram", "Sigma1",
                          Scenario((500, 8, 8, 8), 2, "none", False, "ipv6"), ("chain",))
    frame = scenarios.run_pqlab(case, thread, 30)
    plan = build_plan(case.scenario, scenarios.transfer_model(thread))
    frames = len(plan.units[plan.first_unit[0]]) * 2
    assert (frame["ok"] == 1).all() and (frame["frames"] == frames).all()
    # every frame costs at least its airtime, CCA, turnarounds and the ACK; random backoffs make the times differ
    t = thread
    per_frame = t.cca_us + 2 * t.turnaround_us + (2 * t.phy_header_bytes + t.ack_psdu_bytes) * t.byte_time_us
    floor = sum(per_frame + psdu * t.byte_time_us for psdu in plan.units[plan.first_unit[0]]) * 2
    assert (frame["time_us"] >= floor).all() and frame["time_us"].nunique() > 1


def test_ratio_interval_contains_the_ratio_and_narrows_with_more_runs():
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.1, 0.1, 400), rng.normal(1.0, 0.1, 400)
    point, lo, hi = analysis.ratio_ci(a, b, 2000, 0.95, 3)
    assert lo < point < hi and lo < 1.1 < hi * 1.02
    _, lo_small, hi_small = analysis.ratio_ci(a[:40], b[:40], 2000, 0.95, 3)
    assert hi_small - lo_small > hi - lo
    assert all(math.isnan(x) for x in analysis.ratio_ci(a[:1], b, 100, 0.95, 3))


def test_missing_tools_are_named_with_the_apt_line(monkeypatch, tmp_path):
    monkeypatch.setattr(ns3_program.shutil, "which", lambda name: None)
    with pytest.raises(ns3_program.Ns3Error, match="apt-get install -y libns3-dev"):
        ns3_program.version()
    monkeypatch.setenv(ns3_program.PROGRAM_ENV, str(tmp_path / "absent"))
    ok, why = ns3_program.status()
    assert not ok and ns3_program.PROGRAM_ENV in why


# --- the ns-3 program itself ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def program():
    require_ns3()
    return ns3_program.locate()


def test_ns3_reports_the_phy_and_mac_times_pqlab_uses(program, d3):
    sizes, compute = d3
    out = ns3_program.run_file(program, _render(Scenario(sizes, 1, "none", False, "ipv6", compute), TransportParams(),
                                                runs=1))
    thread = TransportParams()
    used = {k: float(v) for k, v in out.used.items() if k not in ("fields", "psdu_sizes_first_run")}
    assert used["byte_us"] == thread.byte_time_us and used["turnaround_us"] == thread.turnaround_us
    assert used["cca_us"] == thread.cca_us and used["unit_backoff_us"] == thread.backoff_unit_us
    assert used["ack_wait_us"] == thread.ack_wait_us and used["lifs_us"] == 640.0
    assert out.runs["ok"].tolist() == [1]


def test_a_run_depends_on_its_index_alone_not_on_the_runs_before_it(program, d3):
    sizes, compute = d3
    scenario = Scenario(sizes, 2, "light_wifi", False, "pull", compute)
    together = ns3_program.run_file(program, _render(scenario, TransportParams(), runs=3)).runs
    alone = ns3_program.run_file(program, _render(scenario, TransportParams(), runs=1, first=2)).runs
    pd.testing.assert_frame_equal(together.iloc[[2]].reset_index(drop=True), alone)
    assert together["time_us"].nunique() > 1


def test_the_loss_model_loses_every_frame_or_none_as_configured(program):
    thread = TransportParams(scenarios={"none": {"p_good": 0.0}, "all": {"p_good": 1.0}},
                          figure_scenarios={"quiet": "none", "interference": "all"})
    scenario = Scenario((100, 100, 100, 8), 1, "none", False, "ipv6")
    clean = ns3_program.run_file(program, _render(scenario, thread, runs=2)).runs
    assert (clean["ok"] == 1).all() and (clean["loss_model_drops"] == 0).all() and (clean["noack_drops"] == 0).all()
    lossy = ns3_program.run_file(program, _render(Scenario((30, 100, 100, 8), 1, "all", False, "ipv6"), thread,
                                                  runs=1)).runs
    assert lossy["ok"].tolist() == [0] and lossy["failed_message"].tolist() == [0]
    assert lossy["retransmissions"].tolist() == [thread.mrp_transmissions - 1]
    # every transmission of Sigma1 (one frame) exhausted its MAC retries: 16 attempts each
    assert lossy["frames"].tolist() == [thread.mrp_transmissions * (thread.mac_max_frame_retries + 1)]


def test_iid_loss_loses_its_share_of_frames(program):
    thread = TransportParams(scenarios={"none": {"p_good": 0.0}, "iid": {"p_good": 0.2}},
                          figure_scenarios={"quiet": "none", "interference": "iid"})
    out = ns3_program.run_file(program, _render(Scenario((1000, 1000, 1000, 8), 1, "iid", False, "ipv6"), thread,
                                                runs=20)).runs
    # data frames and imm-ACKs are both received through the loss model: 20 % of receptions at the destination
    share = out["loss_model_drops"].sum() / (out["frames"].sum() + out["ack_frames"].sum())
    assert 0.15 < share < 0.25


def test_the_stage_compares_both_simulators_per_scenario(smoke):
    require_ns3()
    run = smoke.run("transport_crosscheck").ok()
    metrics = run.metrics
    scenarios_table = run.table("crosscheck_scenarios")
    settings = load(PARAMS, "smoke")
    cross = settings.transport_crosscheck
    hand = scenarios_table[scenarios_table["kind"] == "handshake"]
    assert len(hand[hand["topology"] == "chain"]) == 7 * len(cross.hops) * len(cross.losses)  # B; C5, D3 x 3
    assert ((hand["pqlab_runs"] == cross.runs) & (hand["ns3_runs"] == cross.runs)).all()
    rated = hand.dropna(subset=["ratio"])
    assert ((rated["ratio_lo"] <= rated["ratio"]) & (rated["ratio"] <= rated["ratio_hi"])).all()
    assert np.allclose(rated["ratio"], rated["pqlab_median_s"] / rated["ns3_median_s"])
    transfers = run.table("crosscheck_transfers")
    assert set(transfers["kind"]) == {"transfer"} and (transfers["pqlab_failure_rate"] == 0).all()
    claims = metrics["claims"]
    assert claims["transfers"] == len(transfers[transfers["topology"] == "chain"])
    assert metrics["ns3_version"].startswith("3.")
    written = {p.name for p in run.written}
    assert {"transport_crosscheck_runs.parquet", "transport_crosscheck_ns3_used.parquet"} <= written


def test_the_report_judges_the_crosscheck_rows_on_the_runs_data_apart_from_the_papers(smoke):
    from pqlab.report.crosscheck import crosscheck_section, judge
    from pqlab.report.metrics import MetricsTree
    from pqlab.report.schema import load_reference

    require_ns3()
    run = smoke.run("transport_crosscheck").ok()
    reference = load_reference(REPO / "params" / "paper_reference.yaml")
    stages = {stage.metrics: name for name, stage in reference.stages.items()}
    tree = MetricsTree(run.root / "data" / "derived", stages)
    claims = run.metrics["claims"]
    rows = {x.id: x for x in reference.crosschecks}
    assert {"crosscheck.lossfree_transfers", "crosscheck.multi_datagram_handshakes"} <= set(rows)
    verdict, values, _ = judge(rows["crosscheck.lossfree_transfers"], reference, tree, lambda stage: True)
    assert values["within"] == claims["transfers_within"] and values["n"] == claims["transfers"]
    assert verdict == ("holds" if claims["transfers_within"] == claims["transfers"] else "does not hold")
    text = "\n".join(crosscheck_section(reference, tree, lambda stage: True))
    assert "kind: crosscheck" in text and text.count("| crosscheck.") == len(reference.crosschecks)
    # the papers' rows never read these metrics: the cross-check is judged apart
    assert not [q.id for q in reference.quantities if "transport_crosscheck_metrics.json" in q.metric]
    # without the stage's metrics every row says why it is not judged
    absent = MetricsTree(run.root / "nothing-here", stages)
    assert all(judge(x, reference, absent, lambda stage: True)[0] == "not run here" for x in reference.crosschecks)
