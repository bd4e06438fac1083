"""Atomic writers: every output appears complete under its final name, or not at all."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pqlab.errors import OutputError

METADATA_KEY = b"pqlab"


def ensure_writable_dir(path: str | Path, field: str = "output folder") -> Path:
    """Create ``path`` if needed and prove it is writable, or raise OutputError naming it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".pqlab-probe-"):
            pass
    except OSError as exc:
        raise OutputError(f"{path} is not writable ({exc.strerror or exc})", field=field) from exc
    return path


@contextmanager
def atomic_path(final: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``final``; rename it into place only if the block succeeds."""
    final = Path(final)
    ensure_writable_dir(final.parent, field=str(final.parent))
    handle, tmp_name = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_json(path: str | Path, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def write_parquet(path: str | Path, frame: pd.DataFrame, metadata: dict[str, Any] | None = None) -> Path:
    """Write ``frame`` with ``metadata`` as JSON under the schema key ``pqlab``."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata is not None:
        merged = dict(table.schema.metadata or {})
        merged[METADATA_KEY] = json.dumps(metadata, default=str).encode()
        table = table.replace_schema_metadata(merged)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def read_parquet_metadata(path: str | Path) -> dict[str, Any]:
    """The ``pqlab`` metadata block of a parquet file written by ``write_parquet``."""
    raw = (pq.read_schema(path).metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw else {}


def write_with(path: str | Path, writer: Callable[[Path], None]) -> Path:
    """Run ``writer(tmp_path)`` and move the result to ``path`` atomically (for figures)."""
    with atomic_path(path) as tmp:
        writer(tmp)
    return Path(path)
