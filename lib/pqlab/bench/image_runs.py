"""AMORT-V1 §V-I procedure: warm and cold measurements of one image, repeated, and Table V from them.

Each repetition measures warm (the image read once unrecorded just before, its resident pages counted with
mincore) and then cold: every file is fsync'd and dropped with POSIX_FADV_DONTNEED, the eviction is verified
page by page with mincore, and only then is the image measured. Directory entries and inodes stay cached
(dropping those needs ``/proc/sys/vm/drop_caches``, which is machine-wide); file contents are what is read cold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.bench import image

CONDITIONS = ("warm", "cold")


def _row(condition: str, rep: int, m: image.Measurement, **extra: Any) -> dict[str, Any]:
    return {"condition": condition, "repetition": rep, "seconds": m.seconds, "octets": m.octets, "files": m.files,
            "symlinks": m.symlinks, "skipped": m.skipped, "digest": m.digest, **extra}


def repeat(root: Path, repetitions: int, chunk_octets: int = 1 << 20, *,
           progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per measurement, one row per file per eviction) over ``repetitions`` warm+cold pairs."""
    rows, evictions = [], []
    for rep in tqdm(range(repetitions), desc="full image", disable=not progress):
        image.measure(root, chunk_octets)  # re-read: pages another process's memory pressure dropped come back
        resident, pages = image.residency(root)
        rows.append(_row("warm", rep, image.measure(root, chunk_octets), pages=pages, resident_before=resident,
                         resident_after_eviction=np.nan, files_still_resident=np.nan))
        evicted = image.evict(root)
        totals = image.summary(evicted)
        evictions.append(evicted.assign(repetition=rep))
        measured = image.measure(root, chunk_octets)
        rows.append(_row("cold", rep, measured, pages=totals["pages"], resident_before=totals["resident_before"],
                         resident_after_eviction=totals["resident_after"],
                         files_still_resident=totals["files_still_resident"],
                         resident_after_read=image.residency(root)[0]))
    return pd.DataFrame(rows), pd.concat(evictions, ignore_index=True)


def signature_reference(metrics_path: Path, operation: str) -> dict[str, Any]:
    """The cost study's median for ``operation`` (µs), read from its metrics file; ``median_us`` None if absent."""
    source = {"file": str(metrics_path), "key": f"table1.{operation}.median_us", "median_us": None, "backend": None}
    try:
        entry = json.loads(metrics_path.read_text())["table1"][operation]
    except (OSError, KeyError, ValueError):
        return source | {"missing": "run the costs stage first (dvc repro costs)"}
    return source | {"median_us": float(entry["median_us"]), "backend": entry.get("backend")}


def table5(samples: pd.DataFrame, sign_us: float | None) -> pd.DataFrame:
    """Table V: per condition, median time, throughput, measurements per second, and the ratio to one signature."""
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
        })
    return pd.DataFrame(rows)


def metrics(samples: pd.DataFrame, table: pd.DataFrame, reference: dict[str, Any],
            copy_digest: str | None) -> dict[str, Any]:
    """Headline numbers: Table V per condition, eviction evidence, digest stability."""
    out: dict[str, Any] = {}
    for row in table.itertuples(index=False):
        key = row[0].split()[0]
        out[key] = {"median_ms": round(row[2], 3), "throughput_mb_s": round(row[5], 2),
                    "measurements_per_s": round(row[6], 4),
                    "ratio_to_sign": None if np.isnan(row[7]) else round(row[7], 1),
                    "backend": reference.get("backend")}
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
