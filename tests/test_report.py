"""REPORT.md: each kind of row judged its own way, failures and dropped cells, sensitivity rows beside main rows,
typed metrics (a renamed key is an error, not a blank), coverage from rows, the papers' own consistency, the CSV,
and the repo's own reference file (tolerances within ±25 %, every coverage item with a main row, the row counts)."""

from __future__ import annotations

import copy
import csv
import io
import re
import typing
from pathlib import Path

import pytest
import yaml

from pqlab import io as pqlab_io
from pqlab import report
from pqlab.errors import MetricsMismatchError, ParamsError
from pqlab.io import read_json
from pqlab.paths import ProjectPaths
from pqlab.pipeline.metrics.by_stage import stage_model
from pqlab.pipeline.typed_metrics import IntervalMetrics, MetricsNode, StageMetrics, _arms, _children
from pqlab.report import coverage as cov
from pqlab.report.consistency import consistency_table
from pqlab.report.schema import MAX_RELATIVE_TOLERANCE, Printed, resolve

# --- a small project: two stages with typed metrics ----------------------------------------------------------------

class Op(MetricsNode):
    median_us: float
    p99_us: float
    backend: str
    n: int


class CostsLike(StageMetrics):
    cpu_model: str | None = None
    table1: dict[str, Op]
    sign_by_backend: dict[str, dict[str, Op]]
    backends_absent: dict[str, str]
    record_octets: int
    share_write_pct: float
    share_sign_pct: float


class Sim(IntervalMetrics):
    time_s: float | None
    time_lo_s: float | None
    time_hi_s: float | None
    time_runs: float | None
    time_failure_rate: float | None
    time_failed_in: str | None
    ratio_min: float | None
    ratio_min_lo: float | None
    ratio_min_hi: float | None
    ratio_max: float | None
    ratio_max_lo: float | None
    ratio_max_hi: float | None
    ratio_cells: int
    cell_ratio: float
    cell_ratio_lo: float
    cell_ratio_hi: float
    cell_success_lo: float
    cell_success_hi: float
    cell_failed: float
    variant_time_s: float
    variant_time_lo_s: float
    variant_time_hi_s: float
    scenarios: dict[str, float]
    bound: float


MODELS = {"costs": CostsLike, "transport": Sim}


def models(stage: str):
    return MODELS.get(stage)


def _always(stage: str) -> bool:
    return True


