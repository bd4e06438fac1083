"""The attack matrix's runs summarised: one row per case over all repeats, and the headline counts."""

from __future__ import annotations

import pandas as pd

TABLE_COLUMNS = ["case", "class", "adversary action", "expected code", "observed code", "pass", "runs passed"]


def summarise_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per case over all repeats: passes only if every repeat passed with the same observed code."""
    rows = []
    for case_id, group in runs.groupby("case", sort=False):
        observed = sorted(set(group["observed code"]))
        first = group.iloc[0]
        rows.append({"case": case_id, "class": first["class"], "adversary action": first["adversary action"],
                     "expected code": first["expected code"], "observed code": " / ".join(observed),
                     "pass": bool(group["pass"].all() and len(observed) == 1),
                     "runs passed": f"{int(group['pass'].sum())}/{len(group)}", "table": first["table"],
                     "median_ms": 1e3 * float(group["seconds"].median())})
    frame = pd.DataFrame(rows)
    order = frame["table"].ne("table6").astype(int).astype(str) + frame["class"].eq("P").astype(int).astype(str) \
        + frame["case"]
    return frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def matrix_metrics(summary: pd.DataFrame, runs: pd.DataFrame, matrix_seconds: list[float]) -> dict:
    table6 = summary[summary["table"] == "table6"]
    attacks, controls = table6[table6["class"] != "P"], table6[table6["class"] == "P"]
    extra = summary[summary["table"] == "extra"]
    p5 = runs[runs["case"] == "P5"]["counts"]
    return {
        "table6": {
            "cases_total": len(attacks), "cases_passed": int(attacks["pass"].sum()),
            "controls_total": len(controls), "controls_passed": int(controls["pass"].sum()),
            "by_class": {c: int((attacks["class"] == c).sum()) for c in ("C", "D", "S")},
            "by_class_passed": {c: int(attacks[attacks["class"] == c]["pass"].sum()) for c in ("C", "D", "S")},
        },
        "extra": {"cases_total": len(extra), "cases_passed": int(extra["pass"].sum())},
        "p5": {"records": int(p5.iloc[0]["records"]), "fsyncs": sorted({int(c["fsyncs"]) for c in p5}),
               "fsync_count": int(p5.iloc[0]["fsyncs"]), "checkpoints": int(p5.iloc[0]["checkpoints"])},
        "repeats": int(runs["repeat"].nunique()),
        "matrix_seconds_max": max(matrix_seconds),
        "matrix_seconds": matrix_seconds,
    }
