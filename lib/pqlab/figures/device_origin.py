"""Figures of stage ``device_origin``: Fig. 5, cold-auditor cost per report by audit level against k."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab.figures import style

# Fig. 5's series in the paper's legend order, with their line styles.
SERIES = {
    "chain_independent": ("(b) chain, independent traversal", "#b2182b", "o", "-"),
    "chain_in_order": ("(b) chain, in-order traversal", "#e08214", "s", "-"),
    "mac_recheck": ("(b) MAC recheck", "#5e3c99", "^", "-"),
    "log_only": ("(a) log only", "#2166ac", "D", "-"),
    "device_signature": ("(c) device signature", "#1b7837", "v", "-"),
    "origin_in_order": ("(b) full verify_origin, in order", "grey", ".", "--"),
}


def fig5_auditor(auditor: pd.DataFrame, machine: str) -> plt.Figure:
    """Median µs per report (band: min–max over trials and repetitions) of each audit level against k."""
    style.apply()
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for component, (label, colour, marker, line) in SERIES.items():
        data = auditor[auditor["component"] == component].groupby("k")["us_per_report"]
        summary = data.agg(["median", "min", "max"]).reset_index()
        if summary.empty:
            continue
        ax.plot(summary["k"], summary["median"], marker=marker, linestyle=line, color=colour, label=label)
        ax.fill_between(summary["k"], summary["min"], summary["max"], color=colour, alpha=0.15, linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("checkpoint interval k (reports of one device per checkpoint)")
    ax.set_ylabel("auditor cost (µs per report, log)")
    ax.set_title(f"Cold-auditor verification cost per report — {machine}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig
