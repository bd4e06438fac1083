"""REPORT.md's content: every published value beside this run's, with a verdict and its reason (no I/O but reading).

``schema`` validates ``params/paper_reference.yaml``; ``metrics`` reads a run's metrics files; ``verdicts`` judges
each row against its band; ``coverage`` checks which outputs of each paper item exist; ``render`` writes markdown.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pqlab.report.coverage import coverage_table
from pqlab.report.metrics import MetricsTree, _lookup
from pqlab.report.render import render
from pqlab.report.schema import Band, CoverageItem, Difference, Quantity, Reference, Stage, load_reference
from pqlab.report.verdicts import Outcome, Verdict, collect, in_pipeline, judge


def build(reference: Reference, root: Path) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """REPORT.md's text, its rows and its coverage table for the project at ``root``."""
    tree = MetricsTree(root / "data" / "derived")
    table = collect(reference, tree)
    coverage = coverage_table(reference, table, root)
    return render(reference, table, tree, coverage), table, coverage


__all__ = ["Band", "CoverageItem", "Difference", "MetricsTree", "Outcome", "Quantity", "Reference", "Stage",
           "Verdict", "_lookup", "build", "collect", "coverage_table", "in_pipeline", "judge", "load_reference",
           "render"]
