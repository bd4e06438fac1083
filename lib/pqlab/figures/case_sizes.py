"""Figures of stage ``case_sizes``: Fig. 1 (PQ-CASE §V), each Sigma message's payload per configuration."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style

MESSAGE_COLOURS = {"Sigma1": "#4393c3", "Sigma2": "#d6604d", "Sigma3": "#5aae61"}


def fig1_case_sizes(table: pd.DataFrame, limit: int) -> plt.Figure:
    """Fig. 1: each Sigma message's payload per configuration (log x), the limit dashed, totals on the right."""
    style.apply()
    data = table.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(6.5, 0.38 * len(data) + 1.2))
    y = np.arange(len(data))[::-1]
    height = 0.26
    for offset, (message, colour) in zip((height, 0.0, -height), MESSAGE_COLOURS.items(), strict=True):
        ax.barh(y + offset, data[message], height=height, color=colour, edgecolor="black", linewidth=0.3,
                label=message, zorder=2)
    ax.axvline(limit, color="black", linestyle="--", linewidth=1, zorder=3)
    ax.text(limit, -0.55, f" {limit:,} B limit", fontsize=8, va="bottom")
    ax.set_xscale("log")
    ax.set_xlim(100, data[list(MESSAGE_COLOURS)].to_numpy().max() * 1.3)
    ax.set_yticks(y, data["config"])
    ax.set_ylim(-0.6, len(data) - 0.1)
    ax.set_xlabel("message payload [bytes]")
    for yi, total in zip(y, data["Total"], strict=True):
        ax.annotate(f"{total / 1000:.1f}", (1.0, yi), xycoords=("axes fraction", "data"), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.annotate("total kB", (1.0, len(data) - 0.35), xycoords=("axes fraction", "data"), xytext=(4, 0),
                textcoords="offset points", va="bottom", fontsize=8)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncols=3, frameon=False)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
