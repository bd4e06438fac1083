"""A study's output set: staged in a private folder, then replaced as a whole or not at all.

Every file of a run is written under ``<root>/.pqlab-staging/<stage>-XXXX/new/`` first (with the mode the umask
gives). ``commit`` then takes the project's commit lock, writes a journal, moves the previous files aside and
the new ones into place; a failure rolls every file back (if putting one back fails too, the journal stays
and the next run completes the rollback). Ctrl-C during those few renames is held until they
are done, so an interrupt leaves the previous set or the new one, never a mix. A process killed (SIGKILL,
power) in the middle of them leaves the journal, and the next run's :func:`recover` completes the commit; a
folder left by a run killed while staging is removed the same way. Two runs into one project each commit
whole sets, one after the other.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from matplotlib.figure import Figure

from pqlab.errors import OutputError
from pqlab.io import FileLock, fsync_path, json_text, parquet_table
from pqlab.paths import ProjectPaths

STAGING = ".pqlab-staging"
_COMMIT_LOCK = ".commit.lock"
_ALIVE = ".alive"
_JOURNAL = "journal.json"
# Figures carry no creation date, so two runs of the same study give identical files.
_FIGURE_METADATA = {"pdf": {"CreationDate": None, "ModDate": None}, "png": {}}

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)

_OWN: set[Path] = set()                 # this process's live private folders (never recovered by it)
STATUS: dict[str, dict[str, Any]] = {}  # stage -> {"state": staging|committed|discarded, "files": n}


def octets_text(octets: int | None) -> str:
    """``octets`` for a message: 1.2 MB, 340 kB, 512 B (decimal units, as df -H prints them)."""
    if octets is None:
        return "an unknown amount"
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if octets >= size:
            return f"{octets / size:.1f} {unit}"
    return f"{octets} B"


def free_octets(folder: str | Path) -> int | None:
    """Octets free to this user on the file system holding ``folder`` (None if it cannot be asked)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def rounded(frame: pd.DataFrame, *, decimals: int | None = None, significant: int | None = None,
            keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """A copy whose float columns (except ``keep``) are rounded to ``decimals`` places or ``significant`` digits:
    what a markdown table shows beside the full-precision CSV."""
    if (decimals is None) == (significant is None):
        raise ValueError("give decimals or significant digits, not both or neither")
    out = frame.copy()
    for column in out.select_dtypes("float").columns:
        if column in keep:
            continue
        if significant is None:
            out[column] = out[column].round(decimals)
        else:
            out[column] = out[column].map(lambda v: float(f"{v:.{significant}g}"))
    return out


def _markdown(frame: pd.DataFrame, floatfmt: str) -> str:
    return frame.to_markdown(index=False, floatfmt=floatfmt) + "\n"


def _private_dir(root: Path, prefix: str) -> tuple[Path, FileLock]:
    """A new folder under ``root/.pqlab-staging`` marked alive by a lock this process holds."""
    base = root / STAGING
    for _ in range(50):
        try:
            base.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(dir=base, prefix=prefix))
            lock = FileLock(folder / _ALIVE)
            if lock.acquire():
                _OWN.add(folder)
                return folder, lock
        except FileNotFoundError:  # another run removed the empty staging folder just now: again
            continue
        except OSError as exc:
            raise OutputError(f"{base} is not writable ({exc.strerror or exc})",
                              field=f"staging folder {STAGING}") from exc
    raise OutputError("cannot create a private staging folder", field=str(base))


def _drop_private_dir(folder: Path, lock: FileLock | None) -> None:
    if lock is not None:
        lock.release()
    shutil.rmtree(folder, ignore_errors=True)
    _OWN.discard(folder)
    try:
        folder.parent.rmdir()  # the shared staging folder, once no run uses it
    except OSError:
        pass


@contextmanager
def _commit_lock(root: Path) -> Iterator[None]:
    """The project's commit lock: one output set is replaced at a time."""
    base = root / STAGING
    lock = FileLock(base / _COMMIT_LOCK)
    for _ in range(50):
        try:
            base.mkdir(parents=True, exist_ok=True)
            lock.acquire(blocking=True)
            break
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OutputError(f"cannot take the commit lock ({exc.strerror or exc})", field=str(base)) from exc
    else:
        raise OutputError("cannot take the commit lock", field=str(base))
    try:
        yield
    finally:
        lock.release(remove=True)


