"""A study's output set: staged in a private folder, then replaced as a whole or not at all."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from matplotlib.figure import Figure

from pqlab.errors import OutputError
from pqlab.io import METADATA_KEY, ensure_writable_dir
from pqlab.paths import ProjectPaths

STAGING = ".pqlab-staging"
# Figures carry no creation date, so two runs of the same study give identical files.
_FIGURE_METADATA = {"pdf": {"CreationDate": None, "ModDate": None}, "png": {}}


def _markdown(frame: pd.DataFrame, floatfmt: str) -> str:
    return frame.to_markdown(index=False, floatfmt=floatfmt) + "\n"


class OutputSet:
    """Collect every file of one study run; ``commit`` moves them all into place, rolling back on failure.

    Use as a context manager: the set is committed when the block ends normally and discarded (previous
    outputs untouched) when it raises or is interrupted. Files get the mode the umask gives.
    """

    def __init__(self, paths: ProjectPaths, stage: str) -> None:
        self.paths = paths
        self.stage = stage
        base = ensure_writable_dir(paths.root / STAGING, field=f"staging folder {STAGING}")
        self._dir = Path(tempfile.mkdtemp(dir=base, prefix=f"{stage}-"))
        self._staged: dict[Path, Path] = {}
        self.written: list[Path] = []

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

    def text(self, final: str | Path, text: str) -> Path:
        self.path(final).write_text(text)
        return Path(final)

    def json(self, final: str | Path, data: Any) -> Path:
        return self.text(final, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")

    def parquet(self, final: str | Path, frame: pd.DataFrame, metadata: dict[str, Any] | None = None) -> Path:
        """``frame`` as parquet, ``metadata`` as JSON under the schema key ``pqlab`` (provenance)."""
        table = pa.Table.from_pandas(frame, preserve_index=False)
        if metadata is not None:
            merged = dict(table.schema.metadata or {})
            merged[METADATA_KEY] = json.dumps(metadata, default=str, sort_keys=True).encode()
            table = table.replace_schema_metadata(merged)
        pq.write_table(table, self.path(final))
        return Path(final)

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
            fig.savefig(self.path(final), format=fmt, dpi=200, bbox_inches="tight",
                        metadata=_FIGURE_METADATA[fmt])
            out.append(final)
        return out

    # --- commit / discard ------------------------------------------------------------------------------
    def commit(self) -> list[Path]:
        """Move every staged file into place; if any move fails, put every previous file back."""
        backups = self._dir / "old"
        moved: list[tuple[Path, Path | None]] = []
        try:
            for final, staged in sorted(self._staged.items()):
                final.parent.mkdir(parents=True, exist_ok=True)
                backup = None
                if final.exists():
                    backup = backups / final.relative_to(self.paths.root.resolve())
                    backup.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(final, backup)
                moved.append((final, backup))
                os.replace(staged, final)
        except BaseException as exc:
            for final, backup in reversed(moved):
                if backup is not None and backup.exists():
                    os.replace(backup, final)
                elif backup is None:
                    final.unlink(missing_ok=True)
            self.discard()
            if isinstance(exc, OSError):
                raise OutputError(f"cannot replace {final}: {exc.strerror or exc}; the previous outputs were kept",
                                  field=self.stage) from exc
            raise
        self.written = sorted(self._staged)
        self.discard()
        return self.written

    def discard(self) -> None:
        """Drop everything staged (the project's previous outputs are untouched)."""
        shutil.rmtree(self._dir, ignore_errors=True)
        try:
            self._dir.parent.rmdir()  # the shared staging folder, once no run uses it
        except OSError:
            pass

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()
