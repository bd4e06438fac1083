"""Figure of stage ``extended_design_space``: the design space with newer algorithms, and what enters its fronts."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.case import extended_space as ext
from pqlab.figures import style

FAMILY_COLOURS = {
    ext.FAMILY_FIPS: "#2166ac", ext.FAMILY_FALCON: "#1b7837", ext.FAMILY_HQC: "#762a83",
    ext.FAMILY_MSU: "#f4a582", ext.FAMILY_NEWER: "#d6604d", ext.FAMILY_CLASSICAL: "#878787",
}
PAPER_COLOUR = "#e3e3e3"
RESTRICTION_STYLE = {"all": ("black", "everything with a cycle count"), "nist_selected": ("#762a83", "NIST selections")}


def _short(algorithm: str) -> str:
    """A tick label: the family name, with UOV's variant (the only family with two variants here)."""
    return algorithm.removesuffix("-pkc") if algorithm.startswith("UOV") else algorithm.split("-")[0]


def _steps(front: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    ordered = front.sort_values("device_ms")
    return ordered["device_ms"].to_numpy(), ordered["total"].to_numpy() / 1000


def fig_extended_design_space(space: pd.DataFrame, fronts: pd.DataFrame) -> plt.Figure:
    """Left: every point with a known device cost (the paper's in grey, new ones by family), the fronts of the
    whole set (solid) and of the paper's points alone under the same rule (dashed), new front classes outlined and
    lettered. Right: the points kept off the fronts because an operation has no Cortex-M4 cycle count, by bytes."""
    style.apply()
    fig, (main, side) = plt.subplots(1, 2, figsize=(9.5, 5.2), gridspec_kw={"width_ratios": (4, 1.2)}, sharey=True)
    known = space[space["device_known"]]
    paper = known[known["in_paper_space"]]
    main.scatter(paper["device_ms"], paper["total"] / 1000, s=6, color=PAPER_COLOUR, linewidths=0, zorder=1,
                 label=f"the paper's points ({int(space['in_paper_space'].sum()):,})")
    new = known[~known["in_paper_space"]]
    for family, colour in FAMILY_COLOURS.items():
        part = new[new["family"] == family]
        if len(part):
            main.scatter(part["device_ms"], part["total"] / 1000, s=6, color=colour, alpha=0.5, linewidths=0,
                         zorder=2, label=f"new: {family} ({len(part):,})")
    paper_space = space[space["in_paper_space"]]
    for restriction, (colour, label) in RESTRICTION_STYLE.items():
        front = fronts[fronts["restriction"] == restriction]
        x, y = _steps(front)
        main.step(x, y, where="post", color=colour, linewidth=1.2, zorder=3, label=f"front: {label}")
        before = ext._front(paper_space, ext.RESTRICTIONS[restriction])
        bx, by = _steps(before)
        main.step(bx, by, where="post", color=colour, linewidth=1.0, linestyle="--", zorder=3,
                  label=f"front of the paper's points: {label}")
    entering = fronts[~fronts["was_on_paper_front"] & fronts["restriction"].isin(list(RESTRICTION_STYLE))]
    entering = entering.drop_duplicates(["total", "device_ms"]).sort_values("device_ms")
    legend = []
    for letter, row in zip("abcdefghijklmnopqrstuvwxyz", entering.itertuples(), strict=False):
        main.scatter([row.device_ms], [row.total / 1000], s=70, facecolors="none", edgecolors="#b2182b",
                     linewidths=1.5, zorder=4)
        main.annotate(f"({letter})", (row.device_ms, row.total / 1000), xytext=(-18, 6),
                      textcoords="offset points", fontsize=8, color="#b2182b", zorder=5)
        legend.append(f"({letter}) {row.total / 1000:.2f} kB, {row.device_ms:.0f} ms: {row.key_exchange}, "
                      f"NOC {row.noc}, {row.mode}")
    if legend:
        main.text(0.99, 0.98, "enter the front:\n" + "\n".join(legend), transform=main.transAxes, ha="right",
                  va="top", fontsize=6.5, color="#b2182b",
                  bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": "#b2182b", "alpha": 0.9}, zorder=6)
    main.set(xscale="log", xlabel="responder PQ computation [ms at 64 MHz]", ylabel="handshake bytes [kB]")
    main.set_yscale("log")
    main.legend(fontsize=6, loc="upper left", markerscale=2)
    main.set_title(f"{len(space):,} points ({len(known):,} with a Cortex-M4 cycle count for every operation); "
                   "outlined: new points on a front", fontsize=8)
    off = space[~space["device_known"]]
    lacking = off["device_unmeasured"].map(lambda text: " + ".join(sorted({_short(op.rsplit(" ", 1)[0])
                                                                            for op in text.split(", ")})))
    rng = np.random.default_rng(0)  # horizontal jitter only; the byte counts are the points' own
    groups = sorted(lacking.unique())
    for column, name in enumerate(groups):
        part = off[lacking == name]
        side.scatter(column + rng.uniform(-0.3, 0.3, len(part)), part["total"] / 1000, s=4, alpha=0.5, linewidths=0,
                     color=[FAMILY_COLOURS[f] for f in part["family"]])
    side.set_xticks(range(len(groups)), groups, rotation=70, ha="right", fontsize=6)
    side.set_title(f"no Cortex-M4 cycle count for\n({len(off):,} points, off the fronts)", fontsize=8)
    fig.tight_layout()
    return fig
