"""Atomic writers and checked readers: an output appears complete under its final name or not at all, with the
mode the umask gives (0644 by default); an unreadable or corrupt input is an InputError naming the file.

JSON objects and parquet files pqlab writes carry a SHA-256 of their content (the key ``pqlab_sha256`` of the
object; the schema metadata key of that name), so :func:`read_json` and :func:`read_parquet` notice a changed
value — a flipped digit, a damaged data page — that the formats themselves would read without complaint.
A file without the key (a pandas ``to_parquet`` or a text editor drops it) is refused as well
(UnverifiedInputError): no digest, no read. A file edited on purpose comes in through ``pqlab raw import --edited``.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pqlab.errors import InputError, OutputError, StudyInputError, UnverifiedInputError

METADATA_KEY = b"pqlab"
DIGEST_KEY = "pqlab_sha256"
TEMP_SUFFIX = ".part"


def ensure_writable_dir(path: str | Path, field: str = "output folder") -> Path:
    """Create ``path`` if needed and prove it is writable, or raise OutputError naming it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = fresh_file(path, ".pqlab-probe")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{path} is not writable ({exc.strerror or exc})", field=field) from exc
    return path


def fresh_file(folder: str | Path, stem: str, suffix: str = TEMP_SUFFIX) -> Path:
    """Create a new empty file ``<stem>.<pid>.<random><suffix>`` in ``folder`` with mode 0666 & ~umask.

    Unlike ``tempfile.mkstemp`` (always 0600), the file gets the permissions an ordinary ``open`` would
    give, so renaming it into place leaves the output readable as the user's umask intends.
    """
    folder = Path(folder)
    for _ in range(100):
        candidate = folder / f"{stem}.{os.getpid()}.{secrets.token_hex(4)}{suffix}"
        try:
            handle = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        os.close(handle)
        return candidate
    raise FileExistsError(f"no free temporary name in {folder}")


def fsync_path(path: str | Path) -> None:
    """Flush a file's (or a folder's) contents to stable storage."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextmanager
def atomic_path(final: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``final``; flush it and rename it into place only if the block succeeds."""
    final = Path(final)
    ensure_writable_dir(final.parent, field=str(final.parent))
    tmp = fresh_file(final.parent, f".{final.name}")
    try:
        yield tmp
        fsync_path(tmp)
        try:
            os.replace(tmp, final)
        except OSError as exc:
            raise OutputError(f"cannot write {final}: {exc.strerror or exc}", field=str(final.parent)) from exc
        fsync_path(final.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _plain(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))  # exactly what a reader will parse


