"""Per-trial seeds derived from the study seed and a trial's coordinates, so a result does not depend on the order
or the split in which trials run."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed for one trial, derived from the study seed and the trial's coordinates."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1