@contextmanager
def _sigint_held() -> Iterator[list[int]]:
    """Hold Ctrl-C (SIGINT) until the block ends; the caller re-raises it afterwards."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def _write_journal(folder: Path, state: str, items: list[dict[str, Any]]) -> None:
    tmp = folder / f".{_JOURNAL}.tmp"
    tmp.write_text(json.dumps({"state": state, "pid": os.getpid(), "items": items}))
    fsync_path(tmp)
    os.replace(tmp, folder / _JOURNAL)
    fsync_path(folder)


def _replay(journal: dict[str, Any]) -> None:
    """Finish what a killed commit started: forward (every staged file into place) or back (old files)."""
    for item in journal["items"]:
        final, staged, backup = Path(item["final"]), Path(item["staged"]), Path(item["backup"])
        if journal["state"] == "forward":
            if staged.exists():
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, final)
        elif item["had_old"]:
            if backup.exists():
                os.replace(backup, final)
        elif not staged.exists():
            final.unlink(missing_ok=True)


def recover(root: str | Path) -> list[str]:
    """Complete or remove what killed runs left in ``root/.pqlab-staging``; returns what was done."""
    base = Path(root) / STAGING
    done: list[str] = []
    try:  # another run may drop the emptied staging folder at any moment: then nothing is left to recover
        folders = sorted(p for p in base.iterdir() if p.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return done
    for folder in folders:
        if folder in _OWN:
            continue
        lock = FileLock(folder / _ALIVE)
        try:
            if not lock.acquire():
                continue  # a live run's folder
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            journal_path = folder / _JOURNAL
            if journal_path.exists():
                with _commit_lock(Path(root)):
                    try:
                        journal = json.loads(journal_path.read_text())
                    except (OSError, ValueError):
                        journal = None
                    if journal is not None:
                        _replay(journal)
                        done.append(f"completed the interrupted commit in {folder.name} ({journal['state']})")
        finally:
            lock.release()
        shutil.rmtree(folder, ignore_errors=True)
        done.append(f"removed {folder.name}")
    stale = FileLock(base / _COMMIT_LOCK)
    try:
        if stale.path.exists() and stale.acquire():  # left by a run killed while committing
            stale.release(remove=True)
    except FileNotFoundError:  # its run finished and dropped the staging folder after our look
        pass
    try:
        base.rmdir()
    except OSError:
        pass
    return done


@contextmanager
def scratch_dir(paths: ProjectPaths, stage: str) -> Iterator[Path]:
    """A private working folder for a study's temporary files, removed afterwards (or by the next run if killed)."""
    recover(paths.root)
    folder, lock = _private_dir(paths.root, f"{stage}-scratch-")
    try:
        yield folder
    finally:
        _drop_private_dir(folder, lock)


