"""AMORT-V1 §V-I procedure: warm and cold measurements of one image, repeated, and Table V from them.

Each repetition measures warm (the image read once unrecorded just before, its resident pages counted with
mincore) and then cold: every file is fsync'd and dropped with POSIX_FADV_DONTNEED, the eviction is verified
page by page with mincore, and only then is the image measured. Directory entries and inodes stay cached
(dropping those needs ``/proc/sys/vm/drop_caches``, which is machine-wide); file contents are what is read cold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.experiments import image


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
