"""A synthetic software image with a given shape: seeded lognormal file sizes in a random directory tree.

Sizes: ``files`` draws from a lognormal with shape σ = ``size_sigma`` and μ = ln(total/files) − σ²/2, so
the expected total is ``total_bytes``; the draw is then scaled by total/Σx and rounded by largest
remainder, so the count and the total are exact. Directories: directory 0 is the root and directory i
hangs under one drawn uniformly from 0..i−1 (a random recursive tree); each file goes into a directory
drawn uniformly. Contents are seeded random octets (incompressible). The same shape and seed give the
same tree octet for octet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

_WRITE_CHUNK = 1 << 22


@dataclass(frozen=True)
class TreeShape:
    """How many files, how many octets in all, how skewed, in how many directories."""

    files: int
    total_bytes: int
    size_sigma: float
    directories: int

    def __post_init__(self) -> None:
        if self.files < 1 or self.total_bytes < 0 or self.directories < 1 or not self.size_sigma >= 0:
            raise ValueError(f"invalid tree shape {self}")


def lognormal_mu(shape: TreeShape) -> float:
    """μ of the size distribution: the lognormal's mean exp(μ + σ²/2) equals total/files."""
    mean = max(shape.total_bytes / shape.files, 1.0)
    return math.log(mean) - shape.size_sigma**2 / 2


def file_sizes(shape: TreeShape, rng: np.random.Generator) -> np.ndarray:
    """``files`` sizes (int64) summing exactly to ``total_bytes``."""
    draw = rng.lognormal(lognormal_mu(shape), shape.size_sigma, shape.files)
    scaled = draw * (shape.total_bytes / draw.sum())
    sizes = np.floor(scaled).astype(np.int64)
    short = shape.total_bytes - int(sizes.sum())
    if short:
        order = np.argsort(-(scaled - sizes), kind="stable")  # largest remainders first
        sizes[order[:short]] += 1
    return sizes


def directory_paths(count: int, rng: np.random.Generator) -> list[str]:
    """Relative paths of ``count`` directories ("" is the root), each under a uniformly drawn earlier one."""
    paths = [""]
    for i in range(1, count):
        parent = paths[int(rng.integers(0, i))]
        paths.append(f"{parent}/d{i:04d}" if parent else f"d{i:04d}")
    return paths


def plan(shape: TreeShape, seed: int) -> pd.DataFrame:
    """The tree as a table: relative path, size, depth (no files are written)."""
    rng = np.random.default_rng(seed)
    sizes = file_sizes(shape, rng)
    dirs = directory_paths(shape.directories, rng)
    where = rng.integers(0, len(dirs), shape.files)
    paths = [f"{dirs[d]}/f{i:05d}.bin" if dirs[d] else f"f{i:05d}.bin" for i, d in enumerate(where)]
    return pd.DataFrame({"path": paths, "size": sizes, "depth": [p.count("/") for p in paths]})


def generate(root: Path, shape: TreeShape, seed: int, *, progress: bool = True) -> pd.DataFrame:
    """Write the tree of ``plan(shape, seed)`` under ``root`` (which must not exist yet); return the plan."""
    layout = plan(shape, seed)
    root.mkdir(parents=True, exist_ok=False)
    content = np.random.default_rng([seed, 1])
    bar = tqdm(total=int(layout["size"].sum()), unit="B", unit_scale=True, desc="image tree", disable=not progress)
    for path, size in zip(layout["path"], layout["size"], strict=True):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as handle:
            left = int(size)
            while left:
                n = min(left, _WRITE_CHUNK)
                handle.write(content.bytes(n))
                left -= n
        bar.update(int(size))
    bar.close()
    return layout
