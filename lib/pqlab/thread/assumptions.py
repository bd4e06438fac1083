"""The unstated-assumption study: the transport headlines under each choice the paper leaves open.

The paper does not say how the one shared channel is arbitrated between concurrent datagrams
(``channel_priority``), whether 802.15.4 ACK frames are lost like data frames (``ack_frame_loss``), how a sleepy
device's indirect retries are spaced (``indirect_retry_spacing``), or when block transfer's MRP timer starts
(``block_timer_start``). Each assumption set is the thread model with those fields set; its grid is the drop-in
configuration (always-on, every loss scenario, IPv6 fragmentation and block transfer) and every oversized
configuration on a sleepy device under interference with IPv6 fragmentation. ``headline`` reduces one set's
rows to the quantities the paper quotes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from pqlab.params import AssumptionsParams, ThreadParams
from pqlab.thread.analysis import drop_in_ratios
from pqlab.thread.grid import GridPoint, fitting_configs
from pqlab.thread.model import MESSAGES, Scenario

FIELDS = ("channel_priority", "ack_frame_loss", "indirect_retry_spacing", "block_timer_start")


def assumption_sets(settings: AssumptionsParams, thread: ThreadParams) -> dict[str, ThreadParams]:
    """Set id -> thread model: every channel rule x ACK-loss choice, then each further retry spacing and block
    timer start on the configured model (a set identical to an earlier one is skipped)."""
    sets: dict[str, ThreadParams] = {}

    def add(key: str, **update) -> None:
        model = thread.model_copy(update=update)
        if all(any(getattr(model, f) != getattr(other, f) for f in FIELDS) for other in sets.values()):
            sets[key] = model

    for rule in settings.channel_rules:
        for ack in settings.ack_frame_loss:
            add(f"{rule}-ack_{ack}", channel_priority=rule, ack_frame_loss=ack)
    for spacing in settings.indirect_retry_spacing:
        add(f"{thread.channel_priority}-retry_{spacing}", indirect_retry_spacing=spacing)
    for start in settings.block_timer_start:
        add(f"{thread.channel_priority}-block_timer_{start}", block_timer_start=start)
    return sets


def describe(model: ThreadParams) -> dict[str, str]:
    """The four assumption fields of a model, for the table."""
    return {field: str(getattr(model, field)) for field in FIELDS}


def oversized(configs: Mapping[str, Sequence[int]], thread: ThreadParams) -> list[str]:
    """Configurations with a message above the Matter limit (the ones a transport is chosen for)."""
    fitting = fitting_configs(configs, thread)
    return [name for name in configs if name not in fitting]


def assumption_points(
    settings: AssumptionsParams, sets: Mapping[str, ThreadParams], thread: ThreadParams,
    configs: Mapping[str, Sequence[int]], device_compute_ms: Mapping[str, tuple[float, float]], runs: int,
) -> tuple[list[GridPoint], pd.DataFrame]:
    """Every set's grid points and a table mapping each point_id to its set."""
    d3 = thread.figure_configs["drop_in"]
    noisy = thread.figure_scenarios["interference"]
    points: list[GridPoint] = []
    rows: list[dict] = []

    def add(key: str, model: ThreadParams, name: str, hops: int, loss: str, sleepy: bool, transport: str) -> None:
        scenario = Scenario(tuple(int(s) for s in configs[name]), hops, loss, sleepy, transport,
                            tuple(device_compute_ms.get(name, (0.0, 0.0))))
        point = GridPoint(name, transport, scenario, model)
        points.append(point)
        rows.append({"point_id": point.point_id(thread, runs), "set": key})

    for key, model in sets.items():
        for hops in settings.drop_in_hops:
            for loss in thread.scenarios:
                for transport in ("ipv6", "block"):
                    add(key, model, d3, hops, loss, False, transport)
        for name in oversized(configs, thread):
            for hops in settings.sleepy_hops:
                add(key, model, name, hops, noisy, True, "ipv6")
    return points, pd.DataFrame(rows)


def _value(summary: pd.DataFrame, column: str, **where) -> float | None:
    rows = summary
    for key, value in where.items():
        rows = rows[rows[key] == value]
    if len(rows) != 1 or pd.isna(rows[column].iloc[0]):
        return None
    return float(rows[column].iloc[0])


def headline(summary: pd.DataFrame, thread: ThreadParams) -> dict:
    """One set's numbers (``summary``: ``summary.counts_and_medians`` of its rows): IPv6/block ratio range at
    ``ratio_hops`` over every loss scenario, spurious retransmissions at 2 and 4 hops without interference, the
    drop-in configuration at 4 hops under interference, and sleepy-device failures with IPv6 fragmentation."""
    d3 = thread.figure_configs["drop_in"]
    quiet, noisy = thread.figure_scenarios["quiet"], thread.figure_scenarios["interference"]
    ratios = drop_in_ratios(summary, d3, [h for h in thread.ratio_hops if h in set(summary["hops"])])
    out: dict = {"ratio_min": ratios["drop_in_ratio_3to4hop_min"], "ratio_max": ratios["drop_in_ratio_3to4hop_max"],
                 "ratio_scenarios": ratios["drop_in_ratio_3to4hop_scenarios"]}
    for key, value in ratios.items():
        if key.endswith(f"hop_{quiet}") and key.startswith("drop_in_ratio_"):
            out[key.removeprefix("drop_in_").replace(f"_{quiet}", "_none")] = value
    d3_hops = set(summary.loc[(summary["config"] == d3) & ~summary["sleepy"], "hops"])
    for hops in sorted(d3_hops - set(thread.ratio_hops)):  # below the ratio hops, e.g. 2
        ip = _value(summary, "median_s", config=d3, hops=hops, loss=quiet, sleepy=False, transport="ipv6")
        blk = _value(summary, "median_s", config=d3, hops=hops, loss=quiet, sleepy=False, transport="block")
        out[f"ratio_{hops}hop_none"] = ip / blk if ip and blk else None
    always = dict(config=d3, sleepy=False)
    for hops in sorted(d3_hops):
        out[f"d3_{hops}hop_none_ipv6_median_s"] = _value(summary, "median_s", hops=hops, loss=quiet,
                                                         transport="ipv6", **always)
    for hops in (2, 4):
        out[f"spurious_{hops}hop"] = _value(summary, "mean_spurious", hops=hops, loss=quiet, transport="ipv6", **always)
    for transport in ("ipv6", "block"):
        rate = _value(summary, "failure_rate", hops=4, loss=noisy, transport=transport, **always)
        out[f"d3_4hop_heavy_{transport}_completion"] = None if rate is None else 1.0 - rate
        out[f"d3_4hop_heavy_{transport}_median_s"] = _value(summary, "median_s", hops=4, loss=noisy,
                                                            transport=transport, **always)
    sed = summary[summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == noisy)]
    failed = sorted({int(m) for text in sed["failed_in"] for m in text.split(",") if m})
    out["sed_scenarios"] = len(sed)
    out["sed_scenarios_with_failures"] = int((sed["failures"] > 0).sum())
    out["sed_max_failure_rate"] = float(sed["failure_rate"].max()) if len(sed) else None
    out["sed_failed_in"] = "+".join(MESSAGES[m] if 0 <= m < len(MESSAGES) else str(m) for m in failed)
    total = int(sed["failures"].sum())
    for m, name in enumerate(MESSAGES):  # where the sleepy device's failures happen (the paper: all in Sigma3)
        out[f"sed_failures_in_{name}"] = float(sed[f"failed_{m}"].sum() / total) if total else None
    return out
