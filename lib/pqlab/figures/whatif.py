"""Figures of the what-if tools: deployments side by side, a fleet's cost-window curve, and the notebook's explorer.

``whatif_case_comparison`` and ``whatif_amort_tradeoff`` draw what ``pqlab whatif case|amort --figure`` saves;
``deployment_explorer`` is ``notebooks/15_your_deployment.ipynb``'s live panel: controls for both what-ifs whose
table and plots are recomputed (the same ``pqlab.whatif`` functions the CLI calls) whenever a control moves. It
builds widgets only with a live Jupyter front end (:func:`pqlab.notebook.interactive`) and returns None without.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from pqlab.amort import eq1
from pqlab.errors import PqlabError
from pqlab.figures import style
from pqlab.framing import MAX_APP_MESSAGE_OCTETS
from pqlab.transport.model import MESSAGES
from pqlab.whatif.amort import AmortAnswer
from pqlab.whatif.case import CaseAnswer

MESSAGE_COLOURS = {"Sigma1": "#2166ac", "Sigma2": "#b2182b", "Sigma3": "#1b7837", "StatusReport": "#999999"}


def whatif_case_comparison(answers: Sequence[CaseAnswer]) -> plt.Figure:
    """Left: each deployment's message payloads against Matter's 1178-byte limit. Right: its simulated handshake
    times (completed runs) with the failure rate; a device time without a cycle count is marked as a lower bound."""
    style.apply()
    fig, (sizes, times) = plt.subplots(1, 2, figsize=(8.0, 1.4 + 0.55 * max(2, len(answers))),
                                       gridspec_kw={"width_ratios": (1.1, 1.0)})
    labels = [a.label for a in answers]
    y = np.arange(len(answers))
    height = 0.8 / len(MESSAGES)
    for index, message in enumerate(MESSAGES):
        values = [a.messages[message] for a in answers]
        sizes.barh(y + (index - 1.5) * height, values, height, color=MESSAGE_COLOURS[message], label=message)
    limit = answers[0].limit if answers else MAX_APP_MESSAGE_OCTETS
    sizes.axvline(limit, color="black", linestyle="--", linewidth=1)
    sizes.annotate(f"{limit} B", (limit, len(answers) - 0.45), fontsize=7, ha="left", xytext=(3, 0),
                   textcoords="offset points")
    sizes.set(xscale="log", yticks=y, yticklabels=labels, xlabel="payload [bytes]", ylim=(-0.6, len(answers) - 0.4))
    sizes.invert_yaxis()
    sizes.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
    data = [a.best.times_s if a.best.times_s.size else np.array([np.nan]) for a in answers]
    times.boxplot(data, orientation="horizontal", positions=y, widths=0.5, showfliers=False, manage_ticks=False)
    for row, answer in zip(y, answers, strict=True):
        run = answer.best
        bound = " (lower bound)" if answer.device.unmeasured else ""
        failed = f", {run.failure_rate:.1%} fail in {run.fails_in}" if run.fails_in else ""
        median = "no handshake completed" if run.median_s is None else f"median {run.median_s:.2f} s"
        times.annotate(f"{answer.chosen}: {median}{failed}{bound}", (0.01, row - 0.32),
                       xycoords=("axes fraction", "data"), fontsize=7)
    times.set(yticks=y, yticklabels=[], xlabel="handshake time [s]", ylim=(-0.6, len(answers) - 0.4))
    times.set_xlim(left=0)
    times.invert_yaxis()
    runs = sorted({a.best.runs for a in answers})
    fig.suptitle(f"CASE in your deployment: bytes (left) and simulated handshake time, {'/'.join(map(str, runs))} "
                 "runs each (right)", fontsize=9)
    fig.tight_layout()
    return fig


def whatif_amort_tradeoff(answers: Sequence[AmortAnswer]) -> plt.Figure:
    """Eq. 1's cost per report against the detection window for each fleet, with the chosen interval marked."""
    style.apply()
    fig, ax = plt.subplots(figsize=(5.8, 3.4))
    for answer in answers:
        inputs = eq1.CostInputs(*(answer.terms[n].value_us for n in ("c_mac", "c_leaf", "c_sign", "c_fsync")))
        rate = answer.deployment.aggregate_rate_hz
        ks = np.unique(np.geomspace(1, max(answer.point.k * 8, 4096), 300).astype(int))
        line, = ax.plot(eq1.window(ks, rate), eq1.model_curve(inputs, ks), label=answer.label)
        ax.plot([answer.point.window_s], [answer.point.cost_us], "o", color=line.get_color())
        ax.annotate(f"k = {answer.point.k:,}", (answer.point.window_s, answer.point.cost_us), fontsize=7,
                    xytext=(5, 5), textcoords="offset points")
        ax.axhline(answer.point.floor_us, color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set(xscale="log", yscale="log", xlabel="detection window W [s]", ylabel="amortised cost [µs/report]")
    ax.legend(fontsize=7)
    ax.set_title("Eq. 1 for your fleet (dotted: the symmetric floor)", fontsize=9)
    fig.tight_layout()
    return fig


def explorer_choices(scenarios: Sequence[str]) -> dict[str, tuple]:
    """The options of the explorer's drop-downs: key exchanges, every CASE signature, modes, the Thread scenarios,
    transports, and the checkpoint signers some backend here offers."""
    from pqlab import crypto
    from pqlab.case import algorithms
    from pqlab.case.config import AUTH_MODES, CACHE_MODES
    from pqlab.crypto import names

    signatures = tuple(algorithms.SIGNATURES)
    return {
        "key_exchange": ("P-256", "P-256+ML-KEM-768", *algorithms.KEMS),
        "signature": signatures, "icac": ("none", *signatures),
        "mode": tuple(f"{a}/{c}" for a in AUTH_MODES for c in CACHE_MODES),
        "interference": tuple(scenarios), "transport": ("best", "ipv6", "pull", "block"),
        "signer": tuple(s for s in names.SIGNATURES if crypto.backends_offering(s)),
    }


def deployment_explorer(case_answer: Callable[..., CaseAnswer], amort_answer: Callable[..., AmortAnswer],
                        case_defaults: dict[str, Any], amort_defaults: dict[str, Any],
                        choices: dict[str, Sequence[Any]]) -> Any | None:
    """A live panel: CASE controls (key exchange, chain, mode, clock, hops, interference, sleepy, transport) and
    fleet controls (rate, identities, window, signer); every change recomputes through ``case_answer(**values)``
    / ``amort_answer(**values)`` and redraws the table and figure under them. None without a live front end."""
    from pqlab.notebook import interactive

    if not interactive():
        return None
    import ipywidgets as widgets
    from IPython.display import HTML, display

    from pqlab.whatif import amort, case

    def dropdown(name: str, value: Any, description: str) -> Any:
        return widgets.Dropdown(options=list(choices[name]), value=value, description=description)

    c = case_defaults
    controls = {
        "key_exchange": dropdown("key_exchange", c["key_exchange"], "key exchange"),
        "noc": dropdown("signature", c["noc"], "NOC"),
        "icac": dropdown("icac", c["icac"], "ICAC"),
        "rcac": dropdown("signature", c["rcac"], "RCAC"),
        "mode": dropdown("mode", c["mode"], "auth/cached"),
        "clock_mhz": widgets.FloatSlider(value=c["clock_mhz"], min=16, max=256, step=16, description="clock MHz"),
        "hops": widgets.IntSlider(value=c["hops"], min=1, max=8, description="hops"),
        "interference": dropdown("interference", c["interference"], "interference"),
        "sleepy": widgets.Checkbox(value=c["sleepy"], description="sleepy device"),
        "transport": dropdown("transport", c["transport"], "transport"),
    }
    a = amort_defaults
    fleet = {
        "rate_hz": widgets.FloatLogSlider(value=a["rate_hz"], base=10, min=-2, max=3, step=0.1,
                                          description="reports/s"),
        "identities": widgets.IntText(value=a["identities"], description="identities"),
        "window_s": widgets.FloatLogSlider(value=a["window_s"], base=10, min=-2, max=4, step=0.1,
                                           description="window s"),
        "signer": dropdown("signer", a["signer"], "signer"),
    }
    case_out, amort_out = widgets.Output(), widgets.Output()
    case_out.add_class("pqlab-whatif-case")  # how a browser test (tests/test_browser.py) finds what is shown
    amort_out.add_class("pqlab-whatif-amort")

    def show(out: Any, frame: Any, figure: plt.Figure) -> None:
        out.clear_output(wait=True)
        with out:
            display(HTML(frame.to_html()))
            display(figure)
        plt.close(figure)

    def update_case(*_: object) -> None:
        values = {name: w.value for name, w in controls.items()}
        try:
            answer = case_answer(**values)
        except PqlabError as exc:  # a combination the model refuses: say so in the panel, keep the controls
            case_out.clear_output(wait=True)
            with case_out:
                display(HTML(f"<b>{type(exc).__name__}</b>: {exc}"))
            return
        show(case_out, case.table([answer]), whatif_case_comparison([answer]))

    def update_amort(*_: object) -> None:
        try:
            answer = amort_answer(**{name: w.value for name, w in fleet.items()})
        except PqlabError as exc:
            amort_out.clear_output(wait=True)
            with amort_out:
                display(HTML(f"<b>{type(exc).__name__}</b>: {exc}"))
            return
        show(amort_out, amort.table([answer]), whatif_amort_tradeoff([answer]))

    for control in controls.values():
        control.observe(update_case, names="value")
    for control in fleet.values():
        control.observe(update_amort, names="value")
    update_case()
    update_amort()
    case_box = widgets.VBox([widgets.HBox(list(controls.values())[:5], layout={"flex_flow": "row wrap"}),
                             widgets.HBox(list(controls.values())[5:], layout={"flex_flow": "row wrap"}), case_out])
    fleet_box = widgets.VBox([widgets.HBox(list(fleet.values()), layout={"flex_flow": "row wrap"}), amort_out])
    return widgets.Tab(children=[case_box, fleet_box], titles=("CASE over Thread", "PLC fleet (AMORT-V1)"))