def with_digest(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as JSON reads it back, with ``pqlab_sha256`` over its canonical form (what read_json checks)."""
    plain = _plain(data)
    plain.pop(DIGEST_KEY, None)
    plain[DIGEST_KEY] = hashlib.sha256(_canonical(plain)).hexdigest()
    return plain


def json_text(data: Any, checksum: bool = True) -> str:
    """``data`` as indented JSON; an object gets ``pqlab_sha256`` over its canonical form (see read_json)."""
    plain = with_digest(data) if checksum and isinstance(data, dict) else _plain(data)
    return json.dumps(plain, indent=2, sort_keys=True) + "\n"


def write_json(path: str | Path, data: Any) -> Path:
    return write_text(path, json_text(data))


def _canonical_cell(value: Any) -> str:
    """An unhashable cell (a list read back as an array, a struct as a dict) as canonical JSON text."""
    return json.dumps(value.tolist() if hasattr(value, "tolist") else value, sort_keys=True, default=str)


def _frame_hashes(frame: pd.DataFrame) -> bytes:
    """pandas' row hashes of ``frame``; a column pandas cannot hash (list or struct cells) is hashed as the canonical
    JSON of each cell, so every table pqlab writes gets a digest."""
    try:
        return pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    except TypeError:
        hashable = frame.copy()
        for column in frame.columns:
            try:
                pd.util.hash_pandas_object(frame[column], index=False)
            except TypeError:
                hashable[column] = frame[column].map(_canonical_cell)
        return pd.util.hash_pandas_object(hashable, index=False).to_numpy().tobytes()


def _frame_digest(table: pa.Table) -> str | None:
    """SHA-256 over a table's column names, values (as pandas reads them back) and pqlab metadata."""
    try:
        frame = table.to_pandas()
        values = _frame_hashes(frame) if len(frame.columns) else b""
    except (TypeError, ValueError, pa.ArrowException):  # cells no canonical form covers: no digest, not a wrong one
        return None
    digest = hashlib.sha256(_canonical([list(map(str, frame.columns)), [str(t) for t in frame.dtypes]]))
    digest.update(values)
    digest.update((table.schema.metadata or {}).get(METADATA_KEY, b""))
    return digest.hexdigest()


def parquet_table(frame: pd.DataFrame, metadata: dict[str, Any] | None = None) -> pa.Table:
    """``frame`` as an Arrow table with ``metadata`` as JSON under the schema key ``pqlab`` (provenance) and
    the SHA-256 of its content under ``pqlab_sha256``."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    merged = dict(table.schema.metadata or {})
    if metadata is not None:
        merged[METADATA_KEY] = json.dumps(metadata, default=str, sort_keys=True).encode()
        table = table.replace_schema_metadata(merged)
    digest = _frame_digest(table)
    if digest is not None:
        merged[DIGEST_KEY.encode()] = digest.encode()
        table = table.replace_schema_metadata(merged)
    return table


def write_parquet(path: str | Path, frame: pd.DataFrame, metadata: dict[str, Any] | None = None) -> Path:
    """Write ``frame`` with ``metadata`` as JSON under the schema key ``pqlab``."""
    table = parquet_table(frame, metadata)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def write_with(path: str | Path, writer: Callable[[Path], None]) -> Path:
    """Run ``writer(tmp_path)`` and move the result to ``path`` atomically (for figures)."""
    with atomic_path(path) as tmp:
        writer(tmp)
    return Path(path)


class FileLock:
    """An exclusive POSIX record lock on ``path`` (created if needed).

    POSIX locks belong to the process and are not inherited by forked workers (unlike flock), so a
    killed run's lock disappears with it even while its pool workers wind down. Within one process the
    lock does not exclude a second holder: callers keep their own registry of what they hold.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, blocking: bool = False) -> bool:
        """Take the lock; False if another process holds it (and ``blocking`` is False)."""
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EACCES, errno.EAGAIN):
                    return False
                raise
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:  # the file was not removed by the holder before us
                self._fd = fd
                return True
            os.close(fd)

    def release(self, remove: bool = False) -> None:
        """Drop the lock; ``remove`` deletes the lock file first (safe: acquirers re-check the inode)."""
        if self._fd is None:
            return
        if remove:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


# --- checked readers -------------------------------------------------------------------------------------

def _remedy(stage: str | None) -> str:
    if stage is None:
        return "delete it or rerun the stage that writes it"
    if stage.startswith("measure_"):
        return (f"rerun `dvc repro {stage}` to measure it again, or bring an edited copy in on purpose with "
                "`pqlab raw import --edited FILE` (REPORT.md then marks every row it feeds)")
    return f"rerun the {stage} stage (dvc repro {stage}) to write it again"


def _corrupt(path: Path, what: str, exc: BaseException, stage: str | None = None) -> InputError:
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    return InputError(f"{what} is unreadable or corrupt ({detail}); {_remedy(stage)}", field=str(path))


def _unverified(path: Path, what: str, lacks: str, stage: str | None) -> UnverifiedInputError:
    return UnverifiedInputError(f"{what}: no {lacks} (a pandas or text-editor round trip drops it), so pqlab cannot "
                                f"tell it from an edited copy and does not read it; {_remedy(stage)}", field=str(path))


_MISMATCH = "its content does not match the SHA-256 recorded when it was written"


def _absent(path: Path, what: str, stage: str) -> StudyInputError:
    return StudyInputError(f"{what} does not exist: run the {stage} stage first (dvc repro {stage})", field=str(path))