CT = "costs_metrics.json:"
ST = "t.json:"
REFERENCE = {
    "papers": {"amort": {"title": "AMORT: sub", "source": "S", "machine": "Pi"},
               "case": {"title": "CASE: sub", "source": "S", "machine": "model"}},
    "stages": {"costs": {"metrics": "costs_metrics.json", "kind": "measurement", "samples": {"calls": "table1.*.n"}},
               "transport": {"metrics": "t.json", "kind": "simulation", "samples": {"runs": "time_runs"}},
               "later": {"metrics": "other.json", "kind": "measurement", "samples": {"trials": "trials"}}},
    "references": {"hmac": {"name": "HMAC (Table I)", "where": "Table I", "paper": 2.15,
                            "metrics": [CT + "table1.hmac.median_us"], "resource": "cpu:C"}},
    "quantities": [
        {"id": "x.count", "paper": "amort", "where": "§IV", "row": "record", "column": "octets", "kind": "exact",
         "value": 83, "unit": "B", "metric": CT + "record_octets"},
        {"id": "x.sign", "paper": "amort", "where": "Table I", "row": "sign", "column": "Median", "kind": "hardware",
         "value": 254.9, "unit": "µs", "metric": CT + "table1.sign.median_us", "reference": "hmac",
         "paper_library": "liboqs", "resource": "cpu:C"},
        {"id": "x.fsync", "paper": "amort", "where": "Table I", "row": "fsync", "column": "Median", "kind": "hardware",
         "value": 4240, "unit": "µs", "metric": CT + "table1.fsync.median_us"},
        {"id": "x.liboqs", "paper": "amort", "where": "§V-C", "row": "liboqs sign", "column": "Median",
         "kind": "hardware", "value": "0.255", "unit": "ms", "scale": 0.001, "reference": "hmac",
         "metric": CT + "sign_by_backend.ML-DSA-65.liboqs.median_us", "paper_library": "liboqs",
         "resource": "cpu:C"},
        {"id": "x.dominates", "paper": "amort", "where": "§V-D", "row": "the write dominates", "column": "statement",
         "kind": "claim", "value": "94.3 % vs 5.7 %", "unit": "%", "metric": CT + "share_write_pct",
         "data": {"write": CT + "share_write_pct", "sign": CT + "share_sign_pct"}, "predicate": "write > sign",
         "paper_data": {"write": 94.3, "sign": 5.7}},
        {"id": "x.time", "paper": "case", "where": "§VI", "row": "D3", "column": "IPv6", "kind": "estimate",
         "value": "1.58", "unit": "s", "metric": ST + "time_s", "ci": [ST + "time_lo_s", ST + "time_hi_s"],
         "n": ST + "time_runs"},
        {"id": "x.ratio", "paper": "case", "where": "§VI", "row": "D3 ratio", "column": "range", "kind": "estimate",
         "value": ["1.8", "2.6"], "unit": "ratio", "metric": ST + "ratio_min", "metric_high": ST + "ratio_max",
         "ci": [ST + "ratio_min_lo", ST + "ratio_min_hi"], "ci_high": [ST + "ratio_max_lo", ST + "ratio_max_hi"],
         "cells": {"metric": ST + "ratio_cells", "paper": 8}},
        {"id": "x.cell", "paper": "case", "where": "Fig. 4a", "row": "cell", "column": "ratio *", "kind": "estimate",
         "value": "2.65", "unit": "ratio", "metric": ST + "cell_ratio",
         "ci": [ST + "cell_ratio_lo", ST + "cell_ratio_hi"],
         "marked": {"paper": True, "success": [ST + "cell_success_lo", ST + "cell_success_hi"],
                    "failure_rate": ST + "cell_failed", "threshold": 0.995}},
        {"id": "x.variant", "paper": "case", "where": "§VI", "row": "D3 (variant)", "column": "IPv6",
         "kind": "estimate", "value": "1.58", "unit": "s", "metric": ST + "variant_time_s",
         "ci": [ST + "variant_time_lo_s", ST + "variant_time_hi_s"], "sensitivity": "another model", "main": "x.time"},
        {"id": "x.later", "paper": "amort", "where": "Table II", "row": "later", "column": "x", "kind": "exact",
         "value": 1, "unit": "µs", "metric": "other.json:x"},
    ],
    "consistency": [
        {"id": "c.sum", "paper": "amort", "where": "Eq. 1", "check": "floor", "inputs": {"a": "2.15", "b": "0.66"},
         "result": "a + b", "printed": "2.81"},
        {"id": "c.bad", "paper": "amort", "where": "Table V", "check": "ratio", "inputs": {"a": "392", "b": "254.9"},
         "result": "1000 * a / b", "printed": "1511"},
        {"id": "c.bound", "paper": "case", "where": "§VI", "check": "bound", "inputs": {"r": "1.8", "c": ST + "bound"},
         "holds": "r <= c", "basis": "model"},
    ],
    "coverage": [
        {"id": "cov.t1", "paper": "amort", "item": "Table I", "what": "costs", "stage": "costs",
         "outputs": ["paper_figs/amort/table1_costs"], "rows": ["x.count", "x.sign", "x.fsync"]},
        {"id": "cov.vi", "paper": "case", "item": "§VI", "what": "times", "stage": "transport", "rows": ["x.*"]},
    ],
    "differences": [
        {"topic": "Hardware", "paper": "a Pi.", "here": "this CPU.", "evidence": [CT + "cpu_model", "other.json"]},
    ],
}


def _op(median: float, backend: str = "openssl", n: int = 3000) -> dict:
    return {"median_us": median, "p99_us": median * 2, "backend": backend, "n": n}


