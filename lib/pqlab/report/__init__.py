"""REPORT.md's content: every published claim of both papers beside this run's data, judged by its kind.

``schema`` validates ``params/paper_reference.yaml``; ``metrics`` reads a run's metrics files through each stage's
typed model; ``verdicts`` judges each row (exact, claim, estimate, hardware); ``consistency`` checks the papers'
own numbers; ``coverage`` derives each table and figure's status from its rows; ``render`` writes markdown and
``rows_csv`` the machine-readable rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pqlab.pipeline.metrics.by_stage import stage_model
from pqlab.report.consistency import consistency_table
from pqlab.report.coverage import coverage_table
from pqlab.report.metrics import MetricsTree, _lookup
from pqlab.report.render import render
from pqlab.report.rows_csv import rows_csv
from pqlab.report.schema import (
    Consistency,
    CoverageItem,
    Difference,
    ModelLookup,
    Quantity,
    Reference,
    Stage,
    load_reference,
)
from pqlab.report.verdicts import Outcome, Verdict, collect, in_pipeline, judge


def metrics_tree(reference: Reference, root: Path, models: ModelLookup = stage_model) -> MetricsTree:
    """This run's metrics under ``root/data/derived``, each file read through its stage's typed model."""
    return MetricsTree(root / "data" / "derived", {s.metrics: name for name, s in reference.stages.items()}, models)


def build(reference: Reference, root: Path,
          models: ModelLookup = stage_model) -> tuple[str, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """REPORT.md's text, its rows, its coverage table and the consistency checks for the project at ``root``
    (``models``: stage -> its typed metrics model)."""
    tree = metrics_tree(reference, root, models)
    table = collect(reference, tree)
    coverage = coverage_table(reference, table, root)
    consistency = consistency_table(reference, tree)
    return render(reference, table, tree, coverage, consistency), table, coverage, consistency


__all__ = ["Consistency", "CoverageItem", "Difference", "MetricsTree", "Outcome", "Quantity", "Reference", "Stage",
           "Verdict", "_lookup", "build", "collect", "consistency_table", "coverage_table", "in_pipeline", "judge",
           "load_reference", "metrics_tree", "render", "rows_csv"]
