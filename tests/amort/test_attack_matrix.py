"""The attack matrix: every Table VI case rejects with its code, every control passes, extras pass too."""

from __future__ import annotations

import pytest

from pqlab.attacks import CASES, ordered, run_matrix

# AMORT-V1 Table VI: case -> (class, rejection code).
TABLE_VI = {
    "A01": ("C", "MAC_FAIL"), "A02": ("C", "MAC_FAIL"), "A03": ("C", "MAC_FAIL"), "A04": ("C", "TRUNCATED"),
    "A05": ("C", "SIG_FAIL"), "A06": ("C", "CHAIN_FAIL"), "A07": ("C", "PROOF_FAIL"), "A08": ("C", "MAC_FAIL"),
    "A09": ("S", "SEQ_DUPLICATE"), "A10": ("S", "SEQ_GAP"), "A11": ("S", "EPOCH_STALE"),
    "A12": ("S", "DEVICE_UNKNOWN"), "A13": ("S", "REVOKED"), "A14": ("S", "SEQ_GAP"), "A15": ("S", "CKPT_FORK"),
    "A16": ("S", "CKPT_DISCONTINUITY"), "A17": ("S", "DISCLOSE_EARLY"), "A18": ("S", "TAGLEN_DOWNGRADE"),
    "A19": ("S", "SEQ_GAP"), "A20": ("S", "PROOF_FAIL"), "A21": ("S", "MAC_FAIL"), "A22": ("C", "CHAIN_FAIL"),
    "A23": ("S", "MAC_FAIL"), "A24": ("D", "TRUNCATED"), "A25": ("D", "TRAILING"), "A26": ("D", "BAD_DOMAIN"),
    "A27": ("D", "BAD_VERSION"),
}


# Issue 27: case -> (kind, code under paper, code under hardened). Gaps: accepted by the paper's design.
DEFECTS_AND_GAPS = {
    "N01": ("defect", "EPOCH_STALE", "EPOCH_STALE"), "N02": ("defect", "SEQ_GAP", "SEQ_GAP"),
    "N03": ("gap", "ACCEPT", "SIG_FAIL"), "N04": ("gap", "ACCEPT", "CKPT_FORK"), "N05": ("gap", "ACCEPT", "MAC_FAIL"),
    "N06": ("defect", "CHAIN_FAIL", "CHAIN_FAIL"), "N07": ("defect", "SIG_FAIL", "SIG_FAIL"),
    "N08": ("defect", "ACCEPT", "ACCEPT"), "N09": ("defect", "EPOCH_STALE", "EPOCH_STALE"),
    "N10": ("defect", "REVOKED", "REVOKED"), "N11": ("defect", "EPOCH_STALE", "EPOCH_STALE"),
    "N12": ("defect", "SIG_FAIL", "SIG_FAIL"), "N13": ("defect", "CHAIN_FAIL", "CHAIN_FAIL"),
    "N14": ("defect", "DEVICE_UNKNOWN", "DEVICE_UNKNOWN"), "N15": ("defect", "ACCEPT", "ACCEPT"),
    "N16": ("defect", "SIG_FAIL", "SIG_FAIL"),
}
# Issue 35: cases written as an outsider writes them (public constructors, their defaults): case -> (kind, code
# under paper, code under hardened). The two gaps are what the paper's design cannot reject.
OUTSIDER = {
    "O01": ("defect", "SIG_FAIL", "SIG_FAIL"), "O02": ("defect", "SIG_FAIL", "SIG_FAIL"),
    "O03": ("defect", "DEVICE_UNKNOWN", "DEVICE_UNKNOWN"), "O04": ("defect", "EPOCH_STALE", "EPOCH_STALE"),
    "O05": ("gap", "ACCEPT", "SIG_FAIL"), "O06": ("defect", "PROFILE_MISMATCH", "SIG_FAIL"),
    "O07": ("defect", "PROFILE_MISMATCH", "PROFILE_MISMATCH"), "O08": ("defect", "PROOF_FAIL", "PROOF_FAIL"),
    "O09": ("defect", "ACCEPT", "ACCEPT"), "O10": ("defect", "ACCEPT", "ACCEPT"),
    "O11": ("gap", "EPOCH_STALE", "ACCEPT"), "O12": ("defect", "TRAILING", "TRAILING"),
    "O13": ("defect", "CKPT_FORK", "CKPT_FORK"),
    "O14": ("defect", "ERR_EVIDENCE_INCOMPLETE", "ERR_EVIDENCE_INCOMPLETE"),
    "O15": ("defect", "PROFILE_MISMATCH", "DEVICE_UNKNOWN"), "O16": ("defect", "PROFILE_MISMATCH", "EPOCH_STALE"),
}
DENIAL = {"N08", "N15", "O09", "O10", "O11"}  # the adversary wants an honest action refused


@pytest.fixture(scope="module")
def matrix(keys, tmp_path_factory):
    return run_matrix(keys, 11, workdir=tmp_path_factory.mktemp("matrix"))


@pytest.fixture(scope="module")
def hardened(keys, tmp_path_factory):
    return run_matrix(keys, 11, workdir=tmp_path_factory.mktemp("hardened"), variant="hardened")


