"""Run the cost-characterisation study end to end and write its outputs (raw, derived, Table I, Fig. 2)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import io, machine
from pqlab.bench import costs
from pqlab.figures.amort import fig2_costs
from pqlab.figures.style import save
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths


@dataclass
class CostsResult:
    """Everything the study produced, for the notebook to show."""

    raw: pd.DataFrame
    metadata: dict
    stats: pd.DataFrame
    table1: pd.DataFrame
    comparison: pd.DataFrame
    metrics: dict
    figure: plt.Figure
    written: list[Path]


def _markdown(frame: pd.DataFrame) -> str:
    """A markdown table with times to three decimals (p-values keep their significant digits)."""
    rounded = frame.copy()
    for column in rounded.select_dtypes("float").columns:
        if column != "p_value":
            rounded[column] = rounded[column].round(3)
    return rounded.to_markdown(index=False, floatfmt="g") + "\n"


def run(settings: StudyParams, paths: ProjectPaths, progress: bool = True) -> CostsResult:
    """Measure, summarise, plot and write every output; nothing is written until all measurements are done."""
    paths.check_writable(paths.raw, paths.derived, paths.amort_figs)
    raw, extra = costs.measure(settings, paths.raw, progress=progress)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"), backends=extra["backends"]) | extra
    stats = costs.summarise(raw, settings)
    comparison = costs.compare_backends(raw, settings.costs.comparison_signer)
    table = costs.table1(stats)
    headline = costs.metrics(stats, comparison, metadata) | {"cpu_model": metadata["cpu_model"],
                                                             "profile": settings.profile}
    figure = fig2_costs(stats[stats["in_table1"]], metadata["cpu_model"])

    written = [
        io.write_parquet(paths.raw / "costs.parquet", raw, metadata),
        io.write_parquet(paths.derived / "costs_stats.parquet", stats, metadata),
        io.write_parquet(paths.derived / "costs_backend_comparison.parquet", comparison, metadata),
        io.write_text(paths.amort_figs / "table1_costs.csv", table.to_csv(index=False)),
        io.write_text(paths.amort_figs / "table1_costs.md", _markdown(table)),
        io.write_text(paths.amort_figs / "table1_backend_comparison.csv", comparison.to_csv(index=False)),
        io.write_text(paths.amort_figs / "table1_backend_comparison.md", _markdown(comparison)),
        *save(figure, paths.amort_figs / "fig2_costs"),
        io.write_json(paths.derived / "costs_metrics.json", headline),
    ]
    plt.close(figure)  # saved; notebooks display the returned object once instead of twice
    return CostsResult(raw, metadata, stats, table, comparison, headline, figure, written)
