"""Figures of stage ``costs``: Fig. 2 (AMORT-V1 §V-C) and the per-trial cost distributions."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from pqlab.figures import style


def _format_us(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.3g} µs"


def _mark_groups(ax: plt.Axes, frequencies: list[str]) -> None:
    """Dashed separators between frequency groups, with the group name above each."""
    start = 0
    for index in range(1, len(frequencies) + 1):
        if index == len(frequencies) or frequencies[index] != frequencies[start]:
            ax.text((start + index - 1) / 2, 1.01, frequencies[start], transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=8, style="italic")
            if index < len(frequencies):
                ax.axvline(index - 0.5, color="grey", linestyle="--", linewidth=0.8)
            start = index


def fig2_costs(table1_stats: pd.DataFrame, machine: str) -> plt.Figure:
    """Fig. 2: median cost of each Table I operation (log scale), grouped per report / epoch / checkpoint.

    Bars are medians with their bootstrap CI; the tick marks the p99.
    """
    style.apply()
    data = table1_stats.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    x = np.arange(len(data))
    colours = [style.FREQUENCY_COLOURS.get(f, "grey") for f in data["frequency"]]
    ax.bar(x, data["median"], color=colours, edgecolor="black", linewidth=0.5, zorder=2)
    errors = np.vstack([data["median"] - data["median_lo"], data["median_hi"] - data["median"]])
    ax.errorbar(x, data["median"], yerr=errors, fmt="none", ecolor="black", capsize=3, zorder=3)
    ax.scatter(x, data["p99"], marker="_", s=300, color="black", zorder=4, label="p99")
    tops = np.maximum(data["p99"], data["median_hi"])
    for xi, median, top in zip(x, data["median"], tops, strict=True):
        ax.annotate(_format_us(median), (xi, top), textcoords="offset points", xytext=(0, 5),
                    ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(top=float(tops.max()) * 12)  # room for the value labels under the group names
    ax.set_ylabel("cost (µs, log)")
    _mark_groups(ax, list(data["frequency"]))
    labels = [f"{op}\n[{backend}]" for op, backend in zip(data["operation"], data["backend"], strict=True)]
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in style.FREQUENCY_COLOURS.values()]
    ax.legend([*handles, ax.collections[-1]], [*style.FREQUENCY_COLOURS, "p99"], loc="upper left", fontsize=8)
    ax.set_title(f"AMORT-V1 operation costs (median, bootstrap CI) — {machine}", fontsize=9, pad=16)
    fig.tight_layout()
    return fig


def cost_distributions(raw: pd.DataFrame) -> plt.Figure:
    """Empirical CDF of the per-call cost of each Table I operation, one line per trial (log x)."""
    style.apply()
    data = raw[raw["in_table1"]].assign(us=lambda d: d["net_ns"].clip(lower=1.0) / 1000.0)
    grid = sns.FacetGrid(data, col="operation", hue="trial", col_wrap=4, sharex=False, height=2.2, aspect=1.3)
    grid.map_dataframe(sns.ecdfplot, x="us", log_scale=True)
    grid.set_titles("{col_name}", size=8)
    grid.set_axis_labels("µs per call (log)", "ECDF")
    grid.add_legend(title="trial")
    return grid.figure
