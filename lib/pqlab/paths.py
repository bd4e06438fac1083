"""Where a project's outputs live, derived from its root (the folder holding ``params/``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pqlab.io import ensure_writable_dir


@dataclass(frozen=True)
class ProjectPaths:
    """The output folders of one project tree."""

    root: Path

    @property
    def raw(self) -> Path:
        return self.root / "data" / "raw"

    @property
    def derived(self) -> Path:
        return self.root / "data" / "derived"

    @property
    def plots(self) -> Path:
        """Small CSVs of the plotted numbers, for ``dvc plots show`` (dvc.yaml's top-level ``plots:``)."""
        return self.root / "data" / "derived" / "plots"

    @property
    def amort_figs(self) -> Path:
        return self.root / "paper_figs" / "amort"

    @property
    def case_figs(self) -> Path:
        return self.root / "paper_figs" / "case"

    @property
    def report(self) -> Path:
        return self.root / "paper_figs" / "REPORT.md"

    @property
    def paper_reference(self) -> Path:
        return self.root / "params" / "paper_reference.yaml"

    def check_writable(self, *folders: Path) -> None:
        """Fail before any work starts if an output folder cannot be written."""
        for folder in folders:
            ensure_writable_dir(folder, field=f"output folder {folder.relative_to(self.root)}"
                                if folder.is_relative_to(self.root) else "output folder")
