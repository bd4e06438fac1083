"""AMORT-V1 Fig. 6: scan response-time distributions of the control-cycle configurations against the deadline."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from pqlab.figures import style

MARKERS = (("p50_us", "o", "p50"), ("p99_us", "^", "p99"), ("p999_us", "s", "p99.9"), ("max_us", "x", "max"))


def fig6_scan(samples: pd.DataFrame, summary: pd.DataFrame, deadline_us: float, host: str) -> plt.Figure:
    """Response time from scheduled release to completion per configuration (log y), with the deadline; below, the
    response split into the scan's execution time (violins, scan + evidence) and the host's timer wake-up latency
    (p50 and p99 markers), so the cost evidence adds to a scan reads independently of the host's wake-up.

    Violins show each configuration's distribution; markers its p50, p99, p99.9 and maximum. ``host``
    names the machine: this is a Linux host, not a PLC.
    """
    style.apply()
    order = list(summary["configuration"])
    labels = dict(zip(summary["configuration"], summary["label"], strict=True))
    data = samples.assign(us=samples["response_ns"].clip(lower=1) / 1000.0,
                          configuration=samples["configuration"].astype(str))
    fig, (ax, split) = plt.subplots(2, 1, figsize=(max(7.5, 1.05 * len(order)), 7.2), sharex=True,
                                    gridspec_kw={"height_ratios": [1.25, 1.0]})
    sns.violinplot(data=data, x="configuration", y="us", order=order, log_scale=True, cut=0, density_norm="width",
                   inner=None, color="#c6dbef", linewidth=0.6, ax=ax)
    x = np.arange(len(order))
    for column, marker, name in MARKERS:
        ax.scatter(x, summary[column], marker=marker, s=28, color="black", zorder=4, label=name,
                   facecolors="none" if marker in "o^s" else None)
    for xi, (misses_here, top) in enumerate(zip(summary["deadline_misses"], summary["max_us"], strict=True)):
        if misses_here:
            ax.annotate(f"{misses_here} miss{'es' if misses_here > 1 else ''}", (xi, top), textcoords="offset points",
                        xytext=(0, 6), ha="center", va="bottom", fontsize=7, color="#b2182b")
    ax.axhline(deadline_us, color="#b2182b", linestyle="--", linewidth=1.2, label=f"deadline ({deadline_us:g} µs)")
    misses, cycles = int(summary["deadline_misses"].sum()), int(summary["cycles"].sum())
    ax.text(0.01, 0.97, f"{misses} deadline miss{'es' if misses != 1 else ''} across {cycles:,} cycles",
            transform=ax.transAxes, va="top", fontsize=9)
    ax.set_ylim(top=deadline_us * 4)
    ax.set_xlabel("")
    ax.set_ylabel("scan response time (µs, log)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    ax.set_title(f"Scan response time vs the deadline — Linux host ({host}), not a PLC", fontsize=9)
    execution = samples.assign(us=samples["execution_ns"].clip(lower=1) / 1000.0,
                               configuration=samples["configuration"].astype(str))
    sns.violinplot(data=execution, x="configuration", y="us", order=order, log_scale=True, cut=0,
                   density_norm="width", inner=None, color="#c7e9c0", linewidth=0.6, ax=split)
    split.scatter(x, summary["execution_p50_us"], marker="o", s=24, facecolors="none", color="black", zorder=4,
                  label="execution p50")
    split.scatter(x, summary["latency_p50_us"], marker="v", s=26, color="#6a51a3", zorder=4, label="wake-up p50")
    split.scatter(x, summary["latency_p99_us"], marker="^", s=26, facecolors="none", color="#6a51a3", zorder=4,
                  label="wake-up p99")
    split.set_xticks(x, [labels[c] for c in order], rotation=25, ha="right", fontsize=8)
    split.set_xlabel("")
    split.set_ylabel("µs, log")
    split.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    split.set_title("The response split: execution (scan + evidence, violins) and the host's timer wake-up latency",
                    fontsize=9)
    fig.tight_layout()
    return fig
