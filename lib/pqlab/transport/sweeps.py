"""PQ-CASE §VII sweeps: the grid points of Fig. 4 a-c and Fig. 5, and their tables and headline numbers.

Every cell is an ordinary grid point (``pqlab.transport.grid``) carrying its own model: a loss scenario added for
each (occupancy, burst) pair, the MRP timers of Fig. 4c, the segment payload of Fig. 5. ``cells`` describes
each point (by ``point_id``); ``cell_stats`` reduces the handshake rows to one row per cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pqlab.transport.config import LossScenario, TransportParams
from pqlab.transport.grid import GridPoint
from pqlab.transport.model import Scenario
from pqlab.transport.sweep_config import SensitivityParams

PANELS = ("interference", "timers", "segments")


def loss_name(occupancy_pct: float, burst_ms: float) -> str:
    """The name of the sweep's loss scenario for one cell of Fig. 4a/b."""
    return f"ge_{occupancy_pct:g}pct_{burst_ms:g}ms"


def interference_model(settings: SensitivityParams, thread: TransportParams) -> TransportParams:
    """The thread model with one Gilbert–Elliott scenario per (occupancy, burst) cell added; p_good and p_bad
    are the base scenario's."""
    sweep = settings.interference
    base = thread.scenarios[sweep.base_scenario]
    added = {loss_name(o, b): LossScenario(p_good=base.p_good, p_bad=base.p_bad, fraction_bad=o / 100.0,
                                           mean_burst_ms=float(b))
             for o in sweep.occupancy_pct for b in sweep.mean_burst_ms}
    return thread.model_copy(update={"scenarios": {**thread.scenarios, **added}})


def sweep_points(
    settings: SensitivityParams, thread: TransportParams, configs: Mapping[str, Sequence[int]],
    device_compute_ms: Mapping[str, tuple[float, float]], runs: int,
) -> tuple[list[GridPoint], pd.DataFrame]:
    """Every cell of Fig. 4 a-c and Fig. 5 as a grid point, and a table describing each (by point_id)."""
    roles = thread.figure_configs
    points: list[GridPoint] = []
    rows: list[dict] = []

    def add(panel: str, role: str, hops: int, loss: str, transport: str, model: TransportParams, **meta) -> None:
        name = roles[role]
        scenario = Scenario(tuple(int(s) for s in configs[name]), hops, loss, False, transport,
                            tuple(device_compute_ms.get(name, (0.0, 0.0))))
        point = GridPoint(name, transport, scenario, model)
        points.append(point)
        rows.append({"point_id": point.point_id(thread, runs), "panel": panel, "config": name, "role": role,
                     "hops": hops, "loss": loss, "transport": transport, **meta})

    sweep = settings.interference
    model = interference_model(settings, thread)
    for o in sweep.occupancy_pct:
        for b in sweep.mean_burst_ms:
            for transport in ("ipv6", "pull", "block"):
                add("interference", settings.role, sweep.hops, loss_name(o, b), transport, model,
                    occupancy_pct=float(o), burst_ms=float(b))
    timers = settings.timers
    for interval in timers.controller_interval_ms:
        for boost in timers.device_boost_ms:
            model = thread.model_copy(update={"mrp_controller_interval_ms": interval, "mrp_device_boost_ms": boost})
            for hops in timers.hops:
                for transport in ("ipv6", "block"):
                    add("timers", settings.role, hops, timers.scenario, transport, model,
                        controller_interval_ms=interval, device_boost_ms=boost)
    for size in settings.segments.segment_payload:
        model = thread.model_copy(update={"segment_payload": size})
        for index, sc in enumerate(settings.segments.scenarios):
            add("segments", sc.role, sc.hops, sc.loss, "pull", model, segment_payload=size, scenario_index=index,
                scenario_label=f"{roles[sc.role]}, {sc.hops} hop{'s' if sc.hops > 1 else ''}, {sc.loss}")
    return points, pd.DataFrame(rows)


