"""Issue 39: the count a referee would sign. Settings apart, portability per row, nothing passes on nothing (a row
over zero trials, an empty input, fewer cells, a fraction by its binomial interval for the n it has), a share near
100 % judged as its complement, estimates too wide to tell read inconclusive, a study's failed sanity check reads
"measurement failed", and every predicate of the repo's reference tested on the paper's own values and ±25 % off."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
import yaml

from pqlab import report
from pqlab.errors import ParamsError
from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, Sanity
from pqlab.report.consistency import consistency_table
from pqlab.report.expressions import evaluate
from tests.test_report import CT, METRICS, REFERENCE, ST, _always, _changed, _rows, models

# --- a stage with trials, a share and its complement, settings, a fraction, a sanity block ------------------------


class Cyc(IntervalMetrics):
    trials: int
    cycles: int
    misses: int
    exposed_pct: float
    one_tag: float
    two_tags: float
    share_write_pct: float
    share_sign_pct: float
    delays: dict[str, float]
    configurations: int
    wide: float
    wide_lo: float
    wide_hi: float
    sanity: Sanity


class Reuse(MetricsNode):
    reissued: int
    trials: int


MODELS = {"cycle": Cyc}

CY = "c.json:"
EXTRA_STAGE = {"cycle": {"metrics": "c.json", "kind": "measurement", "samples": {"trials": "trials"}}}
EXTRA_ROWS = [
    {"id": "y.trials", "paper": "amort", "where": "§V-D", "row": "trials", "column": "count", "kind": "setting",
     "value": 200, "unit": "trials", "metric": CY + "trials"},
    {"id": "y.reuse", "paper": "amort", "where": "Table IV", "row": "reuse", "column": "count", "kind": "exact",
     "value": 0, "unit": "numbers", "metric": CY + "misses", "n": CY + "trials"},
    {"id": "y.growth", "paper": "amort", "where": "§V-F", "row": "delay within k", "column": "statement",
     "kind": "claim", "value": "≤ k", "unit": "records", "metric": CY + "trials",
     "data": {"delay": CY + "delays"}, "predicate": "all(v <= 64 for v in values(delay))",
     "cells": {"metric": CY + "configurations", "paper": 7}, "paper_data": {"delay": {"k64": 64}}},
    {"id": "y.exposed", "paper": "amort", "where": "§V-D", "row": "exposed", "column": "share", "kind": "exact",
     "value": "150/150", "unit": "fraction", "metric": CY + "exposed_pct", "scale": 0.01, "n": CY + "trials"},
    {"id": "y.write", "paper": "amort", "where": "§V-D", "row": "write's share", "column": "share",
     "kind": "hardware", "value": "11.9", "unit": "%", "metric": CY + "share_write_pct", "normalised": True,
     "resource": "storage:C", "over": "cpu+storage:C"},
    {"id": "y.sign", "paper": "amort", "where": "§V-D", "row": "signature's share", "column": "share",
     "kind": "hardware", "value": "88.1", "unit": "%", "metric": CY + "share_sign_pct", "normalised": True,
     "resource": "cpu:C", "over": "cpu:C", "complement": "y.write"},
    {"id": "y.tag2", "paper": "amort", "where": "§V-G", "row": "two tags", "column": "Median", "kind": "hardware",
     "value": "10.981", "unit": "µs", "metric": CY + "two_tags", "reference": "one_tag", "resource": "cpu:P"},
    {"id": "y.wide", "paper": "case", "where": "§VI", "row": "scenarios", "column": "count", "kind": "estimate",
     "value": 9, "unit": "scenarios", "metric": CY + "wide", "ci": [CY + "wide_lo", CY + "wide_hi"]},
]
ONE_TAG = {"name": "one-tag scan", "where": "§V-G", "paper": 5.444, "metrics": [CY + "one_tag"], "resource": "cpu:P"}
CYCLE = {"profile": "quick", "confidence": 0.95, "trials": 150, "cycles": 14000, "misses": 0, "exposed_pct": 100.0,
         "one_tag": 18.4, "two_tags": 36.0, "share_write_pct": 1.4, "share_sign_pct": 98.6, "delays": {"k64": 63.0},
         "configurations": 7, "wide": 12.0, "wide_lo": 8.5, "wide_hi": 10.5, "sanity": {"checks": 3, "failed": []}}


def _models(stage):
    return MODELS.get(stage) or models(stage)


def _project(tmp_path: Path, change=None, change_reference=None):
    def metrics(m):
        m["c.json"] = copy.deepcopy(CYCLE)
        if change:
            change(m["c.json"])

    def reference(r):
        r["stages"].update(copy.deepcopy(EXTRA_STAGE))
        r["references"]["one_tag"] = dict(ONE_TAG)
        r["quantities"] += copy.deepcopy(EXTRA_ROWS)
        if change_reference:
            change_reference(r)

    return _changed(tmp_path, metrics, reference)


def _table(paths):
    reference = report.load_reference(paths.paper_reference, models=_models)
    tree = report.MetricsTree(paths.derived, {s.metrics: n for n, s in reference.stages.items()}, models=_models)
    return report.collect(reference, tree, pipeline=_always).set_index("id"), reference, tree


def test_a_setting_is_shown_and_checked_never_counted(tmp_path):
    rows, reference, tree = _table(_project(tmp_path, lambda c: c.update(trials=25)))
    row = rows.loc["y.trials"]
    assert row["verdict"] == "setting" and row["setting_matches"] is False
    assert "the quick profile sets it (a profile note, not a finding" in row["why"]
    text = report.render(reference, rows.reset_index(), tree)
    glance = text.split("## Claims that do not reproduce here")[0]
    assert "1 setting rows apart (0 configured as the paper's, 1 set otherwise by the profile)" in glance
    assert "| setting |" not in glance  # not a kind of the headline table
    assert rows.loc["y.trials", "verdict"] not in set(rows.loc[rows["kind"] != "setting", "verdict"]) - {"x"}


def test_a_row_over_zero_trials_differs(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.reuse", "verdict"] == "reproduced"
    empty, *_ = _table(_project(tmp_path, lambda c: c.update(trials=0)))
    for rid in ("y.reuse", "y.exposed"):
        assert empty.loc[rid, "verdict"] == "differs", rid
    assert "over zero trials" in empty.loc["y.reuse", "why"] and empty.loc["y.reuse", "n"] == 0


def test_a_claim_over_an_empty_input_or_fewer_cells_differs(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.growth", "verdict"] == "reproduced"
    empty, *_ = _table(_project(tmp_path, lambda c: c.update(delays={}, configurations=0)))
    assert empty.loc["y.growth", "verdict"] == "differs"
    assert "over 0 of the paper's 7 cells" in empty.loc["y.growth", "why"]
    fewer, *_ = _table(_project(tmp_path, lambda c: c.update(configurations=2)))
    assert fewer.loc["y.growth", "verdict"] == "differs"
    assert "spans 2 of the paper's 7 cells" in fewer.loc["y.growth", "why"]


def test_a_fraction_is_judged_by_its_binomial_interval_for_the_n_it_has(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.exposed", "verdict"] == "reproduced"  # 150/150 here: 95 % interval 0.976–1
    ten, *_ = _table(_project(tmp_path, lambda c: c.update(trials=10)))
    assert ten.loc["y.exposed", "verdict"] == "inconclusive"  # 10/10 is not 150/150: 0.692–1
    assert "10/10 here" in ten.loc["y.exposed", "why"] and "0.692" in ten.loc["y.exposed", "why"]
    lost, *_ = _table(_project(tmp_path, lambda c: c.update(exposed_pct=94.0)))
    assert lost.loc["y.exposed", "verdict"] == "differs"  # 141/150: the paper's 1 is outside


def test_a_share_near_100_percent_is_judged_as_its_complement(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.sign", "verdict"] == "not judged" and "complement of y.write" in rows.loc["y.sign", "why"]
    # the complement is the finding; here it mixes storage and CPU, so it is shown, not judged
    assert rows.loc["y.write", "verdict"] == "not judged" and "not portable" in rows.loc["y.write", "why"]

    def without_complement(r):
        next(q for q in r["quantities"] if q["id"] == "y.sign").pop("complement")
    with pytest.raises(ParamsError, match=r"id y\.sign.*a share of 88\.1 % cannot fail"):
        report.load_reference(_project(tmp_path, change_reference=without_complement).paper_reference,
                              models=_models)


def test_a_ratio_is_judged_only_between_like_resources(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.tag2", "verdict"] == "reproduced"  # both on the prover P, both here in C

    def other_machine(r):
        next(q for q in r["quantities"] if q["id"] == "y.tag2")["resource"] = "cpu:C"
    moved, *_ = _table(_project(tmp_path, change_reference=other_machine))
    assert moved.loc["y.tag2", "verdict"] == "not judged"
    assert "in the paper cpu:C against its reference (one-tag scan) on cpu:P" in moved.loc["y.tag2", "why"]


def test_two_rows_each_others_reference_are_refused(tmp_path):
    def mutual(r):
        r["references"]["sign"] = {"name": "sign", "where": "Table I", "paper": 254.9, "resource": "cpu:C",
                                   "metrics": [CT + "table1.sign.median_us"]}
        r["quantities"].append({"id": "x.hmac", "paper": "amort", "where": "Table I", "row": "hmac",
                                "column": "Median", "kind": "hardware", "value": 2.15, "unit": "µs",
                                "metric": CT + "table1.hmac.median_us", "reference": "sign", "resource": "cpu:C"})
    with pytest.raises(ParamsError, match="each other's reference"):
        report.load_reference(_project(tmp_path, change_reference=mutual).paper_reference, models=_models)


def test_an_estimate_whose_interval_is_wider_than_25_percent_is_inconclusive(tmp_path):
    rows, *_ = _table(_project(tmp_path))
    assert rows.loc["y.wide", "verdict"] == "reproduced"  # 8.5–10.5 around 9: inside ×0.8–1.25
    wide, *_ = _table(_project(tmp_path, lambda c: c.update(wide_lo=0.0, wide_hi=77.0)))
    assert wide.loc["y.wide", "verdict"] == "inconclusive" and "too few samples" in wide.loc["y.wide", "why"]
    apart, *_ = _table(_project(tmp_path, lambda c: c.update(wide_lo=20.0, wide_hi=77.0)))
    assert apart.loc["y.wide", "verdict"] == "differs"  # a wide interval that excludes the paper still differs


def test_a_failed_sanity_check_reads_measurement_failed_with_its_cause(tmp_path):
    failed = {"checks": 3, "failed": [{"check": "second_tag_and_chain adds time over one tag", "keys": ["two_tags"],
                                        "cause": "second tag and chain measures 11.4 µs faster than one tag"}]}
    rows, reference, tree = _table(_project(tmp_path, lambda c: c.update(sanity=failed, two_tags=17.2,
                                                                        one_tag=28.6)))
    row = rows.loc["y.tag2"]
    assert row["verdict"] == "measurement failed"
    assert "stage `cycle`'s sanity check" in row["why"] and "11.4 µs faster than one tag" in row["why"]
    assert rows.loc["y.reuse", "verdict"] == "reproduced"  # a row that reads no invalidated key is judged
    text = report.render(reference, rows.reset_index(), tree)
    assert "- **y.tag2** (§V-G)" in text.split("## This run")[0]


# --- every predicate of the repo's reference: the paper's own values pass, ±25 % off fails ------------------------

@pytest.fixture(scope="module")
def claims(repo_root):
    reference = report.load_reference(repo_root / "params" / "paper_reference.yaml")
    return reference, [q for q in reference.quantities if q.kind == "claim"]


def _scaled(value, factor: float):
    if isinstance(value, list):
        return [_scaled(v, factor) for v in value]
    if isinstance(value, dict):
        return {k: _scaled(v, factor) for k, v in value.items()}
    return value * factor if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _repo_claims():
    from tests.conftest import REPO

    raw = yaml.safe_load((REPO / "params" / "paper_reference.yaml").read_text())
    return [q["id"] for q in raw["quantities"] if q["kind"] == "claim"]


@pytest.mark.parametrize("rid", _repo_claims())
def test_every_predicate_holds_on_the_papers_values_and_fails_25_percent_off(claims, rid):
    reference, rows = claims
    q = next(r for r in rows if r.id == rid)
    held = evaluate(q.predicate, dict(q.paper_data))
    if q.paper_inconsistent:
        # the paper's own numbers fail their own statement: the consistency table must say so
        assert held is False, f"{rid}: paper_inconsistent, yet its values pass {q.predicate}"
        table = consistency_table(reference, report.metrics_tree(reference, Path("/nonexistent")))
        assert table.set_index("id").loc[q.paper_inconsistent, "verdict"] == "inconsistent"
    else:
        assert held is True, f"{rid}: the paper's own values fail {q.predicate}"
    if q.target is None:
        return  # a statement without a number ("the write dominates", "all identities attest")
    factors = (10 ** -0.51, 10 ** 0.51) if q.target_scale == "decades" else (0.74, 1.26)
    for factor in factors:
        data = dict(q.paper_data)
        data[q.target] = _scaled(data[q.target], factor)
        if q.paper_inconsistent and evaluate(q.predicate, data) is True:
            continue  # moving the wrong number into the band is not the paper's claim failing
        assert evaluate(q.predicate, data) is False, f"{rid}: {q.target} × {factor:.3g} still passes {q.predicate}"


def test_the_predicate_test_catches_a_half_line(claims):
    """A predicate as wide as "0 < lost < k" (the paper's 22 and 34 of k = 64) fails the ±25 % test."""
    assert evaluate("0 < lost < k", {"lost": 22 * 1.26, "k": 64}) is True  # the defect the test exists for
    _, rows = claims
    lost = next(q for q in rows if q.id == "amort.h.restart.lost.first")
    assert evaluate(lost.predicate, {"lost": 22 * 1.26}) is False and evaluate(lost.predicate, {"lost": 22}) is True
    assert math.isclose(float(lost.paper_data["lost"]), 22.0)


def test_every_claim_with_a_number_names_it(claims):
    """The claims whose statement has a number carry it as their target (the list a reader checks by eye)."""
    _, rows = claims
    with_target = sorted(q.id for q in rows if q.target)
    for rid in ("amort.c.liboqs_faster", "amort.c.three_decades", "amort.c.orders", "amort.c.sixteen",
                "amort.h.restart.lost.first", "amort.h.restart.lost.second", "amort.f.independent",
                "case.vi.sigma3_controller_timer"):
        assert rid in with_target, rid


def test_the_repo_reference_keeps_its_fixture_rows(tmp_path):
    # the shared fixture of tests.test_report still loads with the issue-39 rows beside it
    assert _rows(_project(tmp_path)).loc["x.count", "verdict"] == "reproduced"
    assert copy.deepcopy(METRICS) and REFERENCE and ST


# --- the papers' own consistency, arithmetic-first --------------------------------------------------------------

AMORT_INCONSISTENT = {
    "amort.cons.eq1.log", "amort.cons.eq1.slh",                 # Eq. 1 with Table I against Table II's reductions
    "amort.cons.t2.k1_parts",                                    # Table II's k = 1 cost below the sum of its parts
    "amort.cons.t2.fsync_implied", "amort.cons.t2.sign_implied",  # Table II's endpoints imply two C_fsync, two C_sign
    "amort.cons.rekey_encaps",                                   # re-keying below one encapsulation
    "amort.cons.replay_floor",                                   # re-merge per record below the HMAC + Merkle floor
    "amort.cons.t3.eq1", "amort.cons.t3.t2",                     # Table III at 10 000 above Eq. 1 and Table II
    "amort.cons.decades", "amort.cons.orders",                   # 124× is two orders; 47 758× rounds to five
    "amort.cons.tpm_restart",                                    # TPM restart faster than one TPM reservation
    "amort.cons.t5.warm_ratio", "amort.cons.t5.cold_ratio", "amort.cons.t5.warm_throughput",
    "amort.cons.t5.same_signature",                              # Table V's ratios and throughput
}
CASE_INCONSISTENT = {"case.cons.c5_largest", "case.cons.next_timer", "case.cons.pull_timeout",
                     "case.cons.kex_dimension", "case.cons.icac_dimension"}


def test_the_consistency_audit_finds_what_a_careful_reader_finds(repo_root):
    reference = report.load_reference(repo_root / "params" / "paper_reference.yaml")
    table = consistency_table(reference, report.metrics_tree(reference, Path("/nonexistent")))
    bad = {paper: set(table[(table["paper_id"] == paper) & (table["verdict"] == "inconsistent")]["id"])
           for paper in ("amort", "case")}
    assert bad == {"amort": AMORT_INCONSISTENT, "case": CASE_INCONSISTENT}
    counts = table["paper_id"].value_counts()
    assert counts["amort"] >= 55 and counts["case"] >= 45, counts.to_dict()
    # the checks against this project's slack bound are model bounds, never counted as the paper's inconsistency
    model = table[table["basis"] == "model"]
    assert set(model["id"]) == {"case.cons.slack.3hop", "case.cons.slack.4hop"}
    assert set(model["verdict"]) <= {"not evaluated", "model bound not met", "consistent"}


def test_a_cost_below_the_sum_of_its_parts_fails_the_amortisation_sanity_check():
    import pandas as pd

    from pqlab.analysis.amortisation import sanity

    parts = pd.DataFrame({"scheme": ["mldsa_log"] * 2, "k": [1, 1], "checkpoints": [100, 100],
                          "sign_us": [250.0, 260.0], "write_us": [4230.0, 4250.0]})
    fine = {"mldsa_log": {"cost_first_ci_us": [4400.0, 4600.0]}}
    assert sanity(fine, parts, 1, 0.95) == {"checks": 1, "failed": []}
    # Table II's own k = 1 cost, 4 354 µs, against the 4 495 µs its signature and write take (issue 39)
    below = {"mldsa_log": {"cost_first_ci_us": [4300.0, 4354.0]}}
    [failure] = sanity(below, parts, 1, 0.95)["failed"]
    assert failure["keys"] == ["measured.mldsa_log", "model.mldsa_log"]
    assert "4354.0 µs at the top of its 95 % interval) is below the signature + write its checkpoints took " \
           "(4495.0 µs)" in failure["cause"]
