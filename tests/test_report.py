"""REPORT.md: bands and verdicts, the strict reference schema, coverage, and the whole report on the repo's file."""

from __future__ import annotations

import copy
import json
import re

import pandas as pd
import pytest
import yaml

from pqlab import report
from pqlab.errors import ParamsError
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.report import coverage as cov
from pqlab.report.schema import Band
from pqlab.report.verdicts import Verdict

VERDICTS = {v.value for v in Verdict}
EXACT = {"name": "exact", "exact": True}
TIMING = {"name": "timing", "ratio": [0.5, 2.0], "why": "another CPU"}
COUNT = {"name": "count", "abs": 1, "why": "varies with the seed"}

REFERENCE = {
    "papers": {"amort": {"title": "T: sub", "source": "S", "machine": "Pi"}},
    "stages": {
        "costs": {"metrics": "m.json", "kind": "measurement", "samples": {"calls": "table1.*.n"}},
        "transport": {"metrics": "t.json", "kind": "simulation"},
        "later": {"metrics": "other.json", "kind": "measurement"},
    },
    "bands": {"exact": EXACT, "timing": TIMING, "count": COUNT},
    "quantities": [
        {"id": "a", "paper": "amort", "where": "Table I", "row": "op", "column": "Median", "value": 4.0,
         "unit": "µs", "metric": "m.json:table1.op.median_us", "band": TIMING, "paper_library": "liboqs"},
        {"id": "b", "paper": "amort", "where": "Table I", "row": "absent", "column": "Median", "value": 1.0,
         "unit": "µs", "metric": "m.json:table1.absent.median_us", "band": TIMING},
        {"id": "c", "paper": "amort", "where": "Table II", "row": "later", "column": "x", "value": 1.0,
         "unit": "µs", "metric": "other.json:x", "band": TIMING},
        {"id": "d", "paper": "amort", "where": "§V", "row": "far", "column": "Median", "value": 1.0,
         "unit": "µs", "metric": "m.json:table1.far.median_us", "band": TIMING, "note": "the disk differs"},
        {"id": "e", "paper": "amort", "where": "§V", "row": "size", "column": "bytes", "value": 83,
         "unit": "B", "metric": "m.json:size", "band": EXACT},
        {"id": "f", "paper": "amort", "where": "§V", "row": "liboqs sign", "column": "Median", "value": 255,
         "unit": "µs", "metric": "m.json:sign.liboqs.median_us", "band": TIMING, "paper_library": "liboqs"},
        {"id": "g", "paper": "amort", "where": "§VI", "row": "4 hops", "column": "IPv6", "value": 32.3,
         "unit": "s", "metric": "t.json:paper.d3_4hop_ipv6_s", "band": TIMING},
        {"id": "h", "paper": "amort", "where": "§VI", "row": "4 hops, variant", "column": "block", "value": 13.1,
         "unit": "s", "metric": "t.json:source_accurate.d3_4hop_block_s", "band": TIMING,
         "sensitivity": "source_accurate"},
        {"id": "i", "paper": "amort", "where": "§VI", "row": "failures", "column": "count", "value": 0,
         "unit": "count", "metric": "t.json:paper.block_failures", "band": COUNT},
        {"id": "j", "paper": "amort", "where": "§VI", "row": "null", "column": "ratio", "value": 1.8,
         "unit": "ratio", "metric": "t.json:paper.ratio_min", "band": TIMING},
    ],
    "coverage": [
        {"id": "cov.t1", "paper": "amort", "item": "Table I", "what": "costs", "stage": "costs",
         "outputs": ["paper_figs/amort/table1_costs"], "rows": ["a", "b"]},
        {"id": "cov.t2", "paper": "amort", "item": "Table II", "what": "amortised", "stage": "later",
         "outputs": ["paper_figs/amort/table2"]},
        {"id": "cov.fig1", "paper": "amort", "item": "Fig. 1", "what": "diagram", "kind": "illustration",
         "outputs": ["docs/protocol.md"], "note": "a diagram"},
    ],
    "differences": [
        {"topic": "Hardware", "paper": "a Pi.", "here": "this CPU.", "evidence": ["m.json:cpu_model", "other.json"]},
    ],
}

