"""Coverage: every table, figure and text result of both papers, its status computed from its main rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pqlab.report.schema import CoverageItem, Reference
from pqlab.report.verdicts import Verdict

_SHOWN_IDS = 8


def output_exists(root: Path, output: str) -> bool:
    """A path with a suffix must exist as given; a bare stem counts when any ``stem.*`` file exists."""
    path = root / output
    if path.suffix:
        return path.is_file()
    return path.parent.is_dir() and any(p.is_file() for p in path.parent.glob(f"{path.name}.*"))


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOWN_IDS]) + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")


def status(item: CoverageItem, reference: Reference, verdicts: dict[str, str]) -> tuple[str, str]:
    """(status, detail) from the item's main rows: reproduced only when every row is; "partial: a of b" with the
    ids that are not; not run here when none ran."""
    ids = [q.id for q in reference.rows_of(item) if q.kind != "setting"]
    settings = len(reference.rows_of(item)) - len(ids)
    by = {v: [i for i in ids if verdicts.get(i) == v.value] for v in Verdict}
    parts = [f"{label}: {_ids(by[v])}" for v, label in ((Verdict.DIFFERS, "differs"),
                                                       (Verdict.INCONCLUSIVE, "inconclusive"),
                                                       (Verdict.FAILED, "measurement failed"),
                                                       (Verdict.NOT_JUDGED, "not judged"),
                                                       (Verdict.NOT_RUN, "not run"))
             if by[v]]
    apart = f"; {settings} setting rows apart" if settings else ""
    if item.kind != "result":  # a diagram or the model itself: its rows check what it shows, not a result
        reproduced = len(by[Verdict.REPRODUCED])
        return item.kind, (f"{reproduced} of {len(ids)} related rows reproduced" + (f" ({'; '.join(parts)})"
                                                                                    if parts else "") + apart)
    if not ids:
        return "settings only", f"{settings} setting rows: nothing this run produced"
    if len(by[Verdict.NOT_RUN]) == len(ids):
        return "not run here", f"{len(ids)} rows, none run here" + apart
    reproduced = len(by[Verdict.REPRODUCED])
    if reproduced == len(ids):
        return "reproduced", f"all {len(ids)} rows" + apart
    return f"partial: {reproduced} of {len(ids)}", "; ".join(parts) + apart


def coverage_table(reference: Reference, table: pd.DataFrame, root: Path) -> pd.DataFrame:
    """One row per coverage item: paper, item, stage, outputs (and which are missing), status from its main rows."""
    verdicts = dict(zip(table["id"], table["verdict"], strict=True))
    rows = []
    for item in reference.coverage:
        state, detail = status(item, reference, verdicts)
        missing = [o for o in item.outputs if not output_exists(root, o)] if item.kind == "result" else []
        rows.append({"id": item.id, "paper_id": item.paper, "item": item.item, "what": item.what,
                     "stage": item.stage, "outputs": item.outputs, "missing_outputs": missing, "status": state,
                     "detail": detail, "kind": item.kind, "note": item.note or "",
                     "rows": len(reference.rows_of(item))})
    return pd.DataFrame(rows, columns=["id", "paper_id", "item", "what", "stage", "outputs", "missing_outputs",
                                       "status", "detail", "kind", "note", "rows"])