METRICS = {
    "costs_metrics.json": {
        "profile": "quick", "cpu_model": "Test CPU",
        "table1": {"hmac": _op(1.0, "hashlib"), "sign": _op(600.0), "fsync": _op(300.0, "os")},
        "sign_by_backend": {"ML-DSA-65": {"openssl": _op(600.0)}},
        "backends_absent": {"liboqs": "no liboqs shared library"},
        "record_octets": 83, "share_write_pct": 33.0, "share_sign_pct": 67.0},
    "t.json": {
        "profile": "quick", "confidence": 0.95, "time_s": 1.60, "time_lo_s": 1.57, "time_hi_s": 1.62, "time_runs": 40.0,
        "time_failure_rate": 0.0, "time_failed_in": None,
        "ratio_min": 1.82, "ratio_min_lo": 1.7, "ratio_min_hi": 1.9, "ratio_max": 2.55, "ratio_max_lo": 2.4,
        "ratio_max_hi": 2.7, "ratio_cells": 8,
        "cell_ratio": 2.6, "cell_ratio_lo": 2.5, "cell_ratio_hi": 2.7, "cell_success_lo": 0.9, "cell_success_hi": 0.99,
        "cell_failed": 0.05,
        "variant_time_s": 2.5, "variant_time_lo_s": 2.4, "variant_time_hi_s": 2.6, "scenarios": {"none": 1.0},
        "bound": 1.7},
}


def _write(root: Path, reference=REFERENCE, metrics=METRICS) -> ProjectPaths:
    (root / "params").mkdir(exist_ok=True)
    (root / "params" / "paper_reference.yaml").write_text(yaml.safe_dump(reference, allow_unicode=True))
    derived = root / "data" / "derived"
    derived.mkdir(parents=True, exist_ok=True)
    for old in derived.glob("*.json"):
        old.unlink()
    for name, document in metrics.items():
        pqlab_io.write_json(derived / name, document)  # with its digest, as a stage writes it
    return ProjectPaths(root)


def _load(paths: ProjectPaths):
    return report.load_reference(paths.paper_reference, models=models)


def _tree(paths: ProjectPaths, reference) -> report.MetricsTree:
    return report.MetricsTree(paths.derived, {s.metrics: n for n, s in reference.stages.items()}, models=models)


def _rows(paths: ProjectPaths):
    reference = _load(paths)
    return report.collect(reference, _tree(paths, reference), pipeline=_always).set_index("id")


def _changed(tmp_path: Path, change_metrics=None, change_reference=None):
    metrics, reference = copy.deepcopy(METRICS), copy.deepcopy(REFERENCE)
    if change_metrics:
        change_metrics(metrics)
    if change_reference:
        change_reference(reference)
    return _write(tmp_path, reference, metrics)


@pytest.fixture
def paths(tmp_path):
    return _write(tmp_path)


@pytest.fixture
def rows(paths):
    return _rows(paths)


# --- each kind judged its own way ------------------------------------------------------------------------------------

def test_exact_count_is_equal_or_not(tmp_path):
    assert _rows(_write(tmp_path)).loc["x.count", "verdict"] == "reproduced"
    rows = _rows(_changed(tmp_path, lambda m: m["costs_metrics.json"].update(record_octets=84)))
    assert rows.loc["x.count", "verdict"] == "differs" and "a count is equal or not" in rows.loc["x.count", "why"]


def test_printed_precision_sets_half_a_unit():
    assert Printed.parse("0.130").half_unit == pytest.approx(0.0005)
    assert Printed.parse(2.6).half_unit == pytest.approx(0.05)
    assert Printed.parse("19 200").value == 19200 and Printed.parse("1,576").half_unit == 0.5
    assert Printed.parse("3.4e-7").half_unit == pytest.approx(5e-9)
    fraction = Printed.parse("150/150")
    assert fraction.value == 1.0 and fraction.half_unit == pytest.approx(0.5 / 150)
    assert Printed.parse("MAC FAIL") is None and Printed.parse("8, 12, 16") is None  # phrases, not numbers


def test_claim_holds_or_not_on_this_runs_data_and_shows_it(tmp_path):
    row = _rows(_write(tmp_path)).loc["x.dominates"]
    assert row["verdict"] == "differs" and "`write > sign` is false" in row["why"]
    assert set(row["data"].split("; ")) == {"write = 33", "sign = 67"}
    flipped = _rows(_changed(tmp_path, lambda m: m["costs_metrics.json"].update(share_write_pct=94.0,
                                                                                 share_sign_pct=6.0)))
    assert flipped.loc["x.dominates", "verdict"] == "reproduced"


