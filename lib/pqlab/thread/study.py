"""The PQ-CASE transport study (§VI): run the grid under the paper's model and the source_accurate variant,
summarise it, and write Fig. 2, Table I's time columns, SED failures, radio time and the headline metrics.

Configurations (name -> the four CASE message sizes) come from the CASE size model: ``run_table1`` builds them
for ``thread.configurations`` (pqlab.thread.case_inputs); ``run`` takes them as inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import yaml

from pqlab import io, machine
from pqlab.errors import ParamsError
from pqlab.figures.case_transport import fig2_transport
from pqlab.figures.style import save
from pqlab.params import StudyParams, ThreadParams, ThreadSwitches
from pqlab.paths import ProjectPaths
from pqlab.run.grid import grid_points, run_grid, simulate_points
from pqlab.run.summary import summarise
from pqlab.thread.case_inputs import table1_inputs

VARIANTS = ("paper", "source_accurate")


@dataclass
class TransportResult:
    summaries: dict[str, pd.DataFrame]
    metrics: dict
    table1: pd.DataFrame
    figure: plt.Figure
    written: list[Path]


def load_configs(path: str | Path) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[float, float]]]:
    """Read ``name: {sizes: [s1, s2, s3, status], device_compute_ms: [before Sigma2, before status]}``
    (YAML or JSON; sizes from the CASE size model). Malformed entries raise ParamsError naming them."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ParamsError(f"cannot read configurations: {exc}", field=str(path)) from exc
    if not isinstance(data, dict) or not data:
        raise ParamsError("must map configuration names to their sizes", field=str(path))
    configs, compute = {}, {}
    for name, entry in data.items():
        where = f"{path}: {name}"
        if not isinstance(entry, dict) or set(entry) - {"sizes", "device_compute_ms"} or "sizes" not in entry:
            raise ParamsError("expected {sizes: [4 ints], device_compute_ms: [2 numbers]}", field=where)
        sizes = entry["sizes"]
        if not (isinstance(sizes, list) and len(sizes) == 4 and all(type(s) is int and s > 0 for s in sizes)):
            raise ParamsError(f"sizes: four positive integers expected, got {sizes!r}", field=where)
        cost = entry.get("device_compute_ms", [0.0, 0.0])
        if not (isinstance(cost, list) and len(cost) == 2 and all(type(c) in (int, float) and c >= 0 for c in cost)):
            raise ParamsError(f"device_compute_ms: two non-negative numbers expected, got {cost!r}", field=where)
        configs[str(name)] = tuple(sizes)
        compute[str(name)] = (float(cost[0]), float(cost[1]))
    return configs, compute


def variant_params(params: ThreadParams, variant: str) -> ThreadParams:
    if variant == "paper":
        return params
    return params.model_copy(update={"switches": ThreadSwitches.source_accurate()})


def _value(summary: pd.DataFrame, column: str, config: str, hops: int, loss: str, transport: str,
           sleepy: bool = False) -> float | None:
    row = summary[(summary["config"] == config) & (summary["hops"] == hops) & (summary["loss"] == loss)
                  & (summary["transport"] == transport) & (summary["sleepy"] == sleepy)]
    if len(row) != 1 or pd.isna(row[column].iloc[0]):
        return None
    return float(row[column].iloc[0])


