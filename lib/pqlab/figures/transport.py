"""Figures of stage ``transport``: PQ-CASE Fig. 2, handshake time by transport vs hops (a: drop-in, b: smallest),
spurious retransmissions (c)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from pqlab.figures import style

TRANSPORT_STYLE = {
    "ipv6": ("IPv6 fragmentation", "o", "#d95f02"),
    "pull": ("Pull segmentation", "s", "#7570b3"),
    "block": ("Block transfer", "^", "#1b9e77"),
    "datagram": ("Classical (one datagram)", "D", "#666666"),
}
LOSS_LABELS = {"none": "No interference", "light_wifi": "Light Wi-Fi", "heavy_wifi": "Heavy Wi-Fi",
               "iid_15": "15% i.i.d. loss"}


def _times(ax: plt.Axes, summary: pd.DataFrame, configs: list[str], title: str, loss: str,
           hops: list[int]) -> None:
    for config in configs:
        rows = summary[(summary["config"] == config) & (summary["loss"] == loss) & ~summary["sleepy"]]
        for transport, (label, marker, colour) in TRANSPORT_STYLE.items():
            group = rows[rows["transport"] == transport]
            if group.empty:
                continue
            group = group.sort_values("hops")
            lower = (group["median_s"] - group["median_lo_s"]).clip(lower=0)
            upper = (group["p90_s"] - group["median_s"]).clip(lower=0)
            ax.errorbar(group["hops"], group["median_s"], yerr=[lower, upper], marker=marker, capsize=3, color=colour,
                        label=label if transport != "datagram" else f"{label}: {config}")
    ax.set_yscale("log")
    ax.set_xlabel("Thread hops")
    ax.set_xticks(hops)
    ax.set_title(title, fontsize=9)


def fig2_transport(summary: pd.DataFrame, drop_in: str, smallest: str, classical: str, *,
                   interference: str = "heavy_wifi") -> plt.Figure:
    """Medians (CI whisker below, 90th percentile above) under ``interference``, always-on device."""
    style.apply()
    hops = sorted(int(h) for h in summary["hops"].unique())
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    _times(axes[0], summary, [drop_in, classical], f"(a) {drop_in}", interference, hops)
    _times(axes[1], summary, [smallest, classical], f"(b) {smallest}", interference, hops)
    axes[0].set_ylabel("Handshake time [s]")
    axes[0].legend(fontsize=7)
    spur = summary[(summary["config"] == drop_in) & (summary["transport"] == "ipv6") & ~summary["sleepy"]]
    for loss in LOSS_LABELS:
        group = spur[spur["loss"] == loss].sort_values("hops")
        if group.empty:
            continue
        axes[2].plot(group["hops"], group["mean_spurious"], marker="o", label=LOSS_LABELS.get(loss, loss))
    axes[2].set_xlabel("Thread hops")
    axes[2].set_xticks(hops)
    axes[2].set_ylabel("Spurious retransmissions")
    axes[2].set_title(f"(c) {drop_in} with IPv6 fragmentation", fontsize=9)
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig
