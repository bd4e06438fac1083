"""The shared figure style (studies save figures through ``pqlab.pipeline.outputs.OutputSet``)."""

from __future__ import annotations

import seaborn as sns

FREQUENCY_COLOURS = {"per report": "#e08214", "per epoch": "#5e3c99", "per checkpoint": "#b2182b"}


def apply() -> None:
    """Seaborn's paper context with a light grid, used by every figure."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