def test_estimate_is_the_paper_inside_the_interval_widened_by_its_rounding(tmp_path):
    row = _rows(_write(tmp_path)).loc["x.time"]
    # 1.58 lies in 1.57–1.62
    assert row["verdict"] == "reproduced" and (row["ci_low"], row["ci_high"]) == (1.57, 1.62)
    # 1.585 is within half a unit (0.005) of an interval starting at 1.59, not of one starting at 1.6
    near = _rows(_changed(tmp_path, lambda m: m["t.json"].update(time_lo_s=1.585, time_s=1.6)))
    assert near.loc["x.time", "verdict"] == "reproduced"
    far = _rows(_changed(tmp_path, lambda m: m["t.json"].update(time_lo_s=1.59, time_s=1.6)))
    assert far.loc["x.time", "verdict"] == "differs"
    assert "outside this run's 95 % interval 1.59–1.62 (widened by ±0.005" in far.loc["x.time", "why"]


def test_an_estimates_interval_is_named_at_the_level_its_stage_recorded(tmp_path):
    """The stage's `confidence` parameter, recorded in its metrics, is the level the report states: in the row's
    reason, its "judged on" cell, the CSV and the legend (the report computes nothing from it)."""
    paths = _changed(tmp_path, lambda m: m["t.json"].update(confidence=0.9, time_lo_s=1.59, time_s=1.6))
    reference = _load(paths)
    table = report.collect(reference, _tree(paths, reference), pipeline=_always).set_index("id")
    assert "outside this run's 90 % interval 1.59–1.62" in table.loc["x.time", "why"]
    assert table.loc["x.time", "confidence"] == 0.9 and table.loc["x.count", "confidence"] is None
    text, *_ = report.build(reference, paths.root, models=models)
    assert "90 % CI 1.59–1.62" in text and "at its stage's `confidence` (90 %: transport)" in text
    assert "95 % CI" not in text
    unrecorded = _changed(tmp_path, lambda m: m["t.json"].pop("confidence"))
    with pytest.raises(MetricsMismatchError, match="confidence"):
        _rows(unrecorded)


def test_hardware_is_judged_only_normalised_by_a_reference(rows):
    sign = rows.loc["x.sign"]
    # here 600 / 1.0 against 254.9 / 2.15: 5.06 × the paper's
    assert sign["verdict"] == "differs" and sign["normalised"] == pytest.approx(600 / (254.9 / 2.15))
    assert "normalised by HMAC (Table I)" in sign["why"] and "is not within ×0.8–1.25" in sign["why"]
    fsync = rows.loc["x.fsync"]
    assert fsync["verdict"] == "not judged" and "shown, not judged" in fsync["why"]


def test_a_hardware_bound_passes_below_it(tmp_path):
    def bound(reference):
        reference["quantities"][1].update(value=300, bound="<")
    rows = _rows(_changed(tmp_path, lambda m: m["costs_metrics.json"]["table1"]["sign"].update(median_us=130.0),
                          bound))
    assert rows.loc["x.sign", "verdict"] == "reproduced" and rows.loc["x.sign", "paper"] == "< 300"


# --- the library that produced the row (issue 24 item 8) ------------------------------------------------------------

def test_reasons_name_the_library_that_produced_the_row(tmp_path):
    rows = _rows(_write(tmp_path))
    assert "library differs: paper liboqs, here openssl (liboqs absent on this machine)" in rows.loc["x.sign", "why"]
    assert rows.loc["x.sign", "produced_by"] == "costs (openssl)"

    def liboqs(m):
        m["costs_metrics.json"]["table1"]["sign"]["backend"] = "liboqs"
        m["costs_metrics.json"]["sign_by_backend"]["ML-DSA-65"]["liboqs"] = _op(250.0, "liboqs")
        m["costs_metrics.json"]["backends_absent"] = {}
    present = _rows(_changed(tmp_path, liboqs))
    for rid in ("x.sign", "x.liboqs"):
        why = present.loc[rid, "why"]
        assert "produced by liboqs, the paper's library" in why and "absent" not in why, why
    assert present.loc["x.liboqs", "produced_by"] == "costs (liboqs)"


def test_an_absent_paper_library_is_not_run_here(rows):
    row = rows.loc["x.liboqs"]
    assert row["verdict"] == "not run here" and row["produced_by"] == "costs (no liboqs)"
    assert "liboqs absent on this machine (no liboqs shared library); timed here on openssl" in row["why"]


# --- failures, cells, marks ------------------------------------------------------------------------------------------