def headline(summary: pd.DataFrame, roles: Mapping[str, str]) -> dict:
    """The §VI numbers, from one variant's summary (None where a configuration is absent)."""
    d3, c5 = roles.get("drop_in", ""), roles.get("smallest", "")
    med = lambda *a: _value(summary, "median_s", *a)  # noqa: E731
    out: dict = {}
    for transport in ("ipv6", "block", "pull"):
        out[f"drop_in_1hop_none_{transport}_s"] = med(d3, 1, "none", transport)
        out[f"drop_in_3hop_none_{transport}_s"] = med(d3, 3, "none", transport)
        out[f"drop_in_4hop_heavy_{transport}_s"] = med(d3, 4, "heavy_wifi", transport)
        out[f"drop_in_4hop_heavy_{transport}_failure_rate"] = _value(summary, "failure_rate", d3, 4, "heavy_wifi",
                                                                      transport)
    for hops in (3, 4):
        ip, blk = med(d3, hops, "heavy_wifi", "ipv6"), med(d3, hops, "heavy_wifi", "block")
        out[f"drop_in_ratio_ipv6_block_{hops}hop_heavy"] = ip / blk if ip and blk else None
        ip_s, blk_s = med(c5, hops, "heavy_wifi", "ipv6"), med(c5, hops, "heavy_wifi", "block")
        out[f"smallest_ratio_ipv6_block_{hops}hop_heavy"] = ip_s / blk_s if ip_s and blk_s else None
    out.update(drop_in_ratios(summary, d3))
    for hops in (2, 4):
        out[f"drop_in_spurious_{hops}hop_none"] = _value(summary, "mean_spurious", d3, hops, "none", "ipv6")
    keys = ["config", "hops", "loss", "sleepy"]
    pull = summary[summary["transport"] == "pull"].set_index(keys)["median_s"]
    block = summary[summary["transport"] == "block"].set_index(keys)["median_s"]
    diff = ((pull / block - 1.0) * 100.0).dropna()
    out["pull_vs_block_scenarios"] = len(diff)
    out["pull_vs_block_median_pct"] = float(diff.median()) if len(diff) else None
    out["pull_vs_block_min_pct"] = float(diff.min()) if len(diff) else None
    out["pull_vs_block_max_pct"] = float(diff.max()) if len(diff) else None
    out["pull_faster_scenarios"] = int((diff < 0).sum())
    sed = summary[summary["sleepy"] & (summary["transport"] == "ipv6") & (summary["loss"] == "heavy_wifi")]
    out["sed_ipv6_heavy_scenarios"] = len(sed)
    out["sed_ipv6_heavy_scenarios_with_failures"] = int((sed["failures"] > 0).sum())
    out["sed_ipv6_heavy_max_failure_rate"] = float(sed["failure_rate"].max()) if len(sed) else None
    segmented = summary[summary["transport"].isin(["block", "pull"])]
    for transport in ("block", "pull"):
        rows = segmented[segmented["transport"] == transport]
        out[f"{transport}_failures"] = int(rows["failures"].sum())
        out[f"{transport}_handshakes"] = int(rows["runs"].sum())
    for role in ("classical", "drop_in", "smallest", "key_exchange"):
        name = roles.get(role, "")
        rows = summary[(summary["config"] == name) & (summary["hops"] == 1) & (summary["loss"] == "none")
                       & ~summary["sleepy"] & summary["transport"].isin(["datagram", "block"])]
        out[f"radio_1hop_none_{role}_ms"] = float(rows["median_radio_ms"].iloc[0]) if len(rows) else None
    return out


def drop_in_ratios(summary: pd.DataFrame, config: str, hops: Sequence[int] = (3, 4)) -> dict:
    """Median time with IPv6 fragmentation / with block transfer for ``config`` (always-on device) at each of
    ``hops`` and every loss scenario, and their min and max (the paper's "1.8 to 2.6 times" at 3-4 hops)."""
    out: dict = {}
    for h in hops:
        for loss in sorted(summary["loss"].unique()):
            ip, blk = _value(summary, "median_s", config, h, loss, "ipv6"), _value(summary, "median_s", config, h,
                                                                                   loss, "block")
            if ip and blk:
                out[f"drop_in_ratio_{h}hop_{loss}"] = ip / blk
    values = list(out.values())
    # scenarios where no IPv6-fragmented handshake completed have no ratio; they are counted here
    out["drop_in_ratio_3to4hop_scenarios"] = len(values)
    out["drop_in_ratio_3to4hop_min"] = min(values) if values else None
    out["drop_in_ratio_3to4hop_max"] = max(values) if values else None
    return out


def channel_priority_sensitivity(
    summary: pd.DataFrame, configs: Mapping[str, Sequence[int]], params: ThreadParams,
    device_compute_ms: Mapping[str, tuple[float, float]] | None,
) -> dict:
    """The drop-in IPv6/block ratios at 3-4 hops under both channel-arbitration rules (``channel_priority``).

    The configured rule's numbers come from ``summary``; the other rule's from a rerun of just those
    scenarios (always-on device, IPv6 fragmentation and block transfer, every loss scenario).
    """
    d3 = params.figure_configs.get("drop_in", "")
    hops = tuple(h for h in params.hops if h in (3, 4))
    out: dict = {"configured": params.channel_priority}
    if d3 not in configs or not hops:
        return out
    out[params.channel_priority] = drop_in_ratios(summary, d3, hops)
    other = "message_age" if params.channel_priority == "node_arrival" else "node_arrival"
    flipped = params.model_copy(update={"channel_priority": other, "hops": hops})
    points = [p for p in grid_points({d3: configs[d3]}, flipped, device_compute_ms)
              if not p.scenario.sleepy and p.transport in ("ipv6", "block")]
    table = simulate_points(points, flipped, flipped.runs)
    rerun = summarise(table, params.bootstrap_resamples, params.confidence, 0)
    out[other] = drop_in_ratios(rerun, d3, hops)
    return out