METRICS = {
    "m.json": {"cpu_model": "Test CPU", "profile": "quick", "size": 83,
               "machine": {"cpu_count": 2, "platform": "Linux"},
               "backends_absent": {"liboqs": "no liboqs shared library"},
               "table1": {"op": {"median_us": 6.0, "backend": "openssl", "n": 3000},
                          "far": {"median_us": 9.0, "backend": "os", "n": 300}},
               "sign": {"openssl": {"median_us": 900.0}, "pqcrypto": {"median_us": 9000.0}}},
    "t.json": {"profile": "quick",
               "paper": {"d3_4hop_ipv6_s": None, "d3_4hop_ipv6_failure_rate": 1.0, "d3_4hop_ipv6_failed_in": "Sigma2",
                         "block_failures": 0, "ratio_min": None},
               "source_accurate": {"d3_4hop_block_s": 30.0, "d3_4hop_block_failure_rate": 0.25,
                                   "d3_4hop_block_failed_in": "Sigma3"}},
}


def _always(stage: str) -> bool:
    return True


def _write(root, reference=REFERENCE, metrics=METRICS):
    (root / "params").mkdir(exist_ok=True)
    (root / "params" / "paper_reference.yaml").write_text(yaml.safe_dump(reference, allow_unicode=True))
    (root / "data" / "derived").mkdir(parents=True, exist_ok=True)
    for name, document in metrics.items():
        (root / "data" / "derived" / name).write_text(json.dumps(document))
    return ProjectPaths(root)


@pytest.fixture
def tree(tmp_path):
    return _write(tmp_path)


@pytest.fixture
def rows(tree):
    reference = report.load_reference(tree.paper_reference)
    return report.collect(reference, tree.derived, pipeline=_always).set_index("id")


# --- bands --------------------------------------------------------------------------------------------------------

def test_bands_exact_ratio_and_abs():
    assert Band(exact=True).holds(83, 83) and not Band(exact=True).holds(83, 84)
    ratio = Band(ratio=(0.5, 2.0), why="w")
    assert ratio.holds(4.0, 2.0) and ratio.holds(4.0, 8.0) and not ratio.holds(4.0, 8.1) and not ratio.holds(4, 1.9)
    absolute = Band(abs=0.5, why="w")
    assert absolute.holds(1.0, 1.5) and absolute.holds(1.0, 0.5) and not absolute.holds(1.0, 1.51)
    assert Band(name="t", ratio=(0.5, 2.0), why="w").describe("µs") == "×0.5–2 (t)"
    assert absolute.describe("ms") == "±0.5 ms"


# --- verdicts -----------------------------------------------------------------------------------------------------

def test_inside_the_band_is_reproduced_and_names_the_backend(rows):
    row = rows.loc["a"]
    assert (row["paper"], row["here"], row["ratio"], row["verdict"]) == (4.0, 6.0, 1.5, "reproduced")
    assert "library differs: paper liboqs, here openssl (liboqs absent on this machine)" in row["why"]
    assert row["produced_by"] == "costs (openssl)"
    assert rows.loc["e", "verdict"] == "reproduced"


def test_outside_the_band_differs_with_the_rows_note(rows):
    assert rows.loc["d", "verdict"] == "differs"
    assert rows.loc["d", "why"].startswith("the disk differs")


def test_exact_row_without_note_differs_saying_so(tree):
    reference = copy.deepcopy(REFERENCE)
    reference["quantities"][4]["value"] = 84
    _write(tree.root, reference)
    table = report.collect(report.load_reference(tree.paper_reference), tree.derived, pipeline=_always)
    row = table.set_index("id").loc["e"]
    assert row["verdict"] == "differs" and "exact by construction, yet here 83 ≠ paper 84" in row["why"]


