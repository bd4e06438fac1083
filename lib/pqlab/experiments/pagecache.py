"""Page-cache residency of a file (mincore on a read-only mapping, via ctypes) and verified eviction."""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pqlab.errors import PqlabError

PAGE = mmap.PAGESIZE
_PROT_READ, _MAP_SHARED = mmap.PROT_READ, mmap.MAP_SHARED


class PageCacheError(PqlabError):
    """The page cache of a file could not be inspected or evicted."""

    code = "PAGECACHE_UNAVAILABLE"


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.restype = ctypes.c_int
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
    return libc


_LIBC = _libc()
_MAP_FAILED = ctypes.c_void_p(-1).value


def pages(size: int) -> int:
    """Pages a file of ``size`` octets occupies."""
    return (size + PAGE - 1) // PAGE


def resident_pages_fd(fd: int, size: int) -> int:
    """Pages of the open file ``fd`` (``size`` octets) present in the page cache, by mincore(2).

    Mapping a file does not fault its pages in; for a shared file mapping mincore reports the page
    cache itself, so the answer does not depend on whether this process ever touched the pages.
    """
    if size == 0:
        return 0
    addr = _LIBC.mmap(None, size, _PROT_READ, _MAP_SHARED, fd, 0)
    if addr is None or addr == _MAP_FAILED:
        err = ctypes.get_errno()
        raise PageCacheError(f"mmap failed: {os.strerror(err)}", field="mmap")
    try:
        vec = (ctypes.c_ubyte * pages(size))()
        if _LIBC.mincore(addr, size, vec) != 0:
            err = ctypes.get_errno()
            raise PageCacheError(f"mincore failed: {os.strerror(err)}", field="mincore")
        return int(np.count_nonzero(np.frombuffer(vec, dtype=np.uint8) & 1))
    finally:
        _LIBC.munmap(addr, size)


def resident_pages(path: str | Path) -> tuple[int, int]:
    """(resident, total) pages of the file at ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        return resident_pages_fd(fd, size), pages(size)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Eviction:
    """One file's eviction: pages resident before and after, out of ``total``."""

    before: int
    after: int
    total: int


def evict(path: str | Path) -> Eviction:
    """fsync, then POSIX_FADV_DONTNEED the whole file, and count resident pages before and after.

    fsync first so no page is dirty (the kernel drops only clean, unmapped pages); the ``after``
    count is what was measured, not assumed: pages mapped or locked by another process stay.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        before = resident_pages_fd(fd, size)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return Eviction(before, resident_pages_fd(fd, size), pages(size))
    finally:
        os.close(fd)
