"""Notebook widgets, built only when a live front end is attached (never under papermill, nbconvert or pytest)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pqlab.amort import eq1

ENV = "PQLAB_WIDGETS"  # "1" forces widgets on (a front end the check does not know), "0" forces them off


def live_frontend() -> bool:
    """True when an IPython kernel is attached to an interactive front end: :func:`pqlab.notebook.interactive`
    (Jupyter Server's ``JPY_SESSION_NAME``, no headless executor as the kernel's parent; ``PQLAB_WIDGETS`` = 0/1
    overrides), one rule for every notebook's widgets."""
    from pqlab.notebook import interactive

    return interactive()


def describe(point: eq1.TradeOff) -> str:
    """One line for a trade-off point (markdown)."""
    return (f"**{point.label}** at {point.rate:g} reports/s: k = **{point.k:,}**, detection window W = "
            f"**{point.window_s:.4g} s**, cost **{point.cost_us:.4g} µs/report** "
            f"({point.overhead_over_floor:.1%} above the {point.floor_us:.3g} µs floor; k* = {point.k_star:,.0f})")


def tradeoff_explorer(inputs: dict[str, eq1.CostInputs], rates: Sequence[float] = (1, 100, 1000)) -> Any | None:
    """An ipywidgets panel: pick a baseline, a report rate, and a window or a cost budget; shows k, W and the cost
    (``pqlab.amort.eq1.tradeoff``) on the Fig. 4 curve. Returns None, building nothing, without a live
    front end (see :func:`live_frontend`)."""
    if not live_frontend():
        return None
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display

    scheme = widgets.Dropdown(options=[(v.label, k) for k, v in inputs.items()], description="baseline")
    rate = widgets.FloatLogSlider(value=float(rates[len(rates) // 2]), base=10, min=-1, max=5, step=0.1,
                                  description="reports/s")
    mode = widgets.ToggleButtons(options=["window (s)", "budget (µs/report)"], description="given")
    value = widgets.FloatLogSlider(value=10.0, base=10, min=-3, max=4, step=0.05, description="value")
    out = widgets.Output()

    def update(*_: object) -> None:
        values = inputs[scheme.value]
        out.clear_output(wait=True)
        with out:
            try:
                if mode.value.startswith("window"):
                    point = eq1.tradeoff(values, rate.value, window_s=value.value)
                else:
                    point = eq1.tradeoff(values, rate.value, budget_us=value.value)
            except ValueError as exc:
                display(Markdown(f"*{exc}*"))
                return
            display(Markdown(describe(point)))
            grid = np.geomspace(1, max(4096, point.k * 4), 300)
            _, ax = plt.subplots(figsize=(5.5, 3.2))
            ax.plot(eq1.window(grid, rate.value), eq1.model_curve(values, grid))
            ax.plot(point.window_s, point.cost_us, "o", color="black")
            ax.set(xscale="log", yscale="log", xlabel="detection window W (s)", ylabel="µs per report")
            plt.show()

    for control in (scheme, rate, mode, value):
        control.observe(update, names="value")
    update()
    return widgets.VBox([widgets.HBox([scheme, mode]), widgets.HBox([rate, value]), out])