def test_a_value_over_completed_runs_with_failures_differs_saying_how_many_and_where(tmp_path):
    rows = _rows(_changed(tmp_path, lambda m: m["t.json"].update(time_failure_rate=0.075, time_failed_in="Sigma2")))
    row = rows.loc["x.time"]
    assert row["verdict"] == "differs" and row["failure_rate"] == 0.075
    assert "3 of 40 runs failed (7.5%), in Sigma2" in row["why"] and "the paper reports none" in row["why"]


def test_no_completed_run_is_no_value_with_the_failure(tmp_path):
    rows = _rows(_changed(tmp_path, lambda m: m["t.json"].update(time_s=None, time_lo_s=None, time_hi_s=None,
                                                                  time_failure_rate=1.0, time_failed_in="Sigma2")))
    assert rows.loc["x.time", "verdict"] == "differs"
    assert rows.loc["x.time", "why"].startswith("no value: 40 of 40 runs failed (100.0%), in Sigma2")


def test_a_range_missing_a_cell_differs(tmp_path):
    assert _rows(_write(tmp_path)).loc["x.ratio", "verdict"] == "reproduced"
    rows = _rows(_changed(tmp_path, lambda m: m["t.json"].update(ratio_cells=6)))
    row = rows.loc["x.ratio"]
    assert row["verdict"] == "differs" and "spans 6 of the paper's 8 cells" in row["why"]
    assert (row["cells_here"], row["cells_paper"]) == (6, 8)


def test_a_cell_the_paper_marks_must_be_markable_here(tmp_path):
    assert _rows(_write(tmp_path)).loc["x.cell", "verdict"] == "reproduced"
    rows = _rows(_changed(tmp_path, lambda m: m["t.json"].update(cell_success_lo=0.996, cell_success_hi=1.0,
                                                                  cell_failed=0.0)))
    assert rows.loc["x.cell", "verdict"] == "differs" and "the paper marks this cell" in rows.loc["x.cell", "why"]


def test_a_marked_cell_with_no_failure_is_not_marked_here(tmp_path):
    """0 failures in 100 runs: the success interval's low end (96.4 %) is below 99.5 %, yet no run failed, so the
    cell is not marked here and the paper's asterisk does not reproduce (issue 39)."""
    rows = _rows(_changed(tmp_path, lambda m: m["t.json"].update(cell_success_lo=0.9638, cell_success_hi=1.0,
                                                                  cell_failed=0.0)))
    row = rows.loc["x.cell"]
    assert row["verdict"] == "differs"
    assert "here 100.0% of runs succeeded (interval 96.4%–100.0%)" in row["why"]
    marked = _rows(_changed(tmp_path, lambda m: m["t.json"].update(cell_success_lo=0.95, cell_success_hi=0.999,
                                                                    cell_failed=0.01)))
    assert marked.loc["x.cell", "verdict"] == "reproduced"


# --- sensitivity rows are extra ---------------------------------------------------------------------------------------

def test_a_sensitivity_row_contradicting_its_main_row_changes_nothing(paths):
    reference = _load(paths)
    table = report.collect(reference, _tree(paths, reference), pipeline=_always)
    rows = table.set_index("id")
    assert rows.loc["x.time", "verdict"] == "reproduced" and rows.loc["x.variant", "verdict"] == "differs"
    assert rows.loc["x.variant", "table"] == "sensitivity" and rows.loc["x.variant", "main"] == "x.time"
    text = report.render(reference, table, _tree(paths, reference))
    glance = text.split("## Claims that do not reproduce here")[0]
    # the main table counts its one estimate as reproduced; the variant is counted apart
    assert "| estimate (provisional) | 3 | 0 | 0 | 0 | 0 | 0 | 3 |" in glance and "1 sensitivity rows" in glance
    assert "x.variant" not in text.split("## Claims that do not reproduce here")[1].split("## This run")[0]

    broken = copy.deepcopy(REFERENCE)
    broken["quantities"][8]["main"] = "x.variant"
    paths.paper_reference.write_text(yaml.safe_dump(broken, allow_unicode=True))
    with pytest.raises(ParamsError, match=r"id x\.variant.*main"):
        _load(paths)


# --- typed metrics: a missing or renamed key is an error, naming the row and the key --------------------------------

