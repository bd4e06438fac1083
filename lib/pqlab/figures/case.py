"""PQ-CASE figures."""

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


FAMILY_COLOURS = {
    "FIPS 203/204/205 only": "#2166ac", "adds Falcon-512": "#1b7837",
    "uses MAYO, SNOVA or UOV": "#f4a582", "ECDSA in the chain": "#bababa",
}


def fig6_design_space(space: pd.DataFrame, pareto: pd.DataFrame) -> plt.Figure:
    """Fig. 6: handshake bytes against responder PQ computation for every point; Pareto points outlined.

    Outlined and lettered: the fronts restricted to FIPS 203/204/205 and to FIPS + Falcon-512
    (identical points overlap).
    """
    style.apply()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for family, colour in reversed(FAMILY_COLOURS.items()):  # FIPS-only points drawn last, on top
        part = space[space["family"] == family]
        ax.scatter(part["device_ms"], part["total"] / 1000, s=9, color=colour, alpha=0.55, linewidths=0,
                   label=f"{family} ({len(part)})", zorder=2)
    marked = pareto[pareto["restriction"].isin(["fips", "fips_falcon"])].drop_duplicates(["total", "device_ms"])
    marked = marked.sort_values(["restriction", "device_ms"], key=lambda c: c.map({"fips": 0, "fips_falcon": 1})
                                if c.name == "restriction" else c)
    for index, (letter, row) in enumerate(zip("abcdefghijklmnopqrstuvwxyz", marked.itertuples(), strict=False)):
        ax.scatter([row.device_ms], [row.total / 1000], s=60, facecolors="none", edgecolors="black", linewidths=1.4,
                   zorder=3)
        ax.annotate(f"({letter}) {row.total / 1000:.1f} kB, {row.device_ms:.0f} ms", (row.device_ms, row.total / 1000),
                    xytext=(8, 10 if index % 2 == 0 else -14), textcoords="offset points", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}, zorder=4)
    ax.set_xscale("log")
    ax.set_xlabel("responder PQ computation [ms at 64 MHz]")
    ax.set_ylabel("handshake bytes [kB]")
    ax.set_ylim(bottom=0)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], fontsize=7, loc="upper left", markerscale=2)
    ax.set_title(f"{len(space):,} design points; outlined: Pareto-optimal (FIPS only, + Falcon-512)", fontsize=9)
    fig.tight_layout()
    return fig
