"""AMORT-V1 §V-I: full-image measurement time, warm and cold, against one ML-DSA-65 signature."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style

COLOURS = {"warm": "#e08214", "cold": "#5e3c99"}


def full_image_times(samples: pd.DataFrame, sign_us: float | None, host: str) -> plt.Figure:
    """Each repetition's measurement time (points) and the median (bar) per condition, log scale.

    With ``sign_us`` a dashed line marks one ML-DSA-65 signature and each bar is labelled with its ratio.
    """
    style.apply()
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    conditions = [c for c in ("warm", "cold") if c in set(samples["condition"])]
    for x, condition in enumerate(conditions):
        seconds = samples.loc[samples["condition"] == condition, "seconds"].to_numpy()
        median = float(np.median(seconds))
        ax.bar(x, median, color=COLOURS[condition], edgecolor="black", linewidth=0.5, width=0.6, zorder=2)
        jitter = np.linspace(-0.15, 0.15, len(seconds)) if len(seconds) > 1 else np.zeros(1)
        ax.scatter(x + jitter, seconds, color="black", s=12, zorder=3)
        label = f"{median * 1e3:,.1f} ms"
        if sign_us:
            label += f"\n{median * 1e6 / sign_us:,.0f}× one signature"
        ax.annotate(label, (x, seconds.max()), textcoords="offset points", xytext=(0, 6), ha="center",
                    va="bottom", fontsize=8)
    if sign_us:
        ax.axhline(sign_us / 1e6, color="#b2182b", linestyle="--", linewidth=1.0,
                   label=f"one ML-DSA-65 signature ({sign_us:,.0f} µs)")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_yscale("log")
    top = samples["seconds"].max()
    bottom = min(float(samples["seconds"].min()), sign_us / 1e6 if sign_us else np.inf) / 3
    ax.set_ylim(bottom=bottom, top=top * 30)
    ax.set_xticks(range(len(conditions)), [f"{c} cache" for c in conditions])
    ax.set_ylabel("image measurement (s, log)")
    ax.set_title(f"Full-image measurement — {host}", fontsize=9)
    fig.tight_layout()
    return fig
