"""An append-only checkpoint log: one write + ``os.fsync`` per append, counted by instrumentation."""

from __future__ import annotations

import os
from pathlib import Path


class DurableLog:
    """Appends length-prefixed entries to a file and fsyncs each one; ``fsync_count`` counts real fsync calls."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.fsync_count = 0
        self.appends = 0

    def append(self, entry: bytes) -> None:
        """One durable write: the entry (4-octet length + data) reaches the disk before this returns."""
        data = len(entry).to_bytes(4, "big") + entry
        written = 0
        while written < len(data):
            written += os.write(self._fd, data[written:])
        self._fsync()
        self.appends += 1

    def _fsync(self) -> None:
        os.fsync(self._fd)
        self.fsync_count += 1

    def entries(self) -> list[bytes]:
        """Read every entry back (for recovery and tests)."""
        data = self.path.read_bytes()
        out, pos = [], 0
        while pos + 4 <= len(data):
            n = int.from_bytes(data[pos:pos + 4], "big")
            out.append(data[pos + 4:pos + 4 + n])
            pos += 4 + n
        return out

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            self.close()

    def __enter__(self) -> DurableLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
