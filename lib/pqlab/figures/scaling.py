"""Figures of stage ``scaling``: controller cost per report and checkpoint size against identities (log–log)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pqlab.figures import style

KIB = 1024


def fig_scaling(table3: pd.DataFrame, crossing: dict[str, Any], controller_path: str, machine: str) -> plt.Figure:
    """Left: controller µs per report (median, whiskers min–max over trials); right: checkpoint size, with the
    size budget and the identity count where a checkpoint passes it. Both log–log."""
    style.apply()
    data = table3.sort_values("identities")
    n = data["identities"].to_numpy()
    fig, (cost, size) = plt.subplots(1, 2, figsize=(8.0, 3.4))
    errors = np.vstack([data["us_per_report"] - data["us_per_report_min"],
                        data["us_per_report_max"] - data["us_per_report"]])
    cost.errorbar(n, data["us_per_report"], yerr=errors, marker="o", color=style.FREQUENCY_COLOURS["per report"],
                  capsize=3, label="total per report")
    cost.plot(n, data["ingest_us_per_report"], marker=".", linestyle="--", color="grey",
              label="of which ingest (tag check, sequence)")
    for xi, yi in zip(n, data["us_per_report"], strict=True):
        cost.annotate(f"{yi:.3g}", (xi, yi), textcoords="offset points", xytext=(4, 5), fontsize=7)
    cost.set_xscale("log")
    cost.set_yscale("log")
    cost.set_xlabel("identities (one report each per checkpoint)")
    cost.set_ylabel("controller cost (µs per report, log)")
    cost.set_title(f"cost per report — {controller_path} path", fontsize=9)
    cost.legend(fontsize=7)
    size.plot(n, data["checkpoint_octets"] / KIB, marker="s", color=style.FREQUENCY_COLOURS["per checkpoint"],
              label="checkpoint (len of encoding)")
    budget = crossing["budget_octets"] / KIB
    size.axhline(budget, color="black", linestyle=":", linewidth=1, label=f"budget {crossing['budget_octets']:,} B")
    size.axvline(crossing["first_identities_over_budget"], color="black", linestyle="--", linewidth=0.8,
                 label=f"passes budget at {crossing['first_identities_over_budget']:,} identities")
    size.set_xscale("log")
    size.set_yscale("log")
    size.set_xlabel("identities")
    size.set_ylabel("checkpoint size (KiB, log)")
    size.set_title("checkpoint size", fontsize=9)
    size.set_ylim(top=budget * 3)
    size.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"AMORT-V1 controller scaling, ML-DSA-65 checkpoints — {machine}", fontsize=9)
    fig.tight_layout()
    return fig