def cell_stats(table: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: runs, failures, failure rate, median time over completed handshakes, mean spurious."""
    grouped = table.groupby("point_id", sort=False)
    ok_median = table[table["ok"]].groupby("point_id")["time_s"].median()
    stats = pd.DataFrame({
        "runs": grouped.size(),
        "failures": grouped["ok"].apply(lambda s: int((~s).sum())),
        "mean_spurious": grouped["spurious"].mean(),
    })
    stats["failure_rate"] = stats["failures"] / stats["runs"]
    stats["median_s"] = ok_median.reindex(stats.index)
    return cells.merge(stats, left_on="point_id", right_index=True, how="left")


def _ratio_frame(stats: pd.DataFrame, keys: list[str], numerator: str, denominator: str,
                 threshold: float) -> pd.DataFrame:
    wide = stats.pivot_table(index=keys, columns="transport", values=["median_s", "failure_rate"], aggfunc="first")
    out = pd.DataFrame(index=wide.index)
    out[f"{numerator}_median_s"] = wide[("median_s", numerator)]
    out[f"{denominator}_median_s"] = wide[("median_s", denominator)]
    out[f"{numerator}_failure_rate"] = wide[("failure_rate", numerator)]
    out[f"{denominator}_failure_rate"] = wide[("failure_rate", denominator)]
    out["ratio"] = out[f"{numerator}_median_s"] / out[f"{denominator}_median_s"]
    out["failure_rate"] = out[[f"{numerator}_failure_rate", f"{denominator}_failure_rate"]].max(axis=1)
    out["marked"] = (1.0 - out["failure_rate"]) < threshold
    return out.reset_index()


def interference_table(stats: pd.DataFrame, numerator: str, threshold: float) -> pd.DataFrame:
    """Fig. 4a (``ipv6``) or 4b (``pull``): ratio to block transfer per (occupancy, burst), with the worse
    transport's failure rate and whether the cell's success is below ``threshold``."""
    part = stats[stats["panel"] == "interference"]
    return _ratio_frame(part, ["occupancy_pct", "burst_ms"], numerator, "block", threshold)


def timer_table(stats: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Fig. 4c: IPv6/block ratio per (controller interval, device boost, hops)."""
    part = stats[stats["panel"] == "timers"].astype({"controller_interval_ms": int, "device_boost_ms": int})
    return _ratio_frame(part, ["controller_interval_ms", "device_boost_ms", "hops"], "ipv6", "block", threshold)


def segment_table(stats: pd.DataFrame, reference: int, threshold: float) -> pd.DataFrame:
    """Fig. 5: median time with pull segmentation per segment size, relative to ``reference`` bytes."""
    part = stats[stats["panel"] == "segments"][["scenario_index", "scenario_label", "config", "hops", "loss",
                                                "segment_payload", "median_s", "failure_rate", "runs"]]
    part = part.astype({"scenario_index": int, "segment_payload": int})
    ref = part[part["segment_payload"] == reference].set_index("scenario_label")["median_s"]
    part["relative"] = part["median_s"] / part["scenario_label"].map(ref)
    part["marked"] = (1.0 - part["failure_rate"]) < threshold
    return part.sort_values(["scenario_index", "segment_payload"]).reset_index(drop=True)


def heatmap_long(ipv6: pd.DataFrame, pull: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4a/b in long form for ``dvc plots`` (template .dvc/plots/heatmap.json): one row per cell and panel,
    with the text the figure prints in the cell."""
    frames = []
    for panel, table in (("(a) IPv6 fragmentation / block", ipv6), ("(b) pull segmentation / block", pull)):
        part = table[["occupancy_pct", "burst_ms", "ratio", "failure_rate", "marked"]].copy()
        part.insert(0, "panel", panel)
        part["label"] = [("none" if np.isnan(r) else f"{r:.2f}") + (f"* {f * 100:.0f}%" if m else "")
                         for r, f, m in zip(part["ratio"], part["failure_rate"], part["marked"], strict=True)]
        frames.append(part)
    return pd.concat(frames, ignore_index=True)


def _span(values: pd.Series) -> tuple[float | None, float | None]:
    values = values.dropna()
    return (float(values.min()), float(values.max())) if len(values) else (None, None)


def metrics(settings: SensitivityParams, ratio_hops: Sequence[int], ipv6: pd.DataFrame, pull: pd.DataFrame,
            timers: pd.DataFrame, segments: pd.DataFrame) -> dict:
    """The numbers §VII quotes, grouped as its sentences group the cells (``settings.report``)."""
    r = settings.report
    out: dict = {"runs_per_cell": settings.runs}
    lo, hi = _span(ipv6["ratio"])
    long = ipv6[ipv6["burst_ms"] >= r.long_burst_ms]
    out["ipv6_block"] = {"min": lo, "max": hi, "cells": len(ipv6), "cells_with_ratio": int(ipv6["ratio"].notna().sum()),
                         "cells_marked": int(ipv6["marked"].sum()),
                         "max_failure_rate_long_bursts": float(long["ipv6_failure_rate"].max()) if len(long) else None,
                         "max_failure_rate": float(ipv6["ipv6_failure_rate"].max())}
    short = pull[pull["burst_ms"] <= r.short_burst_ms]
    busy = pull[(pull["burst_ms"] >= r.long_burst_ms) & (pull["occupancy_pct"] >= r.busy_occupancy_pct)]
    busy_lo, busy_hi = _span(busy["ratio"])
    out["pull_block"] = {"max_short_bursts": _span(short["ratio"])[1], "min_long_busy": busy_lo,
                         "max_long_busy": busy_hi, "cells_marked": int(pull["marked"].sum())}
    far = timers[timers["hops"].isin(list(ratio_hops))]
    t_lo, t_hi = _span(far["ratio"])
    by_setting = {}
    for (interval, boost), group in timers.groupby(["controller_interval_ms", "device_boost_ms"]):
        by_setting[f"ctrl{int(interval)}ms_boost{int(boost)}ms"] = {f"{int(h)}hop": (None if np.isnan(v) else float(v))
                                                         for h, v in zip(group["hops"], group["ratio"], strict=True)}
    out["timers"] = {"min_far": t_lo, "max_far": t_hi, "far_hops": list(ratio_hops),
                     "settings": len(by_setting), "ratio": by_setting}
    seg: dict = {}
    for size in r.small_segments:
        rows = segments[segments["segment_payload"] == size]
        s_lo, s_hi = _span((rows["relative"] - 1.0) * 100.0)
        seg[str(size)] = {"slower_min_pct": s_lo, "slower_max_pct": s_hi}
    out["segments"] = seg
    return out