def read_json(path: str | Path, what: str = "JSON file", *, stage: str | None = None) -> Any:
    """Parse a JSON object pqlab wrote; a missing, unreadable, non-UTF-8, truncated, absurdly nested or non-object
    file is an InputError, and so is an object whose ``pqlab_sha256`` does not match its content; an object without
    that key is an UnverifiedInputError. The digest key is not returned.

    ``stage``: the pqlab stage that writes the file; a missing file is then a StudyInputError saying to run that
    stage first, and a corrupt or unverified one says to rerun it."""
    path = Path(path)
    if stage is not None and not path.exists():
        raise _absent(path, what, stage)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not the object pqlab writes")
        if DIGEST_KEY not in data:
            raise _unverified(path, what, f"{DIGEST_KEY} content digest", stage)
        recorded = data.pop(DIGEST_KEY)
        if recorded != hashlib.sha256(_canonical(data)).hexdigest():
            raise ValueError(_MISMATCH)
        return data
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _corrupt(path, what, exc, stage) from None


def read_parquet_checked(path: str | Path, what: str = "parquet file", *,
                         stage: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A parquet file pqlab wrote and its ``pqlab`` metadata block (provenance), both covered by the
    ``pqlab_sha256`` it carries: a missing, truncated or corrupt file, or one whose content does not match its
    digest, is an InputError naming it; one without the digest or without the metadata block is an
    UnverifiedInputError (``stage`` as for :func:`read_json`)."""
    path = Path(path)
    if stage is not None and not path.exists():
        raise _absent(path, what, stage)
    try:
        table = pq.read_table(path)
        metadata = table.schema.metadata or {}
        recorded = metadata.get(DIGEST_KEY.encode())
        if recorded is None:
            raise _unverified(path, what, f"{DIGEST_KEY} content digest", stage)
        if recorded.decode(errors="replace") != _frame_digest(table):
            raise ValueError(_MISMATCH)
        if METADATA_KEY not in metadata:
            raise _unverified(path, what, "pqlab provenance block", stage)
        block = json.loads(metadata[METADATA_KEY])
        return table.to_pandas(), block if isinstance(block, dict) else {}
    except (OSError, pa.ArrowException, ValueError, KeyError, RecursionError) as exc:
        raise _corrupt(path, what, exc, stage) from None


def read_parquet(path: str | Path, columns: Sequence[str] | None = None, what: str = "parquet file", *,
                 stage: str | None = None) -> pd.DataFrame:
    """The frame of :func:`read_parquet_checked` (only ``columns``, when given)."""
    frame, _ = read_parquet_checked(path, what, stage=stage)
    try:
        return frame[list(columns)] if columns is not None else frame
    except KeyError as exc:
        raise _corrupt(Path(path), what, exc, stage) from None


def read_parquet_unchecked(path: str | Path, what: str = "parquet file") -> tuple[pd.DataFrame, dict[str, Any]]:
    """A parquet file as it is, digest or not, and its ``pqlab`` metadata block (empty when absent): only for a file
    a user hands over as edited by hand (``pqlab raw import --edited``), which records it as such."""
    path = Path(path)
    try:
        table = pq.read_table(path)
        raw = (table.schema.metadata or {}).get(METADATA_KEY)
        block = json.loads(raw) if raw else {}
        return table.to_pandas(), block if isinstance(block, dict) else {}
    except (OSError, pa.ArrowException, ValueError, RecursionError) as exc:
        raise _corrupt(path, what, exc) from None


def read_parquet_metadata(path: str | Path) -> dict[str, Any]:
    """The ``pqlab`` metadata block of a parquet file written by ``write_parquet`` (InputError if corrupt)."""
    path = Path(path)
    try:
        raw = (pq.read_schema(path).metadata or {}).get(METADATA_KEY)
        return json.loads(raw) if raw else {}
    except (OSError, pa.ArrowException, ValueError, RecursionError) as exc:
        raise _corrupt(path, "parquet file", exc) from None


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_atomic(source: str | Path, final: str | Path) -> Path:
    """Copy ``source``'s bytes to ``final``: complete under its final name or not at all."""
    with atomic_path(final) as tmp, open(source, "rb") as reader, open(tmp, "wb") as writer:
        for block in iter(lambda: reader.read(1 << 20), b""):
            writer.write(block)
    return Path(final)
