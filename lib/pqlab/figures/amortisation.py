"""Figures of stage ``amortisation``: Fig. 3 (sweep vs Eq. 1), Fig. 4 (cost vs detection window), the sensitivity."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator

from pqlab.amort import eq1
from pqlab.figures import style
from pqlab.stats import level

_LINESTYLES = ("-", "--", ":", "-.")


def _palette(names: Sequence[str]) -> dict[str, tuple]:
    return dict(zip(names, sns.color_palette("colorblind", len(names)), strict=True))


def _us(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _k_grid(intervals: Sequence[int]) -> np.ndarray:
    return np.geomspace(min(intervals), max(intervals), 200)


def fig3_amortisation(points: pd.DataFrame, means: dict[str, eq1.CostInputs], path_terms: dict,
                      errors: dict[str, dict[str, tuple[float, float, float]]], intervals: Sequence[int],
                      machine: str, path: str, confidence: float) -> plt.Figure:
    """Fig. 3: the measured mean amortised cost per report with its interval (at ``confidence``) at every k, over
    two Eq. 1
    curves fed the cost study's means — as published (dashed) and with the path's own terms (solid); below, each
    point's relative error against both, with the median errors and their intervals in the legend."""
    style.apply()
    colours = _palette(list(means))
    fig, (ax, err) = plt.subplots(2, 1, figsize=(7.2, 7.6), sharex=True, gridspec_kw={"height_ratios": [2.2, 1.0]})
    floor_pct = 0.1  # errors below 0.1 % are drawn at 0.1 % (log axis)
    grid = _k_grid(intervals)
    offsets = dict(zip(means, np.linspace(-0.06, 0.06, len(means)), strict=True))
    for scheme, values in means.items():
        colour = colours[scheme]
        ax.plot(grid, eq1.model_curve(values, grid), color=colour, linewidth=1.0, linestyle="--",
                label=f"{values.label} — Eq. 1 as published")
        ax.plot(grid, path_terms[scheme].cost(grid), color=colour, linewidth=1.0, linestyle="-", alpha=0.8,
                label=f"{values.label} — Eq. 1, path's terms")
        mine = points[points["scheme"] == scheme].sort_values("k")
        bars = np.vstack([mine["measured_us"] - mine["measured_lo"], mine["measured_hi"] - mine["measured_us"]])
        ax.errorbar(mine["k"], mine["measured_us"], yerr=np.clip(bars, 0, None), fmt="o", color=colour,
                    markersize=3.5, capsize=2.5, linewidth=0.9,
                    label=f"{values.label} — measured mean, {level(confidence)} CI")
        shifted = mine["k"].to_numpy(dtype=float) * 2 ** offsets[scheme]
        for column, marker, name in (("relative_error", "o", "as published"), ("relative_error_path", "s",
                                                                                 "path's terms")):
            value = np.maximum(100 * mine[column], floor_pct)
            low = value - np.maximum(100 * mine[f"{column}_lo"], floor_pct)
            high = np.maximum(100 * mine[f"{column}_hi"], floor_pct) - value
            key = "as_published" if column == "relative_error" else "path_terms"
            median, lo, hi = (100 * v for v in errors[scheme][key])
            err.errorbar(shifted * (1.0 if marker == "o" else 1.04), value,
                         yerr=np.clip(np.vstack([low, high]), 0, None), fmt=marker, color=colour, markersize=3,
                         capsize=1.5, linewidth=0.7, mfc="none" if marker == "s" else colour,
                         label=f"{scheme}, {name}: median {median:.1f} % [{lo:.1f}, {hi:.1f}]")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylabel("amortised cost per report (µs, log)")
    ax.legend(fontsize=6, ncol=2, loc="upper right")
    ax.set_title(f"Measured amortised cost against Equation 1 — {path} controller path, {machine}", fontsize=9)
    err.axhline(5, color="grey", linestyle=":", linewidth=0.8)
    err.annotate("5 %", (min(intervals), 5), textcoords="offset points", xytext=(-18, -3), fontsize=7, color="grey")
    err.set_yscale("log")
    err.set_ylim(bottom=floor_pct * 0.8)
    err.set_ylabel("|measured − model| / model (%)")
    err.set_xticks(list(intervals), [f"{k:,}" for k in intervals], fontsize=7)
    err.minorticks_off()
    err.set_xlabel("checkpoint interval k (records)")
    err.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False,
               title=f"median relative error over k [{level(confidence)} two-level bootstrap interval]",
               title_fontsize=6.5)
    fig.tight_layout()
    return fig


