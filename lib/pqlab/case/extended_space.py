"""The extended design space: the paper's dimensions with newer algorithms added, its fronts and what is new on them.

Every dimension is the paper's members (``design_space`` in params, in their order) followed by the additions
(``extended_design_space``); the points are built and evaluated exactly as the paper's (``design_space.evaluate``:
the real encoder, pqm4 cycle counts), so the paper's 3,780 points are a subset with identical numbers. Two rules
differ from the paper's figure, both because newer algorithms need them: a point whose device computation has an
operation without a Cortex-M4 cycle count is kept out of the (bytes, device ms) fronts — its device cost is
unknown, not zero — and is reported apart on its bytes alone; and families name the newer algorithms. The fronts
of the paper's own points are recomputed under the same rules, so "new on a front" compares like with like.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pandas as pd
from tqdm.auto import tqdm

from pqlab.case import design_space as ds
from pqlab.case import design_tables
from pqlab.case.certificates import parts_of
from pqlab.case.config import DesignSpaceParams, ExtendedDesignSpaceParams
from pqlab.case.configurations import CaseConfig, CaseConfigError
from pqlab.case.device_compute import CycleTable
from pqlab.errors import ParamsError

HQC = frozenset({"HQC-1", "HQC-3", "HQC-5"})
FN_DSA = frozenset({"Falcon-512", "FN-DSA-512", "FN-DSA-1024"})
ROUND2_ADDITIONAL = frozenset({"MAYO-1", "MAYO-2", "MAYO-3", "MAYO-5", "SNOVA-24-5-4", "SNOVA-25-8-3", "SNOVA-37-17-2",
                               "UOV-Is-pkc", "UOV-Ip", "UOV-Ip-pkc"})
NEWER_CANDIDATES = frozenset({"SQIsign-I", "SQIsign-III", "SQIsign-V", "HAWK-512", "HAWK-1024", "CROSS-RSDP-128-small",
                              "CROSS-RSDPG-128-small", "CROSS-RSDPG-128-balanced", "CROSS-RSDPG-128-fast"})

FAMILY_FIPS = ds.FAMILY_FIPS
FAMILY_FALCON = "adds Falcon-512 / FN-DSA"
FAMILY_HQC = "HQC key exchange"
FAMILY_MSU = "uses MAYO, SNOVA or UOV"
FAMILY_NEWER = "uses SQIsign, HAWK or CROSS"
FAMILY_CLASSICAL = ds.FAMILY_CLASSICAL
FAMILIES = (FAMILY_FIPS, FAMILY_FALCON, FAMILY_HQC, FAMILY_MSU, FAMILY_NEWER, FAMILY_CLASSICAL)
# Fronts: FIPS 203/204/205 only; + FN-DSA; every NIST selection (+ HQC); everything with a known device cost.
RESTRICTIONS = {
    "fips": (FAMILY_FIPS,), "fips_falcon": (FAMILY_FIPS, FAMILY_FALCON),
    "nist_selected": (FAMILY_FIPS, FAMILY_FALCON, FAMILY_HQC), "all": FAMILIES,
}
KEY_COLUMNS = ("key_exchange", "noc", "icac", "rcac", "mode")


def family(config: CaseConfig) -> str:
    """The least-established family a point relies on: ECDSA apart, then SQIsign/HAWK/CROSS, MAYO/SNOVA/UOV,
    HQC, FN-DSA, FIPS 203/204/205 only."""
    signatures = {p for alg in (config.noc, config.icac, config.rcac) if alg for p in parts_of(alg)}
    if signatures & ds.CLASSICAL_SIGNATURES:
        return FAMILY_CLASSICAL
    if signatures & NEWER_CANDIDATES:
        return FAMILY_NEWER
    if signatures & ROUND2_ADDITIONAL:
        return FAMILY_MSU
    if set(config.key_exchange.split("+")) & HQC:
        return FAMILY_HQC
    if signatures & FN_DSA:
        return FAMILY_FALCON
    return FAMILY_FIPS


def dimensions(paper: DesignSpaceParams, added: ExtendedDesignSpaceParams) -> dict[str, tuple]:
    """Each dimension: the paper's members, then the additions (an addition the paper already has is an error)."""
    out = {}
    for name, field in (("key_exchanges", "add_key_exchanges"), ("noc", "add_noc"), ("icac", "add_icac"),
                        ("rcac", "add_rcac")):
        base, extra = getattr(paper, name), getattr(added, field)
        for index, member in enumerate(extra):
            if member in base:
                raise ParamsError(f"{member!r} is already in design_space.{name}",
                                  field=f"extended_design_space.{field}[{index}]")
        out[name] = tuple(base) + tuple(extra)
    out["modes"] = tuple(paper.modes)
    return out