def test_missing_values_say_why(rows):
    assert rows.loc["b", "verdict"] == "not run here"
    assert "has no `absent` under `table1` (present: far, op)" in rows.loc["b", "why"]
    assert rows.loc["c", "verdict"] == "not run here"
    assert "other.json missing: stage `later` has not run" in rows.loc["c", "why"]
    assert pd.isna(rows.loc["b", "here"]) and pd.isna(rows.loc["c", "here"])


def test_a_stage_not_in_the_pipeline_is_an_open_item(tree):
    reference = report.load_reference(tree.paper_reference)
    table = report.collect(reference, tree.derived, pipeline=lambda stage: stage != "later").set_index("id")
    assert "stage `later` is not in this pipeline yet" in table.loc["c", "why"]


def test_absent_library_is_named_instead_of_a_blank(rows):
    row = rows.loc["f"]
    assert row["verdict"] == "not run here"
    assert "liboqs absent on this machine (no liboqs shared library); timed here on openssl, pqcrypto" in row["why"]
    assert row["produced_by"] == "costs (no liboqs)"


def test_no_completed_handshake_shows_failure_rate_and_message(rows):
    row = rows.loc["g"]
    assert row["verdict"] == "differs" and pd.isna(row["here"])
    assert row["why"] == "no value: 100% of handshakes failed, in Sigma2"


def test_null_value_without_failures_differs_saying_the_stage_wrote_none(rows):
    assert rows.loc["j", "verdict"] == "differs"
    assert "wrote no value (`paper.ratio_min` is null)" in rows.loc["j", "why"]


def test_model_variants_are_sensitivities_not_mismatches(rows):
    row = rows.loc["h"]
    assert row["verdict"] == "sensitivity"
    assert row["why"].startswith("variant source_accurate: outside the band of the paper's model")
    assert "25% of handshakes failed, in Sigma3; the value is over the completed ones" in row["why"]


def test_zero_paper_value_with_an_absolute_band(rows):
    assert rows.loc["i", "verdict"] == "reproduced" and pd.isna(rows.loc["i", "ratio"])


# --- schema -------------------------------------------------------------------------------------------------------

def _broken(tree, change):
    reference = copy.deepcopy(REFERENCE)
    change(reference)
    tree.paper_reference.write_text(yaml.safe_dump(reference, allow_unicode=True))
    with pytest.raises(ParamsError) as failure:
        report.load_reference(tree.paper_reference)
    return str(failure.value)


def test_unknown_band_key_is_rejected_naming_the_row(tree):
    message = _broken(tree, lambda r: r["quantities"][3].update(band={"ratio": [0.5, 2], "why": "w", "colour": 1}))
    assert "(id d)" in message and "band.colour" in message


@pytest.mark.parametrize(("band", "expected"), [
    ({"exact": True, "abs": 1, "why": "w"}, "exactly one of exact, ratio, abs"),
    ({}, "exactly one of exact, ratio, abs"),
    ({"ratio": [1.2, 2], "why": "w"}, "0 < lo <= 1 <= hi"),
    ({"abs": -1, "why": "w"}, "greater than or equal to 0"),
    ({"ratio": [0.5, 2]}, "needs a why"),
    ({"exact": False}, "exact"),
])
def test_bad_bands_are_rejected_naming_the_row(tree, band, expected):
    message = _broken(tree, lambda r: r["quantities"][1].update(band=band))
    assert "(id b)" in message and expected in message


def test_missing_band_is_rejected_naming_the_row(tree):
    message = _broken(tree, lambda r: r["quantities"][4].pop("band"))
    assert "(id e)" in message and "band" in message


def test_ratio_band_needs_a_nonzero_paper_value(tree):
    message = _broken(tree, lambda r: r["quantities"][8].update(band=TIMING))
    assert "(id i)" in message and "non-zero" in message