def fig4_tradeoff(inputs: dict[str, eq1.CostInputs], rates: Sequence[float], intervals: Sequence[int],
                  machine: str) -> plt.Figure:
    """Fig. 4: Eq. 1 cost against the detection window W = k / r for fleets offering each rate (colour),
    one curve per baseline (line style), k over the swept range; dots mark k*."""
    style.apply()
    colours = _palette([f"{r:g}" for r in rates])
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    grid = _k_grid(intervals)
    for rate in rates:
        for values, line in zip(inputs.values(), _LINESTYLES * len(inputs), strict=False):
            ax.plot(eq1.window(grid, rate), eq1.model_curve(values, grid), color=colours[f"{rate:g}"],
                    linestyle=line, linewidth=1.3)
            star = eq1.k_star(values)
            if min(intervals) <= star <= max(intervals):
                ax.plot(eq1.window(star, rate), eq1.cost(values, star), "o", color=colours[f"{rate:g}"], markersize=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.set_xlabel("detection window W = k / r (s, log)")
    ax.set_ylabel("amortised cost per report (µs, log)")
    rate_handles = [Line2D([], [], color=colours[f"{r:g}"], linewidth=2) for r in rates]
    scheme_handles = [Line2D([], [], color="black", linestyle=line) for line in _LINESTYLES[:len(inputs)]]
    first = ax.legend(rate_handles, [f"fleet offering {r:g} rep/s" for r in rates], fontsize=7, loc="upper right")
    ax.add_artist(first)
    ax.legend(scheme_handles, [v.label for v in inputs.values()], fontsize=7, loc="lower left")
    ax.set_title(f"RQ1 cost–detection trade-off (Eq. 1 with measured inputs; dots: k*) — {machine}", fontsize=9)
    fig.tight_layout()
    return fig


def amortisation_sensitivity(summary: pd.DataFrame, points: pd.DataFrame, machine: str, path: str) -> plt.Figure:
    """Where the finding moves: (a) the signature's and the durable write's share of the amortisable cost and
    k* for every signing backend x storage target; (b) Eq. 1 with those inputs against a short sweep."""
    style.apply()
    data = summary.reset_index(drop=True)
    colours = _palette(list(data["combo"]))
    fig, (bars, curves) = plt.subplots(1, 2, figsize=(11.0, 0.45 * len(data) + 2.6),
                                       gridspec_kw={"width_ratios": [1.0, 1.2]})
    y = np.arange(len(data))
    sign, write = data["share_signature"] * 100, data["share_write"] * 100
    bars.barh(y, sign, color="#b2182b", label="signature C_sign")
    bars.barh(y, write, left=sign, color="#2166ac", label="durable write C_fsync")
    for yi, row in zip(y, data.itertuples(), strict=True):
        bars.text(101, yi, f"k* = {row.k_star:,.0f}\n{_us(row.c_sign_us)} + {_us(row.c_fsync_us)} µs",
                  va="center", fontsize=7)
    bars.set_yticks(y, data["combo"], fontsize=8)
    bars.invert_yaxis()
    bars.set_xlim(0, 100)
    bars.set_xlabel("share of the amortisable cost C_sign + C_fsync (%)")
    bars.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2)
    bars.set_title("(a) dominant term and k* by signing backend and storage", fontsize=9, pad=22)
    for combo, group in points.groupby("combo", sort=False):
        group = group.sort_values("k")
        colour = colours.get(combo, "grey")
        curves.plot(group["k"], group["model_us"], color=colour, linestyle="--", linewidth=1.0)
        curves.plot(group["k"], group["measured_us"], "o", color=colour, markersize=4, label=combo)
    curves.set_xscale("log", base=2)
    curves.set_yscale("log")
    ks = sorted(set(points["k"]))
    curves.set_xticks(ks, [f"{k:,}" for k in ks], fontsize=8)
    curves.minorticks_off()
    curves.set_xlabel("checkpoint interval k (records)")
    curves.set_ylabel("amortised cost per report (µs, log)")
    curves.legend(fontsize=6.5, loc="upper right")
    curves.set_title(f"(b) Eq. 1 (dashed) vs short sweep (dots), {path} path", fontsize=9)
    fig.suptitle(f"Where the signature/write split moves — {machine}", fontsize=10)
    fig.tight_layout()
    return fig
