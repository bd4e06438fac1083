"""AMORT-V1 §V-H figure: re-issued sequence numbers, time to ready, and restart loss against the k bound."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

ARM_ORDER = ["fresh", "naive", "tpm"]
SCENARIO_COLOURS = {"restart": "#4393c3", "rollback": "#d6604d"}
JITTER_SEED = 0


@contextmanager
def _reproducible() -> Iterator[None]:
    """The same samples give the same bytes whatever the process drew before: matplotlib's default style (the one
    this figure has always had; other figures set the shared seaborn theme globally) and seaborn's strip-plot
    jitter, which it draws from numpy's global generator, from a fixed seed (the caller's state given back)."""
    state = np.random.get_state()
    np.random.seed(JITTER_SEED)
    try:
        with plt.style.context("default"):
            yield
    finally:
        np.random.set_state(state)


def fig_recovery(arms: pd.DataFrame, restart: pd.DataFrame, k: int, tpm_label: str) -> plt.Figure:
    """(a) sequence numbers re-issued per trial, (b) time to ready per arm, (c) records lost per SIGKILLed epoch."""
    with _reproducible():
        return _draw(arms, restart, k, tpm_label)


def _draw(arms: pd.DataFrame, restart: pd.DataFrame, k: int, tpm_label: str) -> plt.Figure:
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)
    ax = axes[0]
    sns.stripplot(data=arms, x="arm", y="reissued", hue="scenario", order=ARM_ORDER, palette=SCENARIO_COLOURS,
                  dodge=True, jitter=0.25, size=3.5, ax=ax)
    totals = arms.groupby(["arm", "scenario"])["reissued"].sum()
    ax.set_xticks(range(len(ARM_ORDER)), [f"{arm}\nΣ {int(totals.get((arm, 'restart'), 0))} / "
                                          f"{int(totals.get((arm, 'rollback'), 0))}" for arm in ARM_ORDER])
    ax.set(title="(a) sequence numbers re-issued per trial", xlabel="arm (Σ restart / rollback)",
           ylabel="SEQ_DUPLICATE at the controller")
    ax.legend(title="", fontsize=8)
    ax = axes[1]
    ready = arms.dropna(subset=["ready_ms"])
    sns.stripplot(data=ready, x="arm", y="ready_ms", hue="scenario", order=ARM_ORDER, palette=SCENARIO_COLOURS,
                  dodge=True, jitter=0.25, size=3, alpha=0.6, ax=ax)
    sns.pointplot(data=ready, x="arm", y="ready_ms", hue="scenario", order=ARM_ORDER, palette=SCENARIO_COLOURS,
                  estimator="median", errorbar=None, dodge=0.4, linestyle="none", markers="_", markersize=18,
                  legend=False, ax=ax)
    ax.set(title=f"(b) restart to ready ({tpm_label})", xlabel="", ylabel="ms (prover-side; bar = median)")
    ax.legend(title="", fontsize=8)
    ax = axes[2]
    lost = restart[restart["interrupted"]]
    colours = lost["err_evidence_incomplete"].map({True: "#b2182b", False: "#878787"})
    ax.scatter(lost["kill_point"], lost["lost"], c=colours, s=14)
    ax.axhline(k, color="black", lw=0.8, ls="--")
    ax.set_xlim(0, 1.05 * (float(lost["kill_point"].max()) if len(lost) else 1.0))
    ax.text(0, k, f" k = {k}", va="bottom", fontsize=8)
    ax.set(title="(c) evidence lost per SIGKILLed epoch", xlabel="kill point (reports into the epoch)",
           ylabel="last seen − last committed", ylim=(-2, k * 1.25))
    ax.scatter([], [], c="#b2182b", s=14, label="ERR_EVIDENCE_INCOMPLETE")
    ax.scatter([], [], c="#878787", s=14, label="no loss, no error")
    ax.legend(fontsize=8, loc="upper left")
    return fig
