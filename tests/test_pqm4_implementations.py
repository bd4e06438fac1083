"""params/pqm4_implementations.yaml: every number re-derived from pqm4's benchmarks, no guessed cycle count."""

from __future__ import annotations

import csv

import pytest

from pqlab.case import algorithms, pqm4
from pqlab.case.device_compute import load_cycles
from pqlab.errors import ParamsError

KEM_COLUMNS = {"encaps": "encaps_or_sign_cycles", "decaps": "decaps_or_verify_cycles"}
SIG_COLUMNS = {"sign": "encaps_or_sign_cycles", "verify": "decaps_or_verify_cycles"}


@pytest.fixture(scope="module")
def table(repo_root):
    return pqm4.load_implementations(repo_root / "params" / pqm4.IMPLEMENTATIONS_FILE)


@pytest.fixture(scope="module")
def benchmarks(vectors, table):
    with (vectors / "pqm4_cycles.csv").open(newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["source_commit"] == table.source_commit]


def test_every_number_is_pqm4s_at_its_commit(table, benchmarks):
    checked = 0
    for name, entry in table.algorithms.items():
        rows = {r["implementation"]: r for r in benchmarks if r["scheme"] == entry.pqm4_scheme}
        assert set(entry.implementations) == set(rows), name  # every implementation pqm4 lists, no other
        columns = KEM_COLUMNS if name in algorithms.KEMS else SIG_COLUMNS
        for implementation, cycles in entry.implementations.items():
            assert cycles == {op: int(rows[implementation][column]) for op, column in columns.items()}
            checked += 1
    assert checked >= 30


def test_every_post_quantum_algorithm_of_the_registry_has_an_entry(table):
    post_quantum = set(algorithms.KEMS) | set(algorithms.SIGNATURES) - {"ECDSA-P256"}
    assert set(table.algorithms) == post_quantum


def test_an_algorithm_without_a_pqm4_scheme_says_why_and_pqm4_really_has_none(table, benchmarks):
    schemes = {r["scheme"] for r in benchmarks}
    missing = {name: entry for name, entry in table.algorithms.items() if entry.pqm4_scheme is None}
    assert {"SQIsign-I", "SQIsign-III", "SQIsign-V", "MAYO-5", "CROSS-RSDPG-128-small", "UOV-Is-pkc"} <= set(missing)
    for name, entry in missing.items():
        assert entry.note.startswith(pqm4.NO_NUMBER), name
    assert not any(s.startswith(("sqisign", "mayo5", "ov-Is")) for s in schemes)


def test_the_fastest_implementation_gives_the_papers_cycle_table(repo_root, table):
    paper = load_cycles(repo_root / "params" / "pqm4_cycles.yaml")
    fastest = pqm4.cycle_table(table, clock_mhz=paper.clock_mhz)
    for name, entry in paper.algorithms.items():
        for op in pqm4.OPERATIONS:
            assert getattr(fastest.algorithms[name], op) == getattr(entry, op), (name, op)


def test_portable_named_and_typed_implementations(table):
    portable = pqm4.cycle_table(table, implementation="portable", algorithms=["ML-KEM-768", "HAWK-512"])
    assert portable.algorithms["ML-KEM-768"].encaps == table.algorithms["ML-KEM-768"].implementations["clean"]["encaps"]
    assert portable.algorithms["HAWK-512"].sign == table.algorithms["HAWK-512"].implementations["ref"]["sign"]
    typed = pqm4.cycle_table(table, clock_mhz=100.0, algorithms=["SQIsign-I"],
                             cycles={"SQIsign-I": {"sign": 2_000_000}})
    assert typed.milliseconds("SQIsign-I", "sign") == pytest.approx(20.0)
    assert typed.milliseconds("SQIsign-I", "verify") is None  # still unknown: never guessed
    with pytest.raises(ParamsError, match=r"device\.implementation: pqm4 has no 'm4f' implementation of ML-KEM-768"):
        pqm4.cycle_table(table, implementation="m4f", algorithms=["ML-KEM-768"])


def test_a_bad_table_is_one_error_naming_the_entry(tmp_path, repo_root):
    bad = tmp_path / "implementations.yaml"
    text = (repo_root / "params" / pqm4.IMPLEMENTATIONS_FILE).read_text()
    bad.write_text(text.replace("  SQIsign-I:\n    pqm4_scheme: null\n", "  SQIsign-I:\n    pqm4_scheme: sqisign\n", 1))
    with pytest.raises(ParamsError, match=r"algorithms\.SQIsign-I"):
        pqm4.load_implementations(bad)
