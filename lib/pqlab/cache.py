"""Resume caches that cannot silently change a result: parquet parts, each listed with its SHA-256 in a manifest.

A study that keeps finished work while it runs (e.g. the transport grid's scenarios) writes each piece with
:meth:`PartStore.add`: the part is written under a temporary name, flushed and renamed, then the manifest is
rewritten the same way. When the cache is opened again, a part that is not in the manifest, fails its hash or
cannot be read is deleted with one warning line naming it, and its work is done again. One run at a time holds
a cache (a lock file in its folder); a second run gets a BusyError instead of mixing its parts in.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pqlab.errors import BusyError, OutputError, warn
from pqlab.io import TEMP_SUFFIX, FileLock, file_digest, fresh_file, fsync_path

MANIFEST = "manifest.json"
LOCK = ".lock"
PART_GLOB = "part-*.parquet"
_VERSION = 1

# Caches held open by this process, and those it closed without clearing (folder -> parts kept): the
# message printed when a run is interrupted says what is kept for the next run.
ACTIVE: dict[Path, PartStore] = {}
KEPT: dict[Path, int] = {}


class PartStore:
    """A folder of verified parquet parts; use as a context manager (holds the folder's lock)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._lock: FileLock | None = None
        self._manifest: dict[str, dict[str, Any]] = {}
        self.discarded: list[str] = []

    # --- locking -----------------------------------------------------------------------------------------
    def __enter__(self) -> PartStore:
        self.open()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> None:
        """Create the folder if needed and lock it; stale temporary files of a killed run are removed."""
        if self.folder.resolve() in ACTIVE:
            raise BusyError("this process already holds this resume cache", field=str(self.folder))
        lock = FileLock(self.folder / LOCK)
        for _ in range(10):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                if not lock.acquire():
                    raise BusyError("another pqlab run is using this resume cache; wait for it to finish",
                                    field=str(self.folder))
                break
            except FileNotFoundError:  # removed between mkdir and open by the run that held it: try again
                continue
            except OSError as exc:
                raise OutputError(f"cannot create the resume cache: {exc.strerror or exc}",
                                  field=str(self.folder)) from exc
        else:
            raise BusyError("the resume cache keeps being removed by another run", field=str(self.folder))
        self._lock = lock
        for stale in self.folder.glob(f".*{TEMP_SUFFIX}"):
            stale.unlink(missing_ok=True)
        self._manifest = self._read_manifest()
        ACTIVE[self.folder.resolve()] = self

    def close(self) -> None:
        """Release the lock; the parts stay for the next run."""
        ACTIVE.pop(self.folder.resolve(), None)
        if self._lock is not None:
            if self._manifest:
                KEPT[self.folder] = len(self._manifest)
            self._lock.release()
            self._lock = None

    def _require_open(self) -> None:
        if self._lock is None:
            raise RuntimeError("PartStore used outside its `with` block")

    # --- manifest ----------------------------------------------------------------------------------------
    def _read_manifest(self) -> dict[str, dict[str, Any]]:
        path = self.folder / MANIFEST
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            parts = data["parts"] if isinstance(data, dict) and data.get("version") == _VERSION else None
            if not isinstance(parts, dict) or not all(
                    isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in parts.values()):
                raise ValueError("not a pqlab resume manifest")
            return parts
        except (OSError, UnicodeDecodeError, ValueError, KeyError, RecursionError) as exc:
            warn(f"resume manifest {path} is unreadable ({type(exc).__name__}); every part it listed is recomputed")
            return {}

    def _write_manifest(self) -> None:
        tmp = fresh_file(self.folder, f".{MANIFEST}")
        try:
            tmp.write_text(json.dumps({"version": _VERSION, "parts": self._manifest}, indent=1, sort_keys=True))
            fsync_path(tmp)
            os.replace(tmp, self.folder / MANIFEST)
        finally:
            tmp.unlink(missing_ok=True)

    # --- parts -------------------------------------------------------------------------------------------
    def _discard(self, path: Path, why: str) -> None:
        warn(f"resume part {path} {why}; discarded, its work is recomputed")
        path.unlink(missing_ok=True)
        self._manifest.pop(path.name, None)
        self.discarded.append(path.name)

    def load(self) -> dict[str, pa.Table]:
        """Every part that is listed, matches its hash and reads back whole; anything else is discarded."""
        self._require_open()
        good: dict[str, pa.Table] = {}
        for path in sorted(self.folder.glob(PART_GLOB)):
            entry = self._manifest.get(path.name)
            if entry is None:
                self._discard(path, "is not in the manifest (its run stopped before recording it)")
                continue
            try:
                digest = file_digest(path)
            except OSError as exc:
                self._discard(path, f"cannot be read ({exc.strerror or exc})")
                continue
            if digest != entry["sha256"]:
                self._discard(path, "does not match its SHA-256 in the manifest")
                continue
            try:
                table = pq.read_table(path)
            except (OSError, pa.ArrowException, ValueError) as exc:
                self._discard(path, f"cannot be read ({type(exc).__name__})")
                continue
            if table.num_rows != entry.get("rows", table.num_rows):
                self._discard(path, "has a different row count than the manifest says")
                continue
            good[path.name] = table
        stale = set(self._manifest) - set(good)
        for name in stale:
            self._manifest.pop(name)
        if stale or self.discarded:
            self._write_manifest()
        return good

    def add(self, name: str, table: pa.Table) -> Path:
        """Write one finished part (whole or absent) and record its hash in the manifest."""
        self._require_open()
        final = self.folder / f"part-{name}.parquet"
        tmp = fresh_file(self.folder, f".part-{name}")
        try:
            pq.write_table(table, tmp)
            fsync_path(tmp)
            digest = file_digest(tmp)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        self._manifest[final.name] = {"sha256": digest, "rows": table.num_rows}
        self._write_manifest()
        return final

    def __len__(self) -> int:
        return len(self._manifest)

    def clear(self) -> None:
        """Delete the cache (its results are safely written elsewhere); the lock is released."""
        self._require_open()
        self._manifest = {}  # from here on nothing is kept for a next run, even if interrupted
        KEPT.pop(self.folder, None)
        (self.folder / MANIFEST).unlink(missing_ok=True)
        for path in self.folder.iterdir():
            if path.name != LOCK:
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        ACTIVE.pop(self.folder.resolve(), None)
        self._lock.release(remove=True)
        self._lock = None
        try:
            self.folder.rmdir()
        except OSError:  # another run already started a new cache here
            pass
