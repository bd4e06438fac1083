"""The shared figure style and an atomic PDF+PNG saver."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import seaborn as sns

from pqlab.io import write_with

FREQUENCY_COLOURS = {"per report": "#e08214", "per epoch": "#5e3c99", "per checkpoint": "#b2182b"}


def apply() -> None:
    """Seaborn's paper context with a light grid, used by every figure."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)


def save(fig: plt.Figure, stem: Path) -> list[Path]:
    """Write ``stem``.pdf and ``stem``.png atomically; returns both paths."""
    written = []
    for fmt in ("pdf", "png"):
        target = stem.with_suffix(f".{fmt}")
        written.append(write_with(target, lambda tmp, f=fmt: fig.savefig(tmp, format=f, dpi=200, bbox_inches="tight")))
    return written
