"""What every study's ``run(settings, paths)`` returns to its notebook or command."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure


@dataclass
class StudyResult:
    """One stage's figures and tables (keyed by file stem), headline metrics, written files and extra frames."""

    stage: str
    figures: dict[str, Figure] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def figure(self) -> Figure:
        """The stage's first figure (most stages draw one)."""
        return next(iter(self.figures.values()))
