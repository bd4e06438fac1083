"""The transport cross-check's figure: pqlab beside ns-3, handshakes and loss-free transfers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pqlab.figures import style

MARKERS = {1: "o", 2: "s", 3: "^", 4: "D"}


def fig_transport_crosscheck(compared: pd.DataFrame, transfers: pd.DataFrame, *, agreement_pct: float,
                             runs: int) -> Figure:
    """(a) median handshake time, pqlab against ns-3 on the chain, one point per scenario (±agreement band);
    (b) the same for loss-free single-message transfers, per topology; (c) ns-3's frames dropped on channel-access
    failure per handshake against pqlab / ns-3, which shows where the two part."""
    style.apply()
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    hand = compared[(compared["kind"] == "handshake") & (compared["topology"] == "chain")]
    losses = list(dict.fromkeys(hand["loss"]))
    colours = dict(zip(losses, plt.get_cmap("tab10").colors, strict=False))
    ax = axes[0]
    for row in hand.itertuples():
        if np.isfinite(row.pqlab_median_s) and np.isfinite(row.ns3_median_s):
            ax.scatter(row.ns3_median_s, row.pqlab_median_s, color=colours[row.loss],
                       marker=MARKERS.get(row.hops, "o"), s=30, alpha=0.8)
    _diagonal(ax, hand[["pqlab_median_s", "ns3_median_s"]].to_numpy(), agreement_pct)
    for loss, colour in colours.items():
        ax.scatter([], [], color=colour, label=loss)
    for hops, marker in MARKERS.items():
        ax.scatter([], [], color="grey", marker=marker, label=f"{hops} hop{'s' if hops > 1 else ''}")
    ax.legend(fontsize=7, loc="upper left")
    missing = int((~(np.isfinite(hand["pqlab_median_s"]) & np.isfinite(hand["ns3_median_s"]))).sum())
    ax.set(xscale="log", yscale="log", xlabel="ns-3 (chain), median s", ylabel="pqlab, median s",
           title=f"(a) handshakes, {runs} runs each (completed runs)")
    if missing:
        ax.text(0.98, 0.02, f"{missing} scenarios not drawn: no completed run in one simulator",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8)
    ax = axes[1]
    for topology, marker in (("chain", "o"), ("shared", "x")):
        part = transfers[transfers["topology"] == topology]
        ax.scatter(part["ns3_median_s"], part["pqlab_median_s"], marker=marker, label=f"ns-3 {topology}", s=30)
    _diagonal(ax, transfers[["pqlab_median_s", "ns3_median_s"]].to_numpy(), agreement_pct)
    ax.legend(fontsize=8, loc="upper left")
    ax.set(xscale="log", yscale="log", xlabel="ns-3, median s", ylabel="pqlab, median s",
           title="(b) loss-free single-message transfers (completed)")
    lost = int((transfers["ns3_failure_rate"] > 0).sum())
    if lost:
        ax.text(0.98, 0.02, f"{lost} rows where some ns-3 transfers never completed\n(a datagram dropped; no MRP)",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8)
    ax = axes[2]
    chain = compared[(compared["topology"] == "chain") & (compared["kind"] == "handshake")]
    if "ns3_cca_drops" in chain:
        for loss, colour in colours.items():
            part = chain[chain["loss"] == loss]
            ax.scatter(part["ns3_cca_drops"], part["ratio"], color=colour, label=loss, s=25)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xlim(left=0)
    ax.set(xscale="symlog", yscale="log", xlabel="ns-3: frames dropped on channel-access failure per handshake",
           ylabel="pqlab / ns-3 (median)", title="(c) where they part")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _diagonal(ax, values: np.ndarray, pct: float) -> None:
    finite = values[np.isfinite(values).all(axis=1)] if len(values) else values
    if not len(finite):
        return
    lo, hi = float(finite.min()) * 0.8, float(finite.max()) * 1.25
    xs = np.geomspace(lo, hi, 50)
    ax.plot(xs, xs, color="black", lw=0.8)
    ax.fill_between(xs, xs * (1 - pct / 100), xs * (1 + pct / 100), color="grey", alpha=0.2,
                    label=f"±{pct:g} %")
