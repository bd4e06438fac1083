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


VARIANT_COLUMNS = ["case", "table", "class", "kind", "adversary action", "paper", "hardened", "expected paper",
                   "expected hardened", "attack succeeds (paper)", "attack succeeds (hardened)", "pass"]


def _observed(group: pd.DataFrame) -> str:
    return " / ".join(sorted(set(group["observed code"])))


def variant_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Attack × variant → observed code: one row per case over every repeat of both variants."""
    rows = []
    for case_id, group in runs.groupby("case", sort=False):
        first = group.iloc[0]
        by = {variant: group[group["variant"] == variant] for variant in ("paper", "hardened")}
        row = {"case": case_id, "table": first["table"], "class": first["class"], "kind": first["kind"],
               "adversary action": first["adversary action"]}
        for variant, rows_of in by.items():
            row[variant] = _observed(rows_of)
            row[f"expected {variant}"] = rows_of.iloc[0]["expected code"]
            succeeded = set(rows_of["attack_succeeded"].dropna())
            row[f"attack succeeds ({variant})"] = None if not succeeded else bool(any(succeeded))
        row["pass"] = bool(group["pass"].all() and all(len(set(r["observed code"])) == 1 for r in by.values()))
        rows.append(row)
    frame = pd.DataFrame(rows)
    tables = {"table6": 0, "extra": 1, "new": 2, "outsider": 3}
    order = frame["table"].map(tables).astype(str) + frame["class"].eq("P").astype(int).astype(str) + frame["case"]
    return frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)[VARIANT_COLUMNS]


def _set_counts(cases: pd.DataFrame) -> dict:
    """A case set's counts: defects each variant stops, gaps (attacks or denials that succeed under the paper's design
    only) and every case's codes."""
    defects, gaps = cases[cases["kind"] == "defect"], cases[cases["kind"] == "gap"]
    return {
        "cases_total": len(cases), "as_expected": int(cases["pass"].sum()),
        "defects": {"total": len(defects),
                    "stopped_by_paper": int((~defects["attack succeeds (paper)"].astype(bool)).sum()),
                    "stopped_by_hardened": int((~defects["attack succeeds (hardened)"].astype(bool)).sum())},
        "gaps": {"total": len(gaps), "succeed_under_paper": int(gaps["attack succeeds (paper)"].astype(bool).sum()),
                 "stopped_by_hardened": int((~gaps["attack succeeds (hardened)"].astype(bool)).sum())},
        "codes": {r["case"]: {"paper": r["paper"], "hardened": r["hardened"], "kind": r["kind"]}
                  for r in cases.to_dict("records")},
    }


def variant_metrics(table: pd.DataFrame, seconds: dict[str, list[float]]) -> dict:
    """Per variant: cases as expected and the attacks that succeed; issue 27's sixteen and issue 35's outsider cases:
    defects stopped by both variants, gaps that succeed under the paper's design and not the hardened one, and every
    code."""
    attacks = table[table["class"] != "P"]
    out: dict = {"variants": {}}
    for variant in ("paper", "hardened"):
        succeeded = attacks[attacks[f"attack succeeds ({variant})"].fillna(False).astype(bool)]
        out["variants"][variant] = {
            "cases_total": len(table), "as_expected": int((table[variant] == table[f"expected {variant}"]).sum()),
            "attacks_total": len(attacks), "attacks_succeeded": list(succeeded["case"]),
            "matrix_seconds_max": max(seconds[variant]) if seconds.get(variant) else None}
    new, outsider = table[table["table"] == "new"], table[table["table"] == "outsider"]
    out["issue27"] = _set_counts(new)
    out["outsider"] = _set_counts(outsider)
    for row in outsider.to_dict("records"):
        out["outsider"]["codes"][row["case"]]["action"] = row["adversary action"]
    return out
