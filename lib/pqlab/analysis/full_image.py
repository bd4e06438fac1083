"""AMORT-V1 §V-I (Table V) from the full-image raw samples: which rows can be trusted, Table V against the cost
study's signature median, and the stage's metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pqlab import io

CONDITIONS = ("warm", "cold")


def signature_reference(metrics_path: Path, operation: str, root: Path) -> dict[str, Any]:
    """The cost study's median for ``operation`` (µs), read from its metrics file; ``median_us`` None if absent.
    The file is named relative to the project ``root``, so the metrics do not depend on where the project lives.

    The file is read through :func:`pqlab.io.read_json`, which checks the SHA-256 the costs stage recorded: an
    edited or truncated file is INPUT_CORRUPT naming it, never a different ratio in Table V."""
    shown = metrics_path.relative_to(root).as_posix() if metrics_path.is_relative_to(root) else str(metrics_path)
    source = {"file": shown, "key": f"table1.{operation}.median_us", "median_us": None, "backend": None}
    if not metrics_path.exists():
        return source | {"missing": "run the costs stage first (dvc repro costs)"}
    data = io.read_json(metrics_path, "cost metrics file", stage="costs")
    table1 = data.get("table1") if isinstance(data, dict) else None
    entry = table1.get(operation) if isinstance(table1, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("median_us"), int | float):
        return source | {"missing": f"the costs stage measured no {operation}; rerun it with {operation} in "
                                    "costs.signers"}
    source_block = data.get("raw_samples") if isinstance(data.get("raw_samples"), dict) else {}
    edited = [f"{name} via {shown}" for name in source_block.get("hand_edited") or []]
    return source | {"median_us": float(entry["median_us"]), "backend": entry.get("backend"), "hand_edited": edited}


def reliability(samples: pd.DataFrame, copy_digest: str | None) -> dict[str, list[str]]:
    """Per condition, why its Table V row cannot be trusted (an empty list: it can).

    Every row needs one image: the same digest in every repetition (and for the copy, when one was measured).
    The cold row also needs every eviction verified: no page of the image left in the page cache by mincore."""
    digests = samples["digest"].nunique()
    common = []
    if digests > 1:
        common.append(f"the image digest differed between repetitions ({digests} distinct digests): the image "
                      "changed while it was measured")
    if copy_digest is not None and copy_digest != samples["digest"].iloc[0]:
        common.append("a copy of the image measured to a different digest")
    out = {condition: list(common) for condition in CONDITIONS if (samples["condition"] == condition).any()}
    cold = samples[samples["condition"] == "cold"]
    if "cold" in out:
        unverified = cold[cold["resident_after_eviction"] > 0]
        if len(unverified):
            out["cold"].append(f"eviction not verified in {len(unverified)} of {len(cold)} repetitions: up to "
                               f"{int(unverified['resident_after_eviction'].max())} pages in "
                               f"{int(unverified['files_still_resident'].max())} file(s) stayed in the page cache")
    return out


def table5(samples: pd.DataFrame, sign_us: float | None,
           unreliable: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """Table V: per condition, median time, throughput, measurements per second, the ratio to one signature, and
    whether the row can be trusted ("yes", or "no: " and why; see :func:`reliability`)."""
    unreliable = unreliable or {}
    rows = []
    for condition in CONDITIONS:
        group = samples[samples["condition"] == condition]
        if group.empty:
            continue
        median_s = float(group["seconds"].median())
        octets = int(group["octets"].iloc[0])
        rows.append({
            "Condition": f"{condition} cache", "Repetitions": len(group), "Median [ms]": median_s * 1e3,
            "Min [ms]": float(group["seconds"].min()) * 1e3, "Max [ms]": float(group["seconds"].max()) * 1e3,
            "Throughput [MB/s]": octets / median_s / 1e6, "Measurements per second": 1.0 / median_s,
            "vs ML-DSA-65 sign [×]": median_s * 1e6 / sign_us if sign_us else float("nan"),
            "Reliable": "no: " + "; ".join(unreliable[condition]) if unreliable.get(condition) else "yes",
        })
    return pd.DataFrame(rows)


def metrics(samples: pd.DataFrame, table: pd.DataFrame, reference: dict[str, Any],
            copy_digest: str | None) -> dict[str, Any]:
    """Headline numbers: Table V per condition (with ``reliable`` and its reasons), eviction evidence, digest
    stability; ``reliable`` at the top is False when any row is."""
    out: dict[str, Any] = {}
    unreliable = reliability(samples, copy_digest)
    for row in table.itertuples(index=False):
        key = row[0].split()[0]
        out[key] = {"median_ms": round(row[2], 3), "throughput_mb_s": round(row[5], 2),
                    "measurements_per_s": round(row[6], 4),
                    "ratio_to_sign": None if np.isnan(row[7]) else round(row[7], 1),
                    "backend": reference.get("backend"),
                    "reliable": not unreliable.get(key), "unreliable_because": unreliable.get(key, [])}
    out["reliable"] = not any(unreliable.values())
    cold = samples[samples["condition"] == "cold"]
    digests = set(samples["digest"])
    first = samples.iloc[0]
    out["image"] = {"files": int(first["files"]), "octets": int(first["octets"]), "pages": int(first["pages"]),
                    "digest": first["digest"], "digest_stable": len(digests) == 1,
                    "copy_digest_equal": None if copy_digest is None else copy_digest == first["digest"]}
    out["eviction"] = {
        "method": "fsync + posix_fadvise(POSIX_FADV_DONTNEED) per file, verified with mincore",
        "resident_before_pages": int(cold["resident_before"].sum()),
        "resident_after_pages": int(cold["resident_after_eviction"].sum()),
        "files_still_resident": int(cold["files_still_resident"].sum()),
        "resident_after_read_pages": int(cold["resident_after_read"].sum()),
        "verified": bool((cold["resident_after_eviction"] == 0).all()),
    }
    if {"warm", "cold"} <= set(out):
        # the timing side of the check: reading evicted pages from storage is slower than from the cache
        out["eviction"]["cold_over_warm_median"] = round(out["cold"]["median_ms"] / out["warm"]["median_ms"], 3)
    out["signature"] = reference
    return out
