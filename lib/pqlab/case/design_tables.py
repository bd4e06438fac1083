"""The design-space tables: every point evaluated, Table I's Device PQ column, the fit and Pareto results."""

from __future__ import annotations

import pandas as pd

from pqlab.case import design_space as ds
from pqlab.case.config import AUTH_MODES, CACHE_MODES, DesignSpaceParams
from pqlab.case.configurations import TABLE1, CaseConfigError, table1_config
from pqlab.case.device_compute import CycleTable, device_pq_ms, responder_operations
from pqlab.errors import ParamsError

RESTRICTIONS = {"fips": (ds.FAMILY_FIPS,), "fips_falcon": (ds.FAMILY_FIPS, ds.FAMILY_FALCON), "all": ds.FAMILIES}


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


def build_space(p: DesignSpaceParams, cycles: CycleTable, limit_octets: int) -> pd.DataFrame:
    """Every point of the configured space, evaluated with the real encoder."""
    try:
        configs = ds.enumerate_configs(p.key_exchanges, p.noc, p.icac, p.rcac, parse_modes(p.modes), p.static_kem)
    except CaseConfigError as exc:
        raise ParamsError(str(exc), field="design_space") from exc
    return ds.evaluate(configs, cycles, limit_octets)


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


def classes(points: pd.DataFrame) -> pd.DataFrame:
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
        front = classes(ds.pareto_points(ds.restrict(space, families)))
        frames.append(front.assign(restriction=name, rank=range(1, len(front) + 1)))
    return pd.concat(frames, ignore_index=True)


def metrics(space: pd.DataFrame, device: pd.DataFrame, pareto: pd.DataFrame) -> dict:
    """The metrics JSON that REPORT.md reads."""
    smallest = {}
    for name, families in RESTRICTIONS.items():
        best = ds.smallest_largest_message(ds.restrict(space, families))
        smallest[name] = {"bytes": int(best["largest"].iloc[0]), "points": len(best),
                          "example": best["point"].iloc[0]}
    fits = space[space["fits"]]
    return {
        "points": len(space), "distinct_points": int(space["point"].nunique()),
        "device_pq": {r.config: {"ms": r.device_pq_ms} for r in device.itertuples()},
        "smallest_largest_message": smallest,
        "fits": {"points": len(fits), "key_exchanges": sorted(set(fits["key_exchange"])),
                 "cached": sorted(set(fits["cached"])), "noc": sorted(set(fits["noc"]))},
        "pareto": {name: {f"p{r.rank}": {"total_kB": round(r.total / 1000, 3), "device_ms": r.device_ms,
                                          "points": r.points}
                          for r in group.itertuples()}
                   for name, group in pareto.groupby("restriction", sort=False)},
    }


def fits_table(space: pd.DataFrame) -> pd.DataFrame:
    """The points whose every message fits the limit, identical points merged."""
    return classes(space[space["fits"]])