def test_a_key_the_model_does_not_declare_stops_the_reference_naming_the_row(tmp_path):
    paths = _changed(tmp_path, change_reference=lambda r: r["quantities"][0].update(metric=CT + "record_octet"))
    with pytest.raises(ParamsError) as failure:
        _load(paths)
    assert "id x.count" in str(failure.value) and "`record_octet` is not a key" in str(failure.value)
    assert "record_octets" in str(failure.value)  # what is declared instead


def test_a_metrics_file_missing_a_declared_key_stops_the_report_naming_it(tmp_path):
    paths = _changed(tmp_path, lambda m: m["costs_metrics.json"].pop("record_octets"))
    reference = _load(paths)
    with pytest.raises(MetricsMismatchError) as failure:
        report.collect(reference, _tree(paths, reference), pipeline=_always)
    assert "costs_metrics.json" in str(failure.value) and "`record_octets`" in str(failure.value)
    assert "CostsLike" in str(failure.value)


def test_an_entry_renamed_in_a_mapping_stops_the_report_naming_the_row(tmp_path):
    paths = _changed(tmp_path, lambda m: m["costs_metrics.json"]["table1"].update(
        signature=m["costs_metrics.json"]["table1"].pop("sign")))
    reference = _load(paths)
    with pytest.raises(MetricsMismatchError, match=r"row x.sign: `table1.sign.median_us` has no `sign` under "
                                                   r"`table1` \(present: fsync, hmac, signature\)"):
        report.collect(reference, _tree(paths, reference), pipeline=_always)


def test_a_stage_that_has_not_run_is_not_run_here(rows):
    row = rows.loc["x.later"]
    assert row["verdict"] == "not run here" and "other.json missing: stage `later` has not run" in row["why"]


def test_every_study_model_declares_the_keys_its_rows_read():
    """The typed models are importable for every stage of the repo's reference file, and declared() resolves."""
    for stage in ("costs", "attack_matrix", "case_sizes", "design_space", "transport", "amortisation", "scaling",
                  "device_origin", "recovery", "control_cycle", "full_image", "sensitivity", "assumptions"):
        model = stage_model(stage)
        assert model is not None and issubclass(model, StageMetrics), stage


# --- consistency, coverage, the CSV, the whole report ----------------------------------------------------------------

def test_consistency_shows_the_arithmetic_and_uses_the_rounding(paths):
    reference = _load(paths)
    table = consistency_table(reference, _tree(paths, reference), pipeline=_always).set_index("id")
    assert table.loc["c.sum", "verdict"] == "consistent"
    assert table.loc["c.sum", "arithmetic"].startswith("2.15 + 0.66 = 2.81")
    assert table.loc["c.bad", "verdict"] == "inconsistent" and "printed 1511" in table.loc["c.bad", "arithmetic"]
    # a bound this project's model computes: the paper against the model, not an inconsistency of its numbers
    assert table.loc["c.bound", "verdict"] == "model bound not met"
    assert table.loc["c.bound", "arithmetic"] == "1.8 <= 1.7: does not hold"


def test_coverage_status_comes_from_the_items_main_rows(paths):
    reference = _load(paths)
    table = report.collect(reference, _tree(paths, reference), pipeline=_always)
    frame = cov.coverage_table(reference, table, paths.root).set_index("id")
    assert frame.loc["cov.t1", "status"] == "partial: 1 of 3"
    assert "differs: x.sign" in frame.loc["cov.t1", "detail"] and "not judged: x.fsync" in frame.loc["cov.t1", "detail"]
    assert frame.loc["cov.t1", "missing_outputs"] == ["paper_figs/amort/table1_costs"]


def test_a_coverage_item_with_no_main_row_is_a_reference_error(tmp_path):
    paths = _changed(tmp_path, change_reference=lambda r: r["coverage"][0].update(rows=["x.variant"]))
    with pytest.raises(ParamsError, match=r"coverage \(id cov.t1\): no main row matches x.variant"):
        _load(paths)