def build(paper: DesignSpaceParams, added: ExtendedDesignSpaceParams, cycles: CycleTable, limit: int,
          *, progress: bool = True) -> pd.DataFrame:
    """Every point of the extended space, evaluated as the paper's; ``in_paper_space`` marks the paper's points,
    ``device_known`` the points whose every responder operation has a cycle count."""
    dims = dimensions(paper, added)
    try:
        configs = ds.enumerate_configs(dims["key_exchanges"], dims["noc"], dims["icac"], dims["rcac"],
                                       design_tables.parse_modes(dims["modes"]), paper.static_kem)
    except CaseConfigError as exc:
        raise ParamsError(str(exc), field="extended_design_space") from exc
    paper_keys = set(itertools.product(paper.key_exchanges, paper.noc, [i or "none" for i in paper.icac], paper.rcac,
                                       paper.modes))
    chunks, size = [], 500
    bar = tqdm(total=len(configs), desc="extended design space", unit="point", disable=not progress)
    for start in range(0, len(configs), size):
        part = configs[start:start + size]
        chunks.append(ds.evaluate(part, cycles, limit).assign(family=[family(c) for c in part]))
        bar.update(len(part))
    bar.close()
    space = pd.concat(chunks, ignore_index=True)
    space["in_paper_space"] = [tuple(r) in paper_keys for r in space[list(KEY_COLUMNS)].itertuples(index=False)]
    space["device_known"] = space["device_unmeasured"] == ""
    return space


def classes(points: pd.DataFrame) -> pd.DataFrame:
    """``design_tables.classes`` (identical (bytes, ms) points merged), each class labelled with the most
    established family among its members: the best choice a designer has for that cost."""
    merged = design_tables.classes(points)
    if merged.empty:
        return merged
    rank = {name: index for index, name in enumerate(FAMILIES)}
    # the same grouping, in the same order, as design_tables.classes
    merged["family"] = [FAMILIES[min(rank[f] for f in group["family"])]
                        for _, group in points.groupby(["total", "device_ms"], sort=False)]
    return merged


def _front(points: pd.DataFrame, families: Iterable[str]) -> pd.DataFrame:
    """The (total bytes, device ms) front of the points with a known device cost in ``families``, merged."""
    return classes(ds.pareto_points(ds.restrict(points[points["device_known"]], families)))


def fronts(space: pd.DataFrame) -> pd.DataFrame:
    """Per restriction, the extended front; per (bytes, ms) class, whether the paper's points alone (same rule)
    had it on their front and how many new points it holds. A class that was not on the paper points' front
    consists of new points only (a paper point there would have been on that front): it *enters* the front."""
    paper = space[space["in_paper_space"]]
    frames = []
    for name, families in RESTRICTIONS.items():
        front = _front(space, families)
        before = _front(paper, families)
        known = set(zip(before["total"], before["device_ms"], strict=True))
        members = ds.pareto_points(ds.restrict(space[space["device_known"]], families))
        new = members[~members["in_paper_space"]]
        counts = new.groupby([new["total"], new["device_ms"].round(2)]).size()
        front["new_points"] = [int(counts.get((t, m), 0)) for t, m in zip(front["total"], front["device_ms"],
                                                                          strict=True)]
        front["was_on_paper_front"] = [(t, m) in known for t, m in zip(front["total"], front["device_ms"], strict=True)]
        frames.append(front.assign(restriction=name, rank=range(1, len(front) + 1)))
    return pd.concat(frames, ignore_index=True)


def displaced(space: pd.DataFrame) -> pd.DataFrame:
    """Per restriction, the classes on the paper points' front (same rule) that the extended front no longer has."""
    rows = []
    paper = space[space["in_paper_space"]]
    for name, families in RESTRICTIONS.items():
        now = _front(space, families)
        kept = set(zip(now["total"], now["device_ms"], strict=True))
        for row in _front(paper, families).itertuples():
            if (row.total, row.device_ms) not in kept:
                rows.append({"restriction": name, "total": row.total, "device_ms": row.device_ms, "points": row.points,
                             "key_exchange": row.key_exchange, "noc": row.noc, "icac": row.icac, "rcac": row.rcac,
                             "mode": row.mode})
    return pd.DataFrame(rows, columns=["restriction", "total", "device_ms", "points", *KEY_COLUMNS])


def unranked(space: pd.DataFrame) -> pd.DataFrame:
    """Points kept off the fronts (an operation without a cycle count), smallest largest message first, merged by
    (largest, total) with the operations that have no number."""
    points = space[~space["device_known"]]
    rows = []
    for (largest, total), group in points.groupby(["largest", "total"], sort=True):
        rows.append({"largest": int(largest), "total": int(total), "points": len(group),
                     "fits": bool(group["fits"].iloc[0]),
                     **{c: group[c].iloc[0] if group[c].nunique() == 1 else "*" for c in KEY_COLUMNS},
                     "no_cycle_count": ", ".join(sorted(set(", ".join(group["device_unmeasured"]).split(", "))))})
    return pd.DataFrame(rows)


def fit_classes(points: pd.DataFrame) -> pd.DataFrame:
    """The points whose every message fits, merged as :func:`classes`, with the operations that have no cycle
    count (their ``device_ms`` is then the known part only, a lower bound)."""
    merged = classes(points[points["fits"]])
    if merged.empty:
        return merged.assign(no_cycle_count=[])
    merged["no_cycle_count"] = [", ".join(sorted({op for text in group["device_unmeasured"] if text
                                                  for op in text.split(", ")}))
                                for _, group in points[points["fits"]].groupby(["total", "device_ms"], sort=False)]
    return merged
