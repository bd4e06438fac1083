"""Figure of stage ``assumptions``: the transport headlines under each unstated assumption, beside the ceiling
that Eq. 2's spurious-retransmission counts put on the IPv6/block ratio (the slack bound)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style


def fig_assumptions(table: pd.DataFrame, bound: pd.DataFrame, *, config: str, ratio_hops: list[int],
                    runs: int) -> plt.Figure:
    """(a) IPv6/block ratio range at ``ratio_hops`` per assumption set, with the ratio ceiling; (b) spurious
    retransmissions at 2 and 4 hops (no interference) with Eq. 2's counts; (c) the ratio without interference
    against hops with the ceiling by hops; (d) 4-hop completion under interference and sleepy-device failures."""
    style.apply()
    fig, axes = plt.subplots(2, 2, figsize=(13, 8.5), layout="constrained")
    sets = list(table["set"])
    y = np.arange(len(sets))
    est = bound[bound["ack_semantics"] == "estimated"].set_index("hops")
    far = max(ratio_hops)

    ax = axes[0, 0]
    ax.hlines(y, table["ratio_min"], table["ratio_max"], color="#1b9e77", linewidth=4)
    ax.scatter(table["ratio_min"], y, color="#1b9e77", zorder=3)
    ax.scatter(table["ratio_max"], y, color="#1b9e77", zorder=3)
    if far in est.index:
        ax.axvline(est.loc[far, "ratio_ceiling"], color="black", linestyle="--", linewidth=1,
                   label=f"ceiling with Eq. 2 counts, {far} hops")
        ax.legend(fontsize=7, loc="lower right")
    ax.set_yticks(y, sets, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"IPv6 / block median time, {config}, {'-'.join(map(str, ratio_hops))} hops, every loss scenario")
    ax.set_title("(a) IPv6 fragmentation / block transfer", fontsize=9)

    ax = axes[0, 1]
    for hops, marker, colour in ((2, "o", "#7570b3"), (4, "s", "#d95f02")):
        column = f"spurious_{hops}hop"
        if column in table:
            ax.scatter(table[column], y, marker=marker, color=colour, label=f"{hops} hops, simulated", zorder=3)
        if hops in est.index:
            ax.axvline(est.loc[hops, "eq2_expected_total"], color=colour, linestyle="--", linewidth=1,
                       label=f"{hops} hops, Eq. 2 per message")
    ax.set_yticks(y, sets, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("Spurious retransmissions per handshake (IPv6 fragmentation, no interference)")
    ax.set_title(f"(b) Spurious retransmissions, {config}", fontsize=9)
    ax.legend(fontsize=7)

    ax = axes[1, 0]
    hop_columns = sorted(int(c.removeprefix("ratio_").removesuffix("hop_none")) for c in table
                         if c.startswith("ratio_") and c.endswith("hop_none"))
    for row in table.itertuples():
        values = [getattr(row, f"ratio_{h}hop_none") for h in hop_columns]
        ax.plot(hop_columns, values, marker="o", linewidth=1, label=row.set)
    ax.plot(est.index, est["ratio_ceiling"], color="black", linestyle="--", linewidth=2,
            label="ceiling with Eq. 2 counts (estimated ACKs)")
    arrival = bound[bound["ack_semantics"] == "on_arrival"]
    ax.plot(arrival["hops"], arrival["ratio_ceiling"], color="black", linestyle=":", linewidth=2,
            label="ceiling with Eq. 2 counts (ACKs on arrival)")
    ax.set_xticks(hop_columns)
    ax.set_xlabel("Thread hops")
    ax.set_ylabel("IPv6 / block, no interference")
    ax.set_title("(c) Simulated ratio vs the slack bound", fontsize=9)
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))

    ax = axes[1, 1]
    width = 0.4
    ax.barh(y - width / 2, table["d3_4hop_heavy_ipv6_completion"].fillna(0.0), height=width, color="#d95f02",
            label=f"{config} 4 hops, interference: IPv6 handshakes completed")
    ax.barh(y + width / 2, table["sed_max_failure_rate"].fillna(0.0), height=width, color="#666666",
            label="sleepy device, IPv6, interference: largest failure rate")
    for i, row in enumerate(table.itertuples()):
        share = row.sed_failures_in_Sigma3
        note = f"{row.sed_scenarios_with_failures}/{row.sed_scenarios} scenarios fail" + (
            "" if share is None or np.isnan(share) else f"; {share * 100:.0f}% of failures in Sigma3")
        ax.text(0.01, i + width / 2, note, va="center", fontsize=6, color="white")
    ax.set_yticks(y, sets, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("Fraction of handshakes")
    ax.set_title("(d) Completion under interference; sleepy-device failures", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
    fig.suptitle(f"Unstated assumptions: {runs} runs per scenario", fontsize=9)
    return fig