class OutputSet:
    """Collect every file of one study run; ``commit`` moves them all into place, rolling back on failure.

    Use as a context manager: the set is committed when the block ends normally and discarded (previous
    outputs untouched) when it raises or is interrupted. Files get the mode the umask gives.
    """

    def __init__(self, paths: ProjectPaths, stage: str) -> None:
        self.paths = paths
        self.stage = stage
        recover(paths.root)
        self._dir, self._lock = _private_dir(paths.root, f"{stage}-")
        self._kept_for_recovery = False
        self._staged: dict[Path, Path] = {}
        self._staged_octets = 0
        self.written: list[Path] = []
        STATUS[stage] = {"state": "staging", "files": 0}

    # --- staging ---------------------------------------------------------------------------------------
    def path(self, final: str | Path) -> Path:
        """The staging path standing in for ``final`` (an absolute path inside the project)."""
        final = Path(final).resolve()
        root = self.paths.root.resolve()
        if not final.is_relative_to(root):
            raise ValueError(f"{final} is outside the project {root}")
        staged = self._dir / "new" / final.relative_to(root)
        staged.parent.mkdir(parents=True, exist_ok=True)
        self._staged[final] = staged
        return staged

    @contextmanager
    def writing(self, final: str | Path, octets: int) -> Iterator[None]:
        """Around a write of ``octets`` for ``final``: a full disk or a refused write becomes one OutputError
        that says how much space the set needs (the previous outputs are untouched: nothing is committed)."""
        try:
            yield
        except OSError as exc:
            if exc.errno in _NO_SPACE:
                needed = self._staged_octets + octets
                raise OutputError(
                    f"no space left on the device while writing {Path(final).name}: this output set needs at least "
                    f"{octets_text(needed)} ({octets_text(octets)} for this file, {octets_text(self._staged_octets)} "
                    f"staged before it) and {octets_text(free_octets(self._dir))} is free; free some space and "
                    "rerun (the previous outputs are unchanged)", field=f"{self.stage} outputs") from exc
            raise OutputError(f"cannot write {final}: {exc.strerror or exc}; the previous outputs are unchanged",
                              field=f"{self.stage} outputs") from exc
        self._staged_octets += octets

    def _write_bytes(self, final: str | Path, data: bytes) -> Path:
        with self.writing(final, len(data)):
            with open(self.path(final), "wb") as handle:
                handle.write(data)
        return Path(final)

    def text(self, final: str | Path, text: str) -> Path:
        return self._write_bytes(final, text.encode())

    def json(self, final: str | Path, data: Any, *, checksum: bool = True) -> Path:
        """``data`` as JSON; an object carries ``pqlab_sha256`` so a reader (pqlab.io.read_json) notices a change."""
        return self.text(final, json_text(data, checksum))

    def metrics(self, final: str | Path, data: dict[str, Any], *, label: str, key: str, unit: str) -> list[Path]:
        """``final`` (``<stage>_metrics.json``: every metric, read by REPORT.md) and beside it the compact
        ``<stage>_headline.json`` that dvc.yaml declares as the stage's metrics: the same four keys for every
        study (profile, headline, value, unit), so ``dvc metrics show`` is one narrow row per study."""
        final = Path(final)
        if len(label) > 26 or len(unit) > 8:
            raise ValueError(f"headline label (<= 26 characters) and unit (<= 8) must stay short: {label!r} {unit!r}")
        if not final.name.endswith("_metrics.json"):
            raise ValueError(f"a metrics file is named <stage>_metrics.json, not {final.name}")
        value: Any = data
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, int | float):
            raise ValueError(f"headline {key} is not a number: {value!r}")
        compact = {"profile": data.get("profile"), "headline": label, "value": value, "unit": unit}
        headline = final.with_name(final.name.removesuffix("_metrics.json") + "_headline.json")
        return [self.json(final, data), self.json(headline, compact, checksum=False)]

    def parquet(self, final: str | Path, frame: pd.DataFrame, metadata: dict[str, Any] | None = None) -> Path:
        """``frame`` as parquet, ``metadata`` as JSON under the schema key ``pqlab`` (provenance)."""
        sink = pa.BufferOutputStream()  # serialised first, so a full disk can say how much the file needed
        pq.write_table(parquet_table(frame, metadata), sink)
        return self._write_bytes(final, sink.getvalue().to_pybytes())

    def table(self, frame: pd.DataFrame, stem: str | Path, *, markdown: pd.DataFrame | None = None,
              floatfmt: str = "g") -> list[Path]:
        """``stem``.csv (full precision) and ``stem``.md (``markdown`` if given, else the same frame)."""
        stem = Path(stem)
        csv = self.text(stem.with_suffix(".csv"), frame.to_csv(index=False))
        md = self.text(stem.with_suffix(".md"), _markdown(frame if markdown is None else markdown, floatfmt))
        return [csv, md]

    def figure(self, fig: Figure, stem: str | Path) -> list[Path]:
        """``stem``.pdf and ``stem``.png, without creation dates."""
        out = []
        for fmt in ("pdf", "png"):
            final = Path(stem).with_suffix(f".{fmt}")
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=200, bbox_inches="tight", metadata=_FIGURE_METADATA[fmt])
            out.append(self._write_bytes(final, buffer.getvalue()))
        return out

    # --- commit / discard ------------------------------------------------------------------------------
    def commit(self) -> list[Path]:
        """Move every staged file into place; if any move fails, put every previous file back."""
        root = self.paths.root.resolve()
        backups = self._dir / "old"
        items = [{"final": str(final), "staged": str(staged), "backup": str(backups / final.relative_to(root)),
                  "had_old": final.exists()} for final, staged in sorted(self._staged.items())]
        with _sigint_held() as interrupted:
            try:
                with _commit_lock(root):
                    self._move_all(items)
            except BaseException:
                self.discard()
                raise
            self.written = sorted(self._staged)
            STATUS[self.stage] = {"state": "committed", "files": len(self.written)}
            self.discard(keep_status=True)
        if interrupted:
            raise KeyboardInterrupt
        return self.written

    def _move_all(self, items: list[dict[str, Any]]) -> None:
        try:
            _write_journal(self._dir, "forward", items)
        except OSError as exc:  # nothing has been moved yet
            raise OutputError(f"cannot write the commit journal: {exc.strerror or exc}; the previous outputs were "
                              "kept", field=self.stage) from exc
        moved: list[dict[str, Any]] = []
        try:
            for item in items:  # everything staged must still be there before anything is replaced
                staged, final = Path(item["staged"]), Path(item["final"])
                if not staged.exists():
                    raise FileNotFoundError(2, "staged output vanished", item["staged"])
                if final.is_dir() and not staged.is_dir():  # never move a user's folder aside (it would be deleted)
                    raise IsADirectoryError(21, "a folder is where the file goes", item["final"])
            for item in items:
                final, staged, backup = Path(item["final"]), Path(item["staged"]), Path(item["backup"])
                final.parent.mkdir(parents=True, exist_ok=True)
                if item["had_old"]:
                    backup.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(final, backup)
                moved.append(item)
                os.replace(staged, final)
        except OSError as exc:
            _write_journal(self._dir, "back", moved)
            try:
                _replay({"state": "back", "items": moved})
            except OSError as again:  # the journal and the moved-aside files stay: the next run's recover() ends it
                self._kept_for_recovery = True
                raise OutputError(f"cannot replace {exc.filename or 'an output'} ({exc.strerror or exc}) nor put "
                                  f"every previous file back ({again.strerror or again}); the next run in this "
                                  "project completes putting them back", field=self.stage) from again
            (self._dir / _JOURNAL).unlink(missing_ok=True)
            raise OutputError(f"cannot replace {exc.filename or 'an output'}: {exc.strerror or exc}; the previous "
                              "outputs were kept", field=self.stage) from exc
        (self._dir / _JOURNAL).unlink()

    def discard(self, keep_status: bool = False) -> None:
        """Drop everything staged (the project's previous outputs are untouched), unless a failed rollback left its
        journal here for the next run to complete."""
        if not keep_status and STATUS.get(self.stage, {}).get("state") == "staging":
            STATUS[self.stage] = {"state": "discarded", "files": 0}
        if self._kept_for_recovery:  # a failed rollback's journal: released for the next run's recover()
            if self._lock is not None:
                self._lock.release()
            _OWN.discard(self._dir)
        else:
            _drop_private_dir(self._dir, self._lock)
        self._lock = None

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def interrupt_report(kept_caches: dict[Path, int] | None = None) -> str:
    """What an interrupted run leaves, true to this process's output sets and resume caches."""
    parts = []
    committed = [f"{stage} ({s['files']} files)" for stage, s in STATUS.items() if s["state"] == "committed"]
    unwritten = [stage for stage, s in STATUS.items() if s["state"] != "committed"]
    if committed:
        parts.append(f"the complete new output set of {', '.join(committed)} was written before the interrupt")
    if unwritten:
        parts.append(f"the output set of {', '.join(unwritten)} was not written and the previous one is unchanged")
    if not STATUS:
        parts.append("no output set was written; the previous outputs are unchanged")
    for folder, count in (kept_caches or {}).items():
        parts.append(f"{count} finished part(s) are kept in {folder} and reused by the next run")
    return "; ".join(parts)
