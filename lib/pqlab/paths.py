"""Where a project's outputs live (its root, or ``--out-dir``), where its inputs come from (``params/``), and how
``params/params.yaml`` is found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pqlab.errors import ParamsError
from pqlab.io import ensure_writable_dir


@dataclass(frozen=True)
class ProjectPaths:
    """The output folders of one project tree, and the ``params/`` folder its inputs are read from.

    ``root`` is where outputs go (``--out-dir``); ``params_dir`` defaults to ``root/params`` and is the folder of
    the ``--params`` file when the two differ, so an output folder never has to hold inputs.
    """

    root: Path
    params_dir: Path | None = None  # None: root / "params"

    @property
    def inputs(self) -> Path:
        """The ``params/`` folder the inputs are read from."""
        return self.params_dir if self.params_dir is not None else self.root / "params"

    @property
    def project(self) -> Path:
        """The project the inputs belong to (the parent of ``params/``): relative input paths start here."""
        return self.inputs.parent

    def input(self, name: str) -> Path:
        """An input file of ``params/`` (a cycle table, the paper reference), never one from the output folder."""
        return self.inputs / name

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
        return self.input("paper_reference.yaml")

    def check_writable(self, *folders: Path) -> None:
        """Fail before any work starts if an output folder cannot be written."""
        for folder in folders:
            ensure_writable_dir(folder, field=f"output folder {folder.relative_to(self.root)}"
                                if folder.is_relative_to(self.root) else "output folder")


def find_params(start: str | Path | None = None) -> Path:
    """``params/params.yaml`` of the project containing ``start`` (default: the working directory)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "params" / "params.yaml"
        if candidate.is_file():
            return candidate
    raise ParamsError(f"no params/params.yaml in {here} or any folder above it", field="params_path")


def project_root(params_path: str | Path) -> Path:
    """The project a params file belongs to: the parent of its ``params/`` folder."""
    return Path(params_path).resolve().parent.parent