def test_the_report_stage_writes_markdown_csv_and_run_record(paths):
    from pqlab.studies import report as report_stage

    result = report_stage.run(None, paths, models=models)
    text = paths.report.read_text()
    order = [text.index(h) for h in ("## Verdicts at a glance", "## Claims that do not reproduce here", "## This run",
                                     "## AMORT", "## CASE", "## Sensitivity rows", "## The papers' own consistency",
                                     "## What differs and why", "## Coverage")]
    assert order == sorted(order)
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text)
    assert "- **x.sign** (Table I) sign — Median — paper 254.9 µs — here 600" in text
    lines = list(csv.DictReader(io.StringIO((paths.report.parent / "report_rows.csv").read_text())))
    assert {"id", "paper", "where", "claim", "kind", "unit", "paper_value", "here_value", "here_low", "here_high", "n",
            "failure_rate", "verdict", "reason"} <= set(lines[0])
    by_id = {line["id"]: line for line in lines}
    assert by_id["x.ratio#low"]["paper_value"] == "1.8" and by_id["x.ratio#high"]["here_value"] == "2.55"
    assert (by_id["x.time"]["here_low"], by_id["x.time"]["here_high"], by_id["x.time"]["n"]) == ("1.57", "1.62", "40.0")
    run = read_json(paths.derived / "report_run.json")
    assert run["main_rows"] == 9 and run["kind_verdicts"]["estimate"] == {"reproduced": 3}
    assert result.data["markdown"] == text and report_stage.run(None, paths, models=models).data["markdown"] == text


# --- the repo's own reference file ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def repo_reference(repo_root):
    return report.load_reference(repo_root / "params" / "paper_reference.yaml")


def _integer_metric(reference, q) -> bool:
    files = {s.metrics: n for n, s in reference.stages.items()}
    filename, key = resolve(q.metric, "")
    nodes: list[typing.Any] = [stage_model(files[filename])]
    for part in key.split("."):
        nodes = [child for node in nodes for child in _children(node, part)]
    arms = [a for node in nodes for a in _arms(node)]
    return bool(arms) and all(a is int for a in arms)


def test_no_tolerance_that_can_reproduce_a_row_exceeds_25_percent(repo_reference):
    """The band-width rule: every row's accepted deviation (rounding, the hardware tolerance) is at most ±25 %."""
    wide = {q.id: q.relative_tolerance(_integer_metric(repo_reference, q)) for q in repo_reference.quantities}
    assert {i: t for i, t in wide.items() if t is not None and t > MAX_RELATIVE_TOLERANCE} == {}
    assert any(t == 0.25 for t in wide.values())  # the hardware rows use the whole allowance, no more


def test_the_band_width_rule_catches_a_wide_row(tmp_path):
    paths = _changed(tmp_path, change_reference=lambda r: r["quantities"][5].update(value="1"))
    q = next(q for q in _load(paths).quantities if q.id == "x.time")
    assert q.relative_tolerance(False) == 0.5 > MAX_RELATIVE_TOLERANCE


def test_repo_reference_has_every_claim_once_and_covers_both_papers(repo_reference):
    main = repo_reference.main_rows()
    per_paper = {p: sum(q.paper == p for q in main) for p in repo_reference.papers}
    assert per_paper["amort"] >= 120 and per_paper["case"] >= 230, per_paper
    assert {q.kind for q in main} == {"exact", "claim", "estimate", "hardware", "setting"}
    for item in repo_reference.coverage:  # every coverage item has at least one main row
        assert repo_reference.rows_of(item), item.id
    covered = {(c.paper, c.item.split(" (")[0].split(",")[0]) for c in repo_reference.coverage}
    for paper, items in {"amort": ["Table I", "Table II", "Table III", "Table IV", "Table V", "Table VI", "Fig. 1",
                                   "Fig. 2", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Eq. 1", "Abstract"],
                         "case": ["Table I", "Table II", "Fig. 1", "Fig. 2", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6",
                                  "§V text", "§VI text", "§VII text", "Abstract"]}.items():
        for item in items:
            assert (paper, item) in covered, (paper, item)
    cells = [q for q in main if q.id.startswith(("case.vii.fig4a.o", "case.vii.fig4b.o"))]
    assert len(cells) == 50 and sum(q.marked.paper for q in cells) == 8


def test_a_study_writing_a_key_its_model_does_not_declare_fails_in_one_line():
    from pqlab.pipeline.typed_metrics import validated

    good = METRICS["costs_metrics.json"]
    assert validated(CostsLike, good)["record_octets"] == 83
    with pytest.raises(MetricsMismatchError) as failure:
        validated(CostsLike, {**{k: v for k, v in good.items() if k != "record_octets"}, "record_octet": 83})
    message = str(failure.value)
    assert message.startswith("CostsLike: `record_octets`: field required (and 1 more)") and "\n" not in message