def table1_times(summary: pd.DataFrame) -> pd.DataFrame:
    """Table I time columns: block transfer (one datagram where everything fits), always-on device."""
    rows = summary[summary["transport"].isin(["block", "datagram"]) & ~summary["sleepy"]]
    one = rows[(rows["hops"] == 1) & (rows["loss"] == "none")].set_index("config")["median_s"]
    three = rows[(rows["hops"] == 3) & (rows["loss"] == "heavy_wifi")].set_index("config")["median_s"]
    return pd.DataFrame({"config": one.index, "time_1hop_none_s": one.to_numpy(),
                         "time_3hop_heavy_s": three.reindex(one.index).to_numpy()})


def run(
    settings: StudyParams,
    paths: ProjectPaths,
    configs: Mapping[str, Sequence[int]],
    device_compute_ms: Mapping[str, tuple[float, float]] | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
) -> TransportResult:
    """Run both variants' grids (resumable), summarise, and write every output atomically."""
    paths.check_writable(paths.derived, paths.case_figs)
    params = settings.thread
    metadata = machine.run_metadata(params=settings.model_dump(mode="json"))
    summaries, metrics, written = {}, {"profile": settings.profile}, []
    for variant in VARIANTS:
        vp = variant_params(params, variant)
        suffix = "" if variant == "paper" else "_source_accurate"
        points = grid_points(configs, vp, device_compute_ms)
        table = run_grid(points, vp, paths.derived / f"thread_grid{suffix}.parquet", workers=workers,
                         scheduler=scheduler, progress=progress, metadata=metadata)
        summary = summarise(table, params.bootstrap_resamples, params.confidence, settings.seed)
        summaries[variant] = summary
        metrics[variant] = headline(summary, params.figure_configs)
        metrics[variant]["channel_priority"] = channel_priority_sensitivity(summary, configs, vp, device_compute_ms)
        written.append(io.write_parquet(paths.derived / f"thread_summary{suffix}.parquet", summary, metadata))
    paper = summaries["paper"]
    roles = params.figure_configs
    figure = fig2_transport(paper, roles.get("drop_in", ""), roles.get("smallest", ""), roles.get("classical", ""))
    table1 = table1_times(paper)
    sed = paper[paper["sleepy"]][["config", "hops", "loss", "transport", "runs", "failures", "failure_rate",
                                  "failed_in"]]
    radio = paper[(paper["hops"] == 1) & (paper["loss"] == "none") & ~paper["sleepy"]][
        ["config", "transport", "median_radio_ms"]]
    written += [
        *save(figure, paths.case_figs / "fig2_transport"),
        io.write_text(paths.case_figs / "table1_case_times.csv", table1.to_csv(index=False)),
        io.write_text(paths.case_figs / "table1_case_times.md", table1.round(3).to_markdown(index=False) + "\n"),
        io.write_text(paths.case_figs / "sed_failures.csv", sed.to_csv(index=False)),
        io.write_text(paths.case_figs / "radio_time.csv", radio.to_csv(index=False)),
        io.write_json(paths.derived / "thread_metrics.json", _jsonable(metrics)),
    ]
    plt.close(figure)
    return TransportResult(summaries, metrics, table1, figure, written)


def run_table1(settings: StudyParams, paths: ProjectPaths, cycles_path: str | Path, **kwargs) -> TransportResult:
    """``run`` for the Table I configurations named in ``thread.configurations``, with sizes from the CASE size
    model and device computation from ``cycles_path`` (params/pqm4_cycles.yaml)."""
    configs, compute = table1_inputs(settings.thread.configurations, cycles_path)
    return run(settings, paths, configs, compute, **kwargs)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value