def test_named_band_must_match_the_bands_block(tree):
    message = _broken(tree, lambda r: r["quantities"][0].update(band=dict(TIMING, ratio=[0.1, 10])))
    assert "(id a)" in message and "'timing'" in message


def test_unknown_fields_stages_and_files_are_rejected(tree):
    assert "colour" in _broken(tree, lambda r: r["quantities"][0].update(colour="red"))
    assert "(id a)" in _broken(tree, lambda r: r["quantities"][0].update(metric="nowhere.json:x"))
    assert "unknown stage" in _broken(tree, lambda r: r["coverage"][0].update(stage="nope"))
    assert "(id cov.t1)" in _broken(tree, lambda r: r["coverage"][0].update(outputs=["../outside"]))
    assert "duplicate id" in _broken(tree, lambda r: r["quantities"].append(r["quantities"][0]))
    assert "needs a note" in _broken(tree, lambda r: r["coverage"][2].pop("note"))


# --- coverage -----------------------------------------------------------------------------------------------------

def test_coverage_checks_the_output_files(tree):
    reference = report.load_reference(tree.paper_reference)
    table = report.collect(reference, tree.derived, pipeline=_always)
    figs = tree.root / "paper_figs" / "amort"
    figs.mkdir(parents=True)

    def statuses(pipeline=_always):
        frame = cov.coverage_table(reference, table, tree.root, pipeline).set_index("id")
        return frame["status"].to_dict(), frame

    state, _ = statuses()
    assert state == {"cov.t1": "not run here", "cov.t2": "not run here", "cov.fig1": "illustration"}
    (figs / "table1_costs.md").write_text("x")  # a bare stem counts when any stem.* exists
    state, frame = statuses(lambda stage: stage != "later")
    assert state["cov.t1"] == "reproduced" and state["cov.t2"] == "open"
    assert "stage `later` is not in this pipeline yet" in frame.loc["cov.t2", "detail"]
    assert frame.loc["cov.t1", "rows"] == "1 reproduced, 1 not run here"
    assert not cov.output_exists(tree.root, "paper_figs/amort/table1_costs.csv")


def test_build_writes_markdown_with_header_sections_and_no_timestamp(tree):
    from pqlab.studies import report as report_stage

    result = report_stage.run(None, tree)
    text = tree.report.read_text()
    assert text == result.data["markdown"]
    assert "Profile: **quick**" in text and "Machine of the measured stages: **Test CPU** (costs)" in text
    assert ("| `costs` | measurement | `m.json` | quick | calls: 300–3,000 "
            "| Test CPU (cpu_count = 2; platform = Linux) |") in text
    assert "## What differs and why" in text and "- `m.json:cpu_model` = Test CPU" in text
    assert "- `other.json`: not run yet (stage `later` is not in this pipeline yet" in text
    assert "## Coverage: every table and figure of both papers" in text
    assert "| op — Median | Table I | 4 | 6 | 1.5× | µs | ×0.5–2 (timing) | reproduced |" in text
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text)  # the time of the build is in report_run.json only
    run = read_json(tree.derived / "report_run.json")
    assert "timestamp_utc" in run and run["rows"] == len(REFERENCE["quantities"])
    again = report_stage.run(None, tree)
    assert again.data["markdown"] == text


# --- the repo's own reference file ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def repo_reference(repo_root):
    return report.load_reference(repo_root / "params" / "paper_reference.yaml")


