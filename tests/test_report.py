"""REPORT.md: the paper column comes from the reference file, the here column from metrics files."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from pqlab import report
from pqlab.errors import ParamsError
from pqlab.paths import ProjectPaths

REFERENCE = {
    "papers": {"amort": {"title": "T", "source": "S", "machine": "Pi"}},
    "quantities": [
        {"id": "a", "paper": "amort", "where": "Table I", "row": "op", "column": "Median", "value": 4.0,
         "unit": "µs", "metric": "m.json:table1.op.median_us", "paper_library": "liboqs"},
        {"id": "b", "paper": "amort", "where": "Table I", "row": "absent", "column": "Median", "value": 1.0,
         "unit": "µs", "metric": "m.json:table1.absent.median_us"},
        {"id": "c", "paper": "amort", "where": "Table II", "row": "later", "column": "x", "value": 1.0,
         "unit": "µs", "metric": "other.json:x"},
    ],
}


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "paper_reference.yaml").write_text(yaml.safe_dump(REFERENCE, allow_unicode=True))
    (tmp_path / "data" / "derived").mkdir(parents=True)
    (tmp_path / "data" / "derived" / "m.json").write_text(json.dumps(
        {"cpu_model": "Test CPU", "table1": {"op": {"median_us": 6.0, "backend": "openssl"}}}))
    return ProjectPaths(tmp_path)


def test_rows_carry_paper_here_ratio_and_notes(tree):
    reference = report.load_reference(tree.paper_reference)
    table = report.collect(reference, tree.derived).set_index("quantity")
    row = table.loc["op — Median"]
    assert (row["paper"], row["here"], row["ratio"]) == (4.0, 6.0, 1.5)
    assert row["machine"] == "Test CPU"
    assert "paper liboqs, here openssl" in row["note"]
    assert pd.isna(table.loc["absent — Median"]["here"])
    assert "no value in this run's metrics" in table.loc["absent — Median"]["note"]
    assert "not measured" not in table.loc["absent — Median"]["note"]
    assert "not run yet" in table.loc["later — x"]["note"]


def test_build_writes_markdown(tree):
    from pqlab.studies import report as report_stage

    result = report_stage.run(None, tree)
    text = tree.report.read_text()
    assert "| op — Median | Table I | 4 | 6 | 1.5× | µs | Test CPU |" in text
    assert "| absent — Median | Table I | 1 | — | — |" in text
    assert text == result.data["markdown"]
    assert "timestamp_utc" in json.loads((tree.derived / "report_run.json").read_text())


def test_reference_with_unknown_field_is_rejected(tree):
    broken = dict(REFERENCE, quantities=[dict(REFERENCE["quantities"][0], colour="red")])
    tree.paper_reference.write_text(yaml.safe_dump(broken, allow_unicode=True))
    with pytest.raises(ParamsError, match="colour"):
        report.load_reference(tree.paper_reference)


def test_repo_reference_file_is_valid(repo_root):
    reference = report.load_reference(repo_root / "params" / "paper_reference.yaml")
    assert len({q.id for q in reference.quantities}) == len(reference.quantities)
    assert all(q.paper in reference.papers for q in reference.quantities)
