"""Full-image measurement (AMORT-V1 §V-I): SHA-256 of every file, sort the (path, digest) pairs, hash the list.

The image digest is SHA-256 over one line per entry, sorted by the path's UTF-8 octets:
``path NUL hex-digest LF`` with ``path`` relative to the image root in POSIX form. Regular files are
hashed by streaming their content; a symbolic link is not followed, its entry is SHA-256 of
``b"symlink\\0" + target``; other special files are skipped and counted. The timed measurement
covers listing the tree, reading and hashing every file, sorting and hashing the list.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pqlab.errors import InputInvalidError, PqlabError
from pqlab.experiments import pagecache


class ImageError(PqlabError):
    """The image directory is missing, empty or unreadable."""

    code = "IMAGE_UNREADABLE"


@dataclass(frozen=True)
class Entry:
    """One measured component: its relative POSIX path, absolute path, and whether it is a symlink."""

    rel: str
    path: str
    link: bool


@dataclass(frozen=True)
class Measurement:
    """One image measurement: the image digest and what it covered, with its wall time."""

    digest: str
    files: int
    symlinks: int
    skipped: int
    octets: int
    seconds: float


def _printable_path(path: str) -> str:
    """A path for an error line: undecodable bytes as \\xNN escapes instead of lone surrogates."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _components(root: str) -> Iterator[tuple[str, int]]:
    """(absolute path, lstat mode) of every file, symlink and special file under ``root`` (links not followed).

    The image digest hashes each path's UTF-8 octets, so a name that is not valid UTF-8 is an InputInvalidError
    naming it (its octets, escaped) rather than a UnicodeEncodeError halfway through a measurement."""
    for directory, dirnames, filenames in os.walk(root, followlinks=False, onerror=_raise):
        for name in (*dirnames, *filenames):
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise InputInvalidError("a file name in the image is not valid UTF-8; rename it (the image digest "
                                        "hashes every path as UTF-8)",
                                        field=_printable_path(os.path.join(directory, name))) from None
        for name in (*filenames, *(d for d in dirnames if os.path.islink(os.path.join(directory, d)))):
            full = os.path.join(directory, name)
            yield full, os.lstat(full).st_mode


def list_image(root: str | Path) -> tuple[list[Entry], int]:
    """Every regular file and symlink under ``root`` (symlinks not followed), and the count of skipped entries."""
    root = os.fspath(root)
    if not os.path.isdir(root):
        raise ImageError("not a directory", field=str(root))
    entries: list[Entry] = []
    skipped = 0
    for full, mode in _components(root):
        if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            entries.append(Entry(rel, full, stat.S_ISLNK(mode)))
        else:
            skipped += 1
    return entries, skipped


def _raise(error: OSError) -> None:
    raise ImageError(f"cannot list: {error.strerror}", field=_printable_path(str(error.filename))) from error


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    return "a special file"


def refuse_special_files(root: str | Path) -> None:
    """InputInvalidError naming the first FIFO, socket or device node under ``root``: an image to measure holds
    regular files, folders and symbolic links (a FIFO can block a reader forever; copying one fails)."""
    root = os.fspath(root)
    if not os.path.isdir(root):
        raise ImageError("not a directory", field=str(root))
    special = [(full, mode) for full, mode in _components(root) if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode))]
    if special:
        full, mode = special[0]
        more = f" (and {len(special) - 1} more special file(s))" if len(special) > 1 else ""
        raise InputInvalidError(f"is {_kind(mode)}{more}; an image holds regular files, folders and symbolic links "
                                "only: remove it or measure another folder", field=_printable_path(full))


def file_digest(path: str, buffer: bytearray) -> tuple[bytes, int]:
    """Streaming SHA-256 of one file through ``buffer``; (digest, octets read)."""
    h = hashlib.sha256()
    view = memoryview(buffer)
    total = 0
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(view):
            h.update(view[:n])
            total += n
    return h.digest(), total


def list_digest(pairs: list[tuple[str, bytes]]) -> str:
    """SHA-256 over the sorted ``path NUL hex LF`` lines (the image digest), hex."""
    h = hashlib.sha256()
    for rel, digest in sorted(pairs, key=lambda p: p[0].encode()):
        h.update(rel.encode() + b"\0" + digest.hex().encode() + b"\n")
    return h.hexdigest()


def measure(root: str | Path, chunk_octets: int = 1 << 20) -> Measurement:
    """List, hash every component, sort and hash the list; timed with perf_counter_ns around all of it."""
    if chunk_octets < 1:
        raise ValueError("chunk_octets must be >= 1")
    buffer = bytearray(chunk_octets)
    start = time.perf_counter_ns()
    entries, skipped = list_image(root)
    pairs = []
    octets = 0
    for entry in entries:
        if entry.link:
            digest = hashlib.sha256(b"symlink\0" + os.fsencode(os.readlink(entry.path))).digest()
        else:
            digest, n = file_digest(entry.path, buffer)
            octets += n
        pairs.append((entry.rel, digest))
    image = list_digest(pairs)
    seconds = (time.perf_counter_ns() - start) / 1e9
    if not entries:
        raise ImageError("holds no files to measure", field=str(root))
    links = sum(e.link for e in entries)
    return Measurement(image, len(entries) - links, links, skipped, octets, seconds)


def residency(root: str | Path) -> tuple[int, int]:
    """(resident, total) page-cache pages over every regular file of the image."""
    resident = total = 0
    for entry in list_image(root)[0]:
        if not entry.link:
            r, t = pagecache.resident_pages(entry.path)
            resident += r
            total += t
    return resident, total


def evict(root: str | Path) -> pd.DataFrame:
    """Evict every regular file of the image from the page cache; per file: pages before, after, total."""
    rows = [(e.rel, *_evicted(e.path)) for e in list_image(root)[0] if not e.link]
    return pd.DataFrame(rows, columns=["path", "resident_before", "resident_after", "pages"])


def _evicted(path: str) -> tuple[int, int, int]:
    result = pagecache.evict(path)
    return result.before, result.after, result.total


def summary(evicted: pd.DataFrame) -> dict[str, int]:
    """Totals of one eviction pass: pages resident before and after, files still partly resident."""
    return {"pages": int(evicted["pages"].sum()), "resident_before": int(evicted["resident_before"].sum()),
            "resident_after": int(evicted["resident_after"].sum()),
            "files_still_resident": int(np.count_nonzero(evicted["resident_after"]))}