def _synthetic_metrics(reference, root):
    """A metrics tree for the repo's reference: every other file present; in those, values at the paper's value,
    a tenth of the keys absent, and for a few transport times no value but a failure rate (as a failed scenario)."""
    files = sorted({q.metrics_file for q in reference.quantities})
    sensitivity_files = {q.metrics_file for q in reference.quantities if q.sensitivity}
    documents: dict[str, dict] = {name: {"profile": "smoke", "cpu_model": "Synthetic CPU"}
                                  for i, name in enumerate(files) if i % 2 == 0 or name in sensitivity_files}
    for i, q in enumerate(reference.quantities):
        document = documents.get(q.metrics_file)
        if document is None or i % 10 == 3:
            continue
        *parents, leaf = q.key.split(".")
        node = document
        for part in parents:
            node = node.setdefault(part, {})
        if leaf.endswith("_s") and i % 3 == 0:
            node[leaf] = None
            node[leaf.rsplit("_", 1)[0] + "_failure_rate"] = 1.0
            node[leaf.rsplit("_", 1)[0] + "_failed_in"] = "Sigma2"
        else:
            node[leaf] = q.value * (1.0 if i % 4 else 3.0)
    derived = root / "data" / "derived"
    derived.mkdir(parents=True)
    for name, document in documents.items():
        (derived / name).write_text(json.dumps(document))
    return derived


def test_repo_reference_every_row_has_a_verdict_and_no_unexplained_blank(repo_reference, tmp_path):
    derived = _synthetic_metrics(repo_reference, tmp_path)
    table = report.collect(repo_reference, derived)
    assert len(table) == len(repo_reference.quantities) and set(table["verdict"]) <= VERDICTS
    assert {"reproduced", "differs", "not run here", "sensitivity"} <= set(table["verdict"])
    blank = table[table["here"].isna()]
    assert not blank.empty and (blank["verdict"] != "reproduced").all()
    assert blank["why"].str.strip().str.len().gt(10).all(), blank[["id", "why"]]
    assert table[table["verdict"] == "differs"]["why"].str.len().gt(10).all()
    coverage = report.coverage_table(repo_reference, table, tmp_path)
    text = report.render(repo_reference, table, report.MetricsTree(derived), coverage)
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert all(cells), line


def test_repo_reference_rows_and_coverage(repo_reference):
    ids = [q.id for q in repo_reference.quantities]
    assert len(set(ids)) == len(ids)
    assert all(q.band.name in repo_reference.bands for q in repo_reference.quantities)
    # every coverage item's rows match some row, except items of stages not built yet
    for item in repo_reference.coverage:
        if item.stage is not None and not report.in_pipeline(item.stage):
            continue
        for pattern in item.rows:
            assert any(re.fullmatch(pattern.replace(".", r"\.").replace("*", ".*").replace("?", "."), i)
                       for i in ids), (item.id, pattern)
    covered = {(c.paper, c.item.split(" (")[0].split(",")[0]) for c in repo_reference.coverage}
    for paper, items in {"amort": ["Table I", "Table II", "Table III", "Table IV", "Table V", "Table VI", "Fig. 1",
                                   "Fig. 2", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Eq. 1", "Abstract"],
                         "case": ["Table I", "Table II", "Fig. 1", "Fig. 2", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6",
                                  "§V text", "§VI text", "§VII text", "Abstract"]}.items():
        for item in items:
            assert (paper, item) in covered, (paper, item)


def test_coverage_outputs_are_what_the_pipeline_writes(repo_reference, repo_root):
    """A coverage item of a stage in dvc.yaml points at files that stage declares (or at files in the repo)."""
    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    for name, spec in repo_reference.stages.items():
        if name in stages:
            # the full metrics file is an uncached out; `metrics:` holds the compact <stage>_headline.json
            declared = {next(iter(m)) if isinstance(m, dict) else m
                        for m in stages[name].get("outs", []) + stages[name].get("metrics", [])}
            assert f"data/derived/{spec.metrics}" in declared, name
    for item in repo_reference.coverage:
        for output in item.outputs:
            if item.stage in stages and item.kind == "result":
                declared = [next(iter(o)) if isinstance(o, dict) else o
                            for o in stages[item.stage].get("outs", []) + stages[item.stage].get("metrics", [])]
                assert any(d == output or d.startswith(output + ".") for d in declared), (item.id, output)
            elif item.stage in stages:
                assert (repo_root / output).exists(), (item.id, output)
            else:
                assert output.startswith(("paper_figs/", "data/derived/", "docs/")), (item.id, output)