def test_registry_matches_table_vi():
    table6 = {c.id: (c.cls, c.expected) for c in CASES if c.table == "table6" and c.cls != "P"}
    assert table6 == TABLE_VI
    classes = [c.cls for c in CASES if c.id in TABLE_VI]
    assert (classes.count("C"), classes.count("D"), classes.count("S")) == (9, 4, 14)
    assert [c.id for c in ordered() if c.cls == "P" and c.table == "table6"] == ["P1", "P2", "P3", "P4", "P5"]
    assert len([c for c in CASES if c.table == "extra"]) >= 8
    new = {c.id: (c.kind, c.expected, c.expected_for("hardened")) for c in CASES if c.table == "new"}
    assert new == DEFECTS_AND_GAPS
    outsider = {c.id: (c.kind, c.expected, c.expected_for("hardened")) for c in CASES if c.table == "outsider"}
    assert outsider == OUTSIDER
    assert {c.id for c in CASES if c.denial} == DENIAL


def test_all_27_cases_reject_with_the_expected_code(matrix):
    rows = matrix[matrix["case"].isin(TABLE_VI)]
    assert len(rows) == 27
    failed = rows[~rows["pass"]]
    assert failed.empty, failed[["case", "observed code", "detail"]].to_string()
    assert (rows["observed code"] == rows["case"].map(lambda c: TABLE_VI[c][1])).all()


def test_all_five_positive_controls_pass(matrix):
    rows = matrix[matrix["class"] == "P"]
    assert rows["pass"].all(), rows[["case", "observed code", "detail"]].to_string()
    p5 = rows.set_index("case").loc["P5", "detail"]
    assert p5 == "640 records, 10 fsync"


def test_extra_cases_pass(matrix):
    rows = matrix[matrix["table"] == "extra"]
    assert len(rows) >= 8 and rows["pass"].all(), rows[~rows["pass"]][["case", "detail"]].to_string()


def test_p5_fsync_count_follows_the_parameters(keys, tmp_path):
    p5 = [c for c in CASES if c.id == "P5"]
    frame = run_matrix(keys, 3, cases=p5, stream_records=128, stream_k=32, workdir=tmp_path)
    assert frame.loc[0, "detail"] == "128 records, 4 fsync" and frame.loc[0, "pass"]


def test_outcomes_do_not_depend_on_seed_or_on_running_a_subset(keys, matrix, tmp_path):
    subset = [c for c in CASES if c.id in ("A14", "A24", "P2", "X06")]
    again = run_matrix(keys, 12, cases=subset, workdir=tmp_path).set_index("case")
    first = matrix.set_index("case")
    for case_id in again.index:
        assert again.loc[case_id, "observed code"] == first.loc[case_id, "observed code"]


def test_p5_fsyncs_counted_at_the_os_call(keys, tmp_path, monkeypatch):
    """Independent of DurableLog's own counter: wrap os.fsync itself while P5 streams 640 records at k = 64."""
    import os

    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    p5 = [c for c in CASES if c.id == "P5"]
    frame = run_matrix(keys, 5, cases=p5, workdir=tmp_path)
    assert frame.loc[0, "pass"] and len(calls) == 10 == frame.loc[0, "counts"]["fsyncs"]


@pytest.mark.parametrize("cases", [DEFECTS_AND_GAPS, OUTSIDER], ids=["defects_and_gaps", "outsider"])
@pytest.mark.parametrize("variant", ["paper", "hardened"])
def test_issue_27_and_outsider_cases_give_their_code_under_each_variant(matrix, hardened, variant, cases):
    """Issue 35's outsider cases are built with the default public constructors; in both sets only the gaps succeed,
    and only under the paper's design."""
    frame = (matrix if variant == "paper" else hardened).set_index("case")
    column = 1 if variant == "paper" else 2
    for case_id, expected in cases.items():
        row = frame.loc[case_id]
        assert row["observed code"] == expected[column], (case_id, row["detail"])
        assert row["pass"]
        assert row["attack_succeeded"] == (expected[0] == "gap" and variant == "paper"), case_id


def test_every_case_passes_under_the_hardened_variant_too(hardened):
    """The hardening changes no outcome of the paper's cases or of the extra cases: all refused as before."""
    failed = hardened[~hardened["pass"]]
    assert failed.empty, failed[["case", "observed code", "detail"]].to_string()
    assert set(hardened[hardened["attack_succeeded"].fillna(False).astype(bool)]["case"]) == set()


def test_the_explicit_wire_format_gives_the_same_outcomes(keys, matrix, tmp_path):
    """The named wire-format variant: every case, both variants, same observed codes as the default format."""
    for variant in ("paper", "hardened"):
        frame = run_matrix(keys, 11, workdir=tmp_path, variant=variant, wire_format="explicit")
        failed = frame[~frame["pass"]]
        assert failed.empty, failed[["case", "observed code", "detail"]].to_string()
    again = frame.set_index("case")["observed code"]
    assert again.loc["N03"] == "SIG_FAIL" and again.loc["A18"] == "TAGLEN_DOWNGRADE"

