"""Figures of stage ``attack_matrix``: the outcome and time of every case (AMORT-V1 Appendix A)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style


def attack_matrix_overview(frame: pd.DataFrame) -> plt.Figure:
    """Appendix A: per-case outcome (pass ✓ / fail ✗) and scenario run time, coloured by class."""
    style.apply()
    colours = {"C": "#b2182b", "D": "#5e3c99", "S": "#e08214", "P": "#1a9850"}
    data = frame.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(max(7.5, 0.2 * len(data)), 3.2))
    x = np.arange(len(data))
    ax.bar(x, data["median_ms"], color=[colours.get(c, "grey") for c in data["class"]], edgecolor="black",
           linewidth=0.4, zorder=2)
    for xi, (ms, ok) in enumerate(zip(data["median_ms"], data["pass"], strict=True)):
        ax.text(xi, ms * 1.15, "✓" if ok else "✗", ha="center", va="bottom", fontsize=7,
                color="black" if ok else "red")
    ax.set_yscale("log")
    ax.set_ylim(top=float(data["median_ms"].max()) * 4)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(plt.NullFormatter())
    if "table" in data:
        extra = np.flatnonzero(data["table"].to_numpy() != "table6")
        if len(extra):
            ax.axvline(extra[0] - 0.5, color="black", linewidth=0.8, linestyle="--")
            ax.text(extra[0] - 0.3, 0.97, "beyond the paper →", transform=ax.get_xaxis_transform(), fontsize=7,
                    va="top")
    ax.set_xticks(x, data["case"], rotation=90, fontsize=7)
    ax.set_ylabel("scenario time (ms, log)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    ax.legend(handles, ["cryptographic", "decoder", "semantic", "positive control"], fontsize=7, ncol=4,
              loc="upper left")
    ax.set_title(f"Attack matrix: {int(data['pass'].sum())}/{len(data)} cases as expected", fontsize=9)
    fig.tight_layout()
    return fig


def attack_matrix_variants(table: pd.DataFrame) -> plt.Figure:
    """Attack × variant → observed code: every case under the paper's design and the hardened variant; red where the
    adversary gets what it wants, green where the case is refused as expected (or a control passes)."""
    style.apply()
    data = table.reset_index(drop=True)
    variants = ("paper", "hardened")
    fig, ax = plt.subplots(figsize=(7.2, 0.17 * len(data) + 1.2))
    for row, case in data.iterrows():
        for col, variant in enumerate(variants):
            succeeded = case[f"attack succeeds ({variant})"]
            as_expected = case[variant] == case[f"expected {variant}"]
            colour = "#d73027" if succeeded is True else "#1a9850" if as_expected else "#fdae61"
            ax.add_patch(plt.Rectangle((col, row), 0.96, 0.9, color=colour, alpha=0.85, linewidth=0))
            ax.text(col + 0.48, row + 0.45, case[variant].split(" (")[0], ha="center", va="center", fontsize=5.5,
                    color="white" if succeeded is True else "black")
    ax.set_xlim(0, len(variants))
    ax.set_ylim(len(data), 0)
    ax.set_xticks([0.48, 1.48], ["paper (the design as published)", "hardened (docs/protocol.md)"], fontsize=7)
    ax.xaxis.tick_top()
    labels = [f"{c} {a[:58]}{'…' if len(a) > 58 else ''}" for c, a in zip(data["case"], data["adversary action"],
                                                                        strict=True)]
    ax.set_yticks(np.arange(len(data)) + 0.45, labels, fontsize=5.5)
    for boundary in np.flatnonzero(data["table"].to_numpy()[1:] != data["table"].to_numpy()[:-1]) + 1:
        ax.axhline(boundary - 0.05, color="black", linewidth=0.8)
    ax.tick_params(length=0)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    succeeded = {v: int(data[f"attack succeeds ({v})"].fillna(False).astype(bool).sum()) for v in variants}
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("#1a9850", "#d73027", "#fdae61")]
    ax.legend(handles, ["refused as expected / control passes", "attack succeeds", "not the expected code"],
              fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.35, -0.005), frameon=False)
    ax.set_title(f"Table VI, extra cases and issue 27 (N01–N16) under both variants: attacks succeeding — "
                 f"paper {succeeded['paper']}, hardened {succeeded['hardened']}", fontsize=8)
    fig.tight_layout()
    return fig
