"""Coverage: every table, figure and text result of both papers, and whether this run wrote what reproduces it."""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

import pandas as pd

from pqlab.report.schema import CoverageItem, Reference
from pqlab.report.verdicts import Verdict, in_pipeline

VERDICT_ORDER = (Verdict.REPRODUCED, Verdict.DIFFERS, Verdict.SENSITIVITY, Verdict.NOT_RUN)


def output_exists(root: Path, output: str) -> bool:
    """A path with a suffix must exist as given; a bare stem counts when any ``stem.*`` file exists."""
    path = root / output
    if path.suffix:
        return path.is_file()
    return path.parent.is_dir() and any(p.is_file() for p in path.parent.glob(f"{path.name}.*"))


def verdict_counts(table: pd.DataFrame, patterns: tuple[str, ...]) -> str:
    """"12 reproduced, 2 differs" over the rows whose id matches one of ``patterns`` (fnmatch)."""
    if not patterns or table.empty:
        return ""
    chosen = table[table["id"].map(lambda i: any(fnmatchcase(i, p) for p in patterns))]
    if chosen.empty:
        return "no rows yet"
    counts = chosen["verdict"].value_counts()
    return ", ".join(f"{counts[v.value]} {v.value}" for v in VERDICT_ORDER if v.value in counts)


def status(item: CoverageItem, root: Path, pipeline: Callable[[str], bool] = in_pipeline) -> tuple[str, str]:
    """(status, detail): reproduced, implemented, partial, not run here, open, illustration or cited."""
    present = [o for o in item.outputs if output_exists(root, o)]
    missing = [o for o in item.outputs if o not in present]
    if item.kind in ("illustration", "cited"):
        return item.kind, item.note or ""
    if item.stage is None:
        return "open", item.note or ""
    if not pipeline(item.stage):
        return "open", f"stage `{item.stage}` is not in this pipeline yet; it will write " + \
            (", ".join(f"`{o}`" for o in item.outputs) or "its metrics")
    if item.outputs and not present:
        return "not run here", f"stage `{item.stage}` has not written " + ", ".join(f"`{o}`" for o in missing)
    if missing:
        return "partial", "missing " + ", ".join(f"`{o}`" for o in missing)
    return ("implemented", item.note or "") if item.kind == "model" else ("reproduced", "")


def coverage_table(reference: Reference, table: pd.DataFrame, root: Path,
                   pipeline: Callable[[str], bool] = in_pipeline) -> pd.DataFrame:
    """One row per coverage item: paper, item, stage, outputs, status, detail, and the verdicts of its rows."""
    rows = []
    for item in reference.coverage:
        state, detail = status(item, root, pipeline)
        rows.append({"id": item.id, "paper_id": item.paper, "item": item.item, "what": item.what,
                     "stage": item.stage, "outputs": item.outputs, "status": state,
                     "detail": "; ".join(dict.fromkeys(x for x in (detail, item.note) if x)),
                     "rows": verdict_counts(table, item.rows)})
    return pd.DataFrame(rows, columns=["id", "paper_id", "item", "what", "stage", "outputs", "status", "detail",
                                       "rows"])
