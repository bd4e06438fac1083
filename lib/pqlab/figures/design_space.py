"""Figures of stage ``design_space``: Fig. 6 (PQ-CASE §VIII), bytes against device computation."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab.figures import style

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
