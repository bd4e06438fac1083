"""Per-scenario statistics of the grid: median handshake time with a percentile-bootstrap CI, p90, failures."""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.stats import median_ci
from pqlab.transport.grid import KEY_COLUMNS


def summarise(table: pd.DataFrame, resamples: int, confidence: float, seed: int, *,
              progress: bool = False, desc: str = "statistics") -> pd.DataFrame:
    """One row per scenario; times are over completed handshakes only (failures are counted apart). A bootstrap
    per scenario: ``progress`` shows a bar (a long ``--configs`` grid spends minutes here)."""
    rows = []
    groups = table.groupby(list(KEY_COLUMNS), sort=True, observed=True)
    for i, (key, group) in enumerate(tqdm(groups, total=groups.ngroups, desc=desc, unit="scenario",
                                          disable=not progress)):
        ok = group[group["ok"]]
        median, lo, hi = median_ci(ok["time_s"].to_numpy(), resamples, confidence, seed + i)
        rows.append({
            **dict(zip(KEY_COLUMNS, key, strict=True)),
            "runs": len(group),
            "failures": int((~group["ok"]).sum()),
            "failure_rate": float((~group["ok"]).mean()),
            "median_s": median, "median_lo_s": lo, "median_hi_s": hi,
            "p90_s": float(np.quantile(ok["time_s"], 0.9)) if len(ok) else float("nan"),
            "mean_retransmissions": float(group["retransmissions"].mean()),
            "mean_spurious": float(group["spurious"].mean()),
            "median_radio_ms": float((ok["device_tx_ms"] + ok["device_rx_ms"]).median()) if len(ok) else float("nan"),
            "failed_in": ",".join(str(m) for m in sorted(group.loc[~group["ok"], "failed_message"].unique())),
        })
    return pd.DataFrame(rows)


def counts_and_medians(table: pd.DataFrame, keys: list[str] | tuple[str, ...] = KEY_COLUMNS) -> pd.DataFrame:
    """Like ``summarise`` without the bootstrap: runs, failures, failure rate, median time over completed
    handshakes, mean spurious retransmissions and the messages failures happened in, per ``keys``."""
    grouped = table.groupby(list(keys), sort=True, observed=True)
    out = grouped.agg(runs=("ok", "size"), completed=("ok", "sum"), mean_spurious=("spurious", "mean"))
    out["failures"] = out["runs"] - out["completed"]
    out["failure_rate"] = out["failures"] / out["runs"]
    out["median_s"] = table[table["ok"]].groupby(list(keys), observed=True)["time_s"].median().reindex(out.index)
    failed = table[~table["ok"]].groupby(list(keys), observed=True)["failed_message"]
    out["failed_in"] = failed.apply(lambda s: ",".join(str(m) for m in sorted(s.unique()))).reindex(out.index)
    out["failed_in"] = out["failed_in"].fillna("")
    for message in range(4):  # failures by the message that exhausted MRP (0 Sigma1 ... 3 status report)
        hit = table[~table["ok"] & (table["failed_message"] == message)].groupby(list(keys), observed=True).size()
        out[f"failed_{message}"] = hit.reindex(out.index).fillna(0).astype(int)
    return out.drop(columns="completed").reset_index()
