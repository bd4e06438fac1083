"""Atomic writers and checked readers: an output appears complete under its final name or not at all, with the
mode the umask gives (0644 by default); an unreadable or corrupt input is an InputError naming the file.

JSON objects and parquet files pqlab writes carry a SHA-256 of their content (the key ``pqlab_sha256`` of the
object; the schema metadata key of that name), so :func:`read_json` and :func:`read_parquet` notice a changed
value — a flipped digit, a damaged data page — that the formats themselves would read without complaint.
Files without the key (older runs, hand-made inputs) are read as they are.
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

from pqlab.errors import InputError, OutputError, StudyInputError

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


def json_text(data: Any, checksum: bool = True) -> str:
    """``data`` as indented JSON; an object gets ``pqlab_sha256`` over its canonical form (see read_json)."""
    plain = json.loads(json.dumps(data, default=str))  # exactly what a reader will parse
    if checksum and isinstance(plain, dict):
        plain.pop(DIGEST_KEY, None)
        plain[DIGEST_KEY] = hashlib.sha256(_canonical(plain)).hexdigest()
    return json.dumps(plain, indent=2, sort_keys=True) + "\n"


def write_json(path: str | Path, data: Any) -> Path:
    return write_text(path, json_text(data))


def _frame_digest(table: pa.Table) -> str | None:
    """SHA-256 over a table's column names, values (as pandas reads them back) and pqlab metadata."""
    try:
        frame = table.to_pandas()
        values = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes() if len(frame.columns) else b""
    except (TypeError, ValueError, pa.ArrowException):  # unhashable cells: no digest rather than a wrong one
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

def _corrupt(path: Path, what: str, exc: BaseException, stage: str | None = None) -> InputError:
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    remedy = (f"rerun the {stage} stage (dvc repro {stage}) to write it again" if stage
              else "delete it or rerun the stage that writes it")
    return InputError(f"{what} is unreadable or corrupt ({detail}); {remedy}", field=str(path))


def _absent(path: Path, what: str, stage: str) -> StudyInputError:
    return StudyInputError(f"{what} does not exist: run the {stage} stage first (dvc repro {stage})", field=str(path))


def read_json(path: str | Path, what: str = "JSON file", *, stage: str | None = None) -> Any:
    """Parse a JSON file; a missing, unreadable, non-UTF-8, truncated or absurdly nested file, or an object whose
    ``pqlab_sha256`` does not match its content, is an InputError. The digest key is not returned.

    ``stage``: the pqlab stage that writes the file; a missing file is then a StudyInputError saying to run that
    stage first, and a corrupt one says to rerun it."""
    path = Path(path)
    if stage is not None and not path.exists():
        raise _absent(path, what, stage)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and DIGEST_KEY in data:
            recorded = data.pop(DIGEST_KEY)
            if recorded != hashlib.sha256(_canonical(data)).hexdigest():
                raise ValueError("its content does not match the SHA-256 recorded when it was written")
        return data
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _corrupt(path, what, exc, stage) from None


def read_parquet(path: str | Path, columns: Sequence[str] | None = None, what: str = "parquet file", *,
                 stage: str | None = None) -> pd.DataFrame:
    """Read a parquet file; a missing, truncated or corrupt file, or one whose content does not match its
    ``pqlab_sha256``, is an InputError naming it (``stage`` as for :func:`read_json`)."""
    path = Path(path)
    if stage is not None and not path.exists():
        raise _absent(path, what, stage)
    try:
        table = pq.read_table(path)
        recorded = (table.schema.metadata or {}).get(DIGEST_KEY.encode())
        if recorded is not None and recorded.decode(errors="replace") != _frame_digest(table):
            raise ValueError("its content does not match the SHA-256 recorded when it was written")
        frame = table.to_pandas()
        return frame[list(columns)] if columns is not None else frame
    except (OSError, pa.ArrowException, ValueError, KeyError) as exc:
        raise _corrupt(path, what, exc, stage) from None


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


def parquet_has_digest(path: str | Path) -> bool:
    """Whether a parquet file carries the ``pqlab_sha256`` of its content (InputError if corrupt)."""
    path = Path(path)
    try:
        return DIGEST_KEY.encode() in (pq.read_schema(path).metadata or {})
    except (OSError, pa.ArrowException) as exc:
        raise _corrupt(path, "parquet file", exc) from None


def copy_atomic(source: str | Path, final: str | Path) -> Path:
    """Copy ``source``'s bytes to ``final``: complete under its final name or not at all."""
    with atomic_path(final) as tmp, open(source, "rb") as reader, open(tmp, "wb") as writer:
        for block in iter(lambda: reader.read(1 << 20), b""):
            writer.write(block)
    return Path(final)
