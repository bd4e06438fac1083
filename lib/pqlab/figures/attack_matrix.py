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
