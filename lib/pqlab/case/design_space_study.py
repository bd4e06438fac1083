"""Run the design-space study: all points, Table I's Device PQ column, fit and Pareto results, Fig. 6."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from pqlab import io, machine
from pqlab.case import design_space as ds
from pqlab.case.configurations import TABLE1, CaseConfigError, table1_config
from pqlab.case.device_compute import CycleTable, device_pq_ms, load_cycles, responder_operations
from pqlab.errors import ParamsError
from pqlab.figures.case import fig6_design_space
from pqlab.figures.style import save
from pqlab.params import DesignSpaceParams, StudyParams
from pqlab.paths import ProjectPaths

AUTH_MODES = ("sig", "kem", "kem-pdk")
CACHE_MODES = ("none", "responder", "both")
RESTRICTIONS = {"fips": (ds.FAMILY_FIPS,), "fips_falcon": (ds.FAMILY_FIPS, ds.FAMILY_FALCON), "all": ds.FAMILIES}


@dataclass
class DesignSpaceResult:
    """Everything the study produced, for the notebook to show."""

    space: pd.DataFrame
    device_pq: pd.DataFrame
    pareto: pd.DataFrame
    smallest_largest: pd.DataFrame
    fits: pd.DataFrame
    metrics: dict
    figure: plt.Figure
    written: list[Path]


def parse_modes(modes: tuple[str, ...]) -> list[ds.Mode]:
    """``auth/cached`` strings to modes, or a ParamsError naming the bad entry."""
    parsed = []
    for index, text in enumerate(modes):
        mode = ds.Mode.parse(text)
        if mode.auth not in AUTH_MODES or mode.cached not in CACHE_MODES:
            raise ParamsError(f"{text!r} is not auth/cached with auth in {AUTH_MODES} and cached in {CACHE_MODES}",
                              field=f"design_space.modes[{index}]")
        parsed.append(mode)
    return parsed


def build_space(p: DesignSpaceParams, cycles: CycleTable) -> pd.DataFrame:
    """Every point of the configured space, evaluated with the real encoder."""
    try:
        configs = ds.enumerate_configs(p.key_exchanges, p.noc, p.icac, p.rcac, parse_modes(p.modes), p.static_kem)
    except CaseConfigError as exc:
        raise ParamsError(str(exc), field="design_space") from exc
    return ds.evaluate(configs, cycles, p.limit_octets)


def device_pq_table(names: tuple[str, ...], cycles: CycleTable) -> pd.DataFrame:
    """Table I's "Device PQ [ms]" column: the responder's post-quantum operations per configuration."""
    rows = []
    for name in names:
        try:
            config = table1_config(name)
        except CaseConfigError as exc:
            known = ", ".join(c.name for c in TABLE1)
            raise ParamsError(f"{exc}; known: {known}", field="design_space.configurations") from exc
        cost = device_pq_ms(config, cycles)
        pq_ops = [f"{o.operation} {o.algorithm}" for o in responder_operations(config)
                  if cycles.milliseconds(o.algorithm, o.operation) != 0.0]
        rows.append({"config": name, "key_exchange": config.key_exchange, "chain": config.chain_label,
                     "auth": config.auth, "cached": config.cached, "device_pq_ms": round(cost.milliseconds, 2),
                     "pq_operations": "; ".join(pq_ops) or "none (classical only)",
                     "unmeasured": ", ".join(cost.unmeasured)})
    return pd.DataFrame(rows)


def _classes(points: pd.DataFrame) -> pd.DataFrame:
    """Points with identical (total, device ms) merged into one row, with how many there are and what they share."""
    rows = []
    for (total, ms), group in points.groupby(["total", "device_ms"], sort=False):
        shared = {col: group[col].iloc[0] if group[col].nunique() == 1 else "*"
                  for col in ("key_exchange", "noc", "icac", "rcac", "mode")}
        rows.append({"total": int(total), "device_ms": round(float(ms), 2), "largest": int(group["largest"].max()),
                     "points": len(group), **shared, "family": group["family"].iloc[0]})
    return pd.DataFrame(rows)


def pareto_table(space: pd.DataFrame) -> pd.DataFrame:
    """The Pareto front under each restriction, identical points merged, cheapest device first."""
    frames = []
    for name, families in RESTRICTIONS.items():
        front = _classes(ds.pareto_points(ds.restrict(space, families)))
        frames.append(front.assign(restriction=name, rank=range(1, len(front) + 1)))
    return pd.concat(frames, ignore_index=True)


def metrics(space: pd.DataFrame, device: pd.DataFrame, pareto: pd.DataFrame, seconds: float) -> dict:
    """The metrics JSON that REPORT.md reads."""
    smallest = {}
    for name, families in RESTRICTIONS.items():
        best = ds.smallest_largest_message(ds.restrict(space, families))
        smallest[name] = {"bytes": int(best["largest"].iloc[0]), "points": len(best),
                          "example": best["point"].iloc[0]}
    fits = space[space["fits"]]
    return {
        "points": len(space), "distinct_points": int(space["point"].nunique()),
        "compute_seconds": round(seconds, 3),
        "device_pq": {r.config: {"ms": r.device_pq_ms} for r in device.itertuples()},
        "smallest_largest_message": smallest,
        "fits": {"points": len(fits), "key_exchanges": sorted(set(fits["key_exchange"])),
                 "cached": sorted(set(fits["cached"])), "noc": sorted(set(fits["noc"]))},
        "pareto": {name: {f"p{r.rank}": {"total_kB": round(r.total / 1000, 3), "device_ms": r.device_ms,
                                          "points": r.points}
                          for r in group.itertuples()}
                   for name, group in pareto.groupby("restriction", sort=False)},
    }


def run(settings: StudyParams, paths: ProjectPaths) -> DesignSpaceResult:
    """Compute the whole space, tabulate, plot and write the outputs."""
    p = settings.design_space
    paths.check_writable(paths.derived, paths.case_figs)
    cycles = load_cycles(paths.root / "params" / p.cycles_file)
    device = device_pq_table(p.configurations, cycles)
    start = time.perf_counter()
    space = build_space(p, cycles)
    seconds = time.perf_counter() - start
    pareto = pareto_table(space)
    smallest = pd.concat([ds.smallest_largest_message(ds.restrict(space, fam)).assign(restriction=name)
                          for name, fam in RESTRICTIONS.items()], ignore_index=True)
    fits = _classes(space[space["fits"]])
    headline = metrics(space, device, pareto, seconds) | {"profile": settings.profile}
    figure = fig6_design_space(space, pareto)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json")) | {"cycles_source": cycles.source_commit}
    written = [
        io.write_parquet(paths.derived / "design_space.parquet", space, metadata),
        io.write_text(paths.case_figs / "table1_device_pq.csv", device.to_csv(index=False)),
        io.write_text(paths.case_figs / "table1_device_pq.md", device.to_markdown(index=False) + "\n"),
        io.write_text(paths.case_figs / "design_space_pareto.csv", pareto.to_csv(index=False)),
        io.write_text(paths.case_figs / "design_space_pareto.md", pareto.to_markdown(index=False) + "\n"),
        io.write_text(paths.case_figs / "design_space_fits.md", fits.to_markdown(index=False) + "\n"),
        *save(figure, paths.case_figs / "fig6_design_space"),
        io.write_json(paths.derived / "design_space_metrics.json", headline),
    ]
    plt.close(figure)
    return DesignSpaceResult(space, device, pareto, smallest, fits, headline, figure, written)
