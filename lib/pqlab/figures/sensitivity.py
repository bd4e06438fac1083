"""Figures of stage ``sensitivity``: PQ-CASE Fig. 4 (a, b heat maps with the ratios in the cells; c timer
settings across hops) and Fig. 5 (pull segmentation vs segment size)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style


def _heat(ax: plt.Axes, table: pd.DataFrame, title: str) -> plt.cm.ScalarMappable:
    occupancy = sorted(table["occupancy_pct"].unique(), reverse=True)
    bursts = sorted(table["burst_ms"].unique())
    grid = np.full((len(occupancy), len(bursts)), np.nan)
    for row in table.itertuples():
        grid[occupancy.index(row.occupancy_pct), bursts.index(row.burst_ms)] = row.ratio
    finite = grid[np.isfinite(grid)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 2.0)
    ax.set_facecolor("#d9d9d9")  # cells without a ratio: no handshake of the numerator completed
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=vmin, vmax=max(vmax, vmin + 1e-6),
                      aspect="auto")
    for row in table.itertuples():
        i, j = occupancy.index(row.occupancy_pct), bursts.index(row.burst_ms)
        if np.isnan(row.ratio):
            label, colour = "none\ncompleted", "black"
        else:
            label = f"{row.ratio:.2f}"
            colour = "black" if (row.ratio - vmin) / max(vmax - vmin, 1e-9) > 0.55 else "white"
        if row.marked:
            label += f"*\n{row.failure_rate * 100:.0f}% fail"
        ax.text(j, i, label, ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(len(bursts)), [f"{b:g}" for b in bursts])
    ax.set_yticks(range(len(occupancy)), [f"{o:g}" for o in occupancy])
    ax.set_xlabel("Mean burst length [ms]")
    ax.set_title(title, fontsize=9)
    ax.grid(False)
    return image


def fig4_sensitivity(ipv6: pd.DataFrame, pull: pd.DataFrame, timers: pd.DataFrame, *, config: str, hops: int,
                     scenario: str, runs: int, threshold: float) -> plt.Figure:
    """Fig. 4: (a) IPv6 fragmentation / block and (b) pull segmentation / block at ``hops`` hops over interference
    occupancy and mean burst, numbers in the cells, * where success is below ``threshold`` (with the worse
    transport's failure rate); (c) IPv6 / block under ``scenario`` across hops for each (controller interval,
    device boost)."""
    style.apply()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), layout="constrained")
    for ax, table, name in ((axes[0], ipv6, "(a) IPv6 fragmentation"), (axes[1], pull, "(b) Pull segmentation")):
        image = _heat(ax, table, f"{name} / block, {config}, {hops} hops")
        fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02, label="Median time ratio to block")
    axes[0].set_ylabel("Time in interference burst [%]")
    ax = axes[2]
    for (interval, boost), group in timers.groupby(["controller_interval_ms", "device_boost_ms"]):
        group = group.sort_values("hops")
        label = f"{interval / 1000:g} s / {'none' if boost == 0 else f'{boost / 1000:g} s'}"
        line, = ax.plot(group["hops"], group["ratio"], marker="o", label=label)
        marked = group[group["marked"]]
        ax.scatter(marked["hops"], marked["ratio"], marker="*", s=90, color=line.get_color(), zorder=3)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(sorted(timers["hops"].unique()))
    ax.set_xlabel("Thread hops")
    ax.set_ylabel("Median time ratio to block")
    ax.set_title(f"(c) IPv6 / block, {config}, {scenario}", fontsize=9)
    ax.legend(fontsize=7, title="controller interval / device boost", title_fontsize=7)
    fig.supxlabel(f"{runs} runs per cell; * success below {threshold * 100:g} % (failure rate of the worse "
                  "transport shown); grey: no handshake of the numerator's transport completed", fontsize=7)
    return fig


def fig5_segment_size(segments: pd.DataFrame, *, reference: int, runs: int) -> plt.Figure:
    """Fig. 5: median handshake time with pull segmentation relative to ``reference``-byte segments."""
    style.apply()
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for label, group in segments.groupby("scenario_label", sort=False):
        group = group.sort_values("segment_payload")
        line, = ax.plot(group["segment_payload"], group["relative"], marker="o", label=label)
        marked = group[group["marked"]]
        ax.scatter(marked["segment_payload"], marked["relative"], marker="*", s=90, color=line.get_color(), zorder=3)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    sizes = sorted(segments["segment_payload"].unique())
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set_xlabel("Segment size [bytes]")
    ax.set_ylabel(f"Time relative to {reference} B")
    ax.set_title(f"Pull segmentation, {runs} runs per point", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
