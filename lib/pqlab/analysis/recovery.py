"""AMORT-V1 §IV-E, §V-H from the recovery raw samples: Table IV, crash injection, restart loss, reservation cost."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pqlab.amort.recovery.cases import ARMS, CRASH_CASES, SCENARIOS
from pqlab.amort.recovery.sizing import min_window, nv_writes

ARM_LABELS = {"fresh": "fresh epoch", "naive": "unanchored (naive)", "tpm": "TPM-backed"}


def _frac(n: int, total: int) -> str:
    return f"{n}/{total}"


def _median(series: pd.Series) -> float | None:
    values = series.dropna()
    return float(values.median()) if len(values) else None


def table4(arms: pd.DataFrame) -> pd.DataFrame:
    """Table IV: per scenario and arm — new epochs, stale states detected, time to ready, re-issued numbers."""
    rows = []
    for scenario in SCENARIOS:
        for arm in ARMS:
            g = arms[(arms["scenario"] == scenario) & (arms["arm"] == arm)]
            n = len(g)
            if not n:
                continue
            rows.append({
                "scenario": scenario, "arm": arm, "trials": n,
                "new epoch": _frac(int(g["new_epoch"].sum()), n),
                "stale detected": _frac(int(g["stale_detected"].sum()), n),
                "ready ms (median)": _median(g["ready_ms"]),
                "ready ms (p95)": float(np.percentile(g["ready_ms"].dropna(), 95)) if g["ready_ms"].notna().any()
                else None,
                "seq. reuse": int(g["reissued"].sum()),
                "re-issued per trial (max)": int(g["reissued"].max()),
                "RESUME rejected by controller": _frac(int((g["resume_rejected"] != "").sum()), n),
                "numbers skipped": int(g["skipped"].sum()),
                "killed by SIGKILL": _frac(int(g["killed_by_sigkill"].sum()), n),
            })
    return pd.DataFrame(rows)


def crash_table(crashes: pd.DataFrame) -> pd.DataFrame:
    """Per crash point: how many trials resumed, failed secure, or re-used a sequence number."""
    rows = []
    for case, (hook, expected) in CRASH_CASES.items():
        g = crashes[crashes["case"] == case]
        if not len(g):
            continue
        rows.append({"case": case, "hook": hook, "trials": len(g),
                     "killed by SIGKILL": _frac(int(g["killed_by_sigkill"].sum()), len(g)),
                     "resumed": int((g["outcome"] == "resumed").sum()),
                     "failed secure": int((g["outcome"] == "failed_secure").sum()),
                     "sequence reuse": int((g["outcome"] == "sequence_reuse").sum()),
                     "other": int((g["outcome"] == "other").sum()),
                     "expected": expected, "as expected": bool((g["outcome"] == expected).all())})
    return pd.DataFrame(rows)


def restart_table(restart: pd.DataFrame, k: int) -> pd.DataFrame:
    """Interrupted vs clean epochs: records lost (from EPOCH_CLOSE) and ERR_EVIDENCE_INCOMPLETE raised."""
    rows = []
    for label, g in (("interrupted (SIGKILL)", restart[restart["interrupted"]]),
                     ("clean", restart[~restart["interrupted"]])):
        if not len(g):
            continue
        rows.append({"epochs": label, "count": len(g), "lost (median)": _median(g["lost"]),
                     "lost (max)": int(g["lost"].max()), "lost total": int(g["lost"].sum()),
                     "epochs with loss": int((g["lost"] > 0).sum()),
                     "ERR_EVIDENCE_INCOMPLETE": int(g["err_evidence_incomplete"].sum()),
                     "bounded by k": bool((g["lost"] < k).all()), "k": k})
    return pd.DataFrame(rows)


def _cell(arms: pd.DataFrame, scenario: str, arm: str) -> dict[str, Any]:
    g = arms[(arms["scenario"] == scenario) & (arms["arm"] == arm)]
    n = len(g)
    return {"trials": n, "new_epoch": int(g["new_epoch"].sum()),
            "new_epoch_fraction": float(g["new_epoch"].mean()) if n else None,
            "stale_detected": int(g["stale_detected"].sum()),
            "stale_detected_fraction": float(g["stale_detected"].mean()) if n else None,
            "reissued": int(g["reissued"].sum()),
            "reissued_per_trial_mean": float(g["reissued"].mean()) if n else None,
            "ready_ms_median": _median(g["ready_ms"]), "spawn_to_ready_ms_median": _median(g["spawn_to_ready_ms"]),
            "killed_by_sigkill": int(g["killed_by_sigkill"].sum())}


def metrics(arms: pd.DataFrame, restart: pd.DataFrame, crashes: pd.DataFrame, reservations: pd.DataFrame, *,
            k: int, window: int, sizing: dict[str, float]) -> dict[str, Any]:
    """Headline numbers for REPORT.md (counts from the trials; timings are this machine's and this TPM's)."""
    table = {s: {a: _cell(arms, s, a) for a in ARMS} for s in SCENARIOS}
    interrupted = restart[restart["interrupted"]] if len(restart) else restart
    clean = restart[~restart["interrupted"]] if len(restart) else restart
    first = interrupted.sort_values(["trial", "epoch"]).head(2)["lost"].tolist() if len(interrupted) else []
    res = {}
    for arm in ("naive", "tpm", "tpm_check"):
        g = reservations[reservations["arm"] == arm]
        res[arm] = {"samples": len(g), "total_ms_median": _median(g["total_ms"]),
                    "increment_ms_median": _median(g["increment_ms"]), "read_ms_median": _median(g["read_ms"]),
                    "write_ms_median": _median(g["write_ms"])}
    budget, rate, years = int(sizing["nv_write_budget"]), sizing["report_rate_hz"], sizing["service_years"]
    r_min = min_window(budget, rate, years, sizing.get("days_per_year", 365))
    crash_ok = bool(crashes["fails_secure_or_resumes"].all()) if len(crashes) else None
    return {
        "window": window, "k": k,
        "table4": table,
        "rollback": {"naive_reissued": table["rollback"]["naive"]["reissued"],
                     "tpm_reissued": table["rollback"]["tpm"]["reissued"],
                     "tpm_stale_detected": table["rollback"]["tpm"]["stale_detected"],
                     "trials_per_arm": table["rollback"]["tpm"]["trials"]},
        "restart": {"interrupted_epochs": len(interrupted),
                    "first_trial_lost": first,
                    "first_interrupted_lost": first[0] if first else None,
                    "second_interrupted_lost": first[1] if len(first) > 1 else None,
                    "lost_max": int(interrupted["lost"].max()) if len(interrupted) else None,
                    "err_evidence_incomplete": int(interrupted["err_evidence_incomplete"].sum()),
                    "epochs_with_loss": int((interrupted["lost"] > 0).sum()) if len(interrupted) else 0,
                    "clean_epochs": len(clean), "clean_lost": int(clean["lost"].sum()) if len(clean) else None,
                    "clean_errors": int(clean["err_evidence_incomplete"].sum()) if len(clean) else None,
                    "bounded_by_k": bool((restart["lost"] < k).all()) if len(restart) else None,
                    "restart_rate_refused_trials": int(restart.groupby("trial")["restart_rate_refused"].first().sum())
                    if len(restart) else 0},
        "crash": {"all_fail_secure_or_resume": crash_ok, "trials": len(crashes),
                  "fail_secure_or_resume_fraction": float(crashes["fails_secure_or_resumes"].mean())
                  if len(crashes) else None,
                  "cases": {c: {"resumed": int(((crashes["case"] == c) & (crashes["outcome"] == "resumed")).sum()),
                                "failed_secure": int(((crashes["case"] == c)
                                                      & (crashes["outcome"] == "failed_secure")).sum()),
                                "sequence_reuse": int(((crashes["case"] == c)
                                                       & (crashes["outcome"] == "sequence_reuse")).sum())}
                            for c in CRASH_CASES}},
        "reservation": res,
        "sizing": {**sizing, "min_window": r_min,
                   "nv_writes_at_min_window": nv_writes(r_min, rate, years, sizing.get("days_per_year", 365)),
                   "nv_writes_at_window": nv_writes(window, rate, years, sizing.get("days_per_year", 365))},
    }
