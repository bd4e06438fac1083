"""Device computation: cycle table re-derived from pqm4 data, and the responder's operation lists."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pqlab.case.configurations import CaseConfig, table1_config
from pqlab.case.device_compute import device_pq_ms, device_pq_ms_by_phase, load_cycles, responder_operations
from pqlab.errors import ParamsError

TABLE_PATH = Path(__file__).resolve().parent.parent / "params" / "pqm4_cycles.yaml"
OPS = {"encaps": "encaps_or_sign_cycles", "sign": "encaps_or_sign_cycles",
       "decaps": "decaps_or_verify_cycles", "verify": "decaps_or_verify_cycles"}


def test_cycle_table_is_the_fastest_pqm4_implementation_at_its_commit(vectors):
    table = load_cycles(TABLE_PATH)
    with open(vectors / "pqm4_cycles.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["source_commit"] == table.source_commit]
    for algorithm, entry in table.algorithms.items():
        matching = [r for r in rows if r["scheme"] == entry.pqm4_scheme]
        if entry.pqm4_scheme is None:
            continue
        assert matching, algorithm
        for operation, column in OPS.items():
            cycles = getattr(entry, operation)
            if cycles is not None:
                assert cycles == min(int(r[column]) for r in matching), (algorithm, operation)


def test_uov_is_pkc_really_has_no_pqm4_number(vectors):
    with open(vectors / "pqm4_cycles.csv", newline="") as handle:
        schemes = {r["scheme"] for r in csv.DictReader(handle)}
    assert not any(s.startswith("ov-Is") for s in schemes)


def test_drop_in_ml_dsa_chain_operations():
    ops = responder_operations(table1_config("D3"))
    assert [(o.algorithm, o.operation) for o in ops] == [
        ("ML-KEM-768", "encaps"), ("ML-DSA-44", "sign"),
        ("ML-DSA-44", "verify"), ("ML-DSA-44", "verify"), ("ML-DSA-44", "verify")]


def test_milliseconds_are_cycles_over_the_clock():
    table = load_cycles(TABLE_PATH)
    cost = device_pq_ms(table1_config("C5"), table)
    a = table.algorithms
    expected = (a["ML-KEM-768"].encaps + a["ML-KEM-768"].decaps + a["ML-DSA-44"].verify) / 64e3
    assert cost.milliseconds == pytest.approx(expected)
    assert cost.unmeasured == ()


def test_classical_operations_cost_nothing_and_unknown_ones_are_flagged():
    table = load_cycles(TABLE_PATH)
    assert device_pq_ms(table1_config("B"), table).milliseconds == 0.0
    uov_root = device_pq_ms(table1_config("S3"), table)
    assert uov_root.unmeasured == ("UOV-Is-pkc verify",)


def test_caching_the_initiator_chain_removes_its_verifications():
    full = responder_operations(table1_config("C2"))
    cached = responder_operations(table1_config("C3"))
    assert len(full) - len(cached) == 2
    assert [o.purpose for o in cached if o.operation == "verify"] == ["Sigma3 signature"]


def test_unknown_algorithm_and_bad_table_are_params_errors(tmp_path):
    table = load_cycles(TABLE_PATH)
    with pytest.raises(ParamsError, match="Dilithium9"):
        table.milliseconds("Dilithium9", "sign")
    bad = tmp_path / "cycles.yaml"
    bad.write_text(TABLE_PATH.read_text().replace("clock_mhz: 64", "clock_mhz: -64"))
    with pytest.raises(ParamsError, match="clock_mhz"):
        load_cycles(bad)


def test_composite_algorithms_cost_the_sum_of_their_parts():
    table = load_cycles(TABLE_PATH)
    assert table.milliseconds("ECDSA-P256+ML-DSA-44", "sign") == table.milliseconds("ML-DSA-44", "sign")
    assert table.milliseconds("ML-DSA-44+Falcon-512", "verify") == pytest.approx(
        table.milliseconds("ML-DSA-44", "verify") + table.milliseconds("Falcon-512", "verify"))
    assert table.milliseconds("ECDSA-P256+UOV-Is-pkc", "verify") is None


def test_hybrid_key_exchange_costs_only_its_kem_and_static_kem_is_configurable():
    table = load_cycles(TABLE_PATH)
    hybrid = CaseConfig(key_exchange="P-256+ML-KEM-512", noc="ML-DSA-44", icac=None, rcac="ML-DSA-44",
                        auth="kem-pdk", cached="both", auth_kem="ML-KEM-768")
    ops = [(o.algorithm, o.operation) for o in responder_operations(hybrid)]
    assert ops == [("ML-KEM-512", "encaps"), ("ML-KEM-768", "decaps"), ("ML-DSA-44", "verify")]
    assert device_pq_ms(hybrid, table).milliseconds == pytest.approx(
        (390881 + 707827 + 1421623) / 64e3)


def test_phases_add_up_to_the_total():
    table = load_cycles(TABLE_PATH)
    for name in ("D3", "S4", "C5"):
        config = table1_config(name)
        phases = device_pq_ms_by_phase(config, table)
        assert sum(phases.values()) == pytest.approx(device_pq_ms(config, table).milliseconds)
    s4 = device_pq_ms_by_phase(table1_config("S4"), table)
    assert s4["before Sigma2"] == pytest.approx(table.milliseconds("ML-KEM-768", "encaps"))
