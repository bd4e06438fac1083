"""Every stage's command line, run once per test session on the smoke profile with the repository's params, each
into a new empty ``--out-dir`` (issue 24 item 4: the output folder holds outputs only, inputs come from the project).
Each runs ``pqlab.cli.main`` in a process forked from a preloaded interpreter (tests/forked_cli.py).

Many tests assert on these outputs instead of running the same study again. The runs are shared by all xdist
workers: the first worker that needs a stage runs it under a file lock in the session's common temporary folder, the
others wait for it and read the same files. ``control_cycle`` pins the real-time core: tests that use its outputs (or
the whole pipeline) belong to ``xdist_group("rt_core")``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from filelock import FileLock

from pqlab import io
from pqlab.pipeline import registry
from tests import forked_cli

REPO = Path(__file__).resolve().parent.parent
PARAMS = REPO / "params" / "params.yaml"

# stage -> its command line, in the stage registry's (dvc.yaml's) order; --params, --profile smoke and --out-dir are
# added. The model stages without progress bars take no --quiet; grids run on one worker (the session has two cores).
_OPTIONS = {"attack_matrix": [], "case_sizes": [], "design_space": [], "report": [],
            **{grid: ["--workers", "1", "--quiet"] for grid in ("transport", "sensitivity", "assumptions",
                                                                "transport_crosscheck")}}
COMMANDS: dict[str, list[str]] = {stage.name: [stage.command, *_OPTIONS.get(stage.name, ["--quiet"])]
                                  for stage in registry.STAGES}
STAGES = tuple(COMMANDS)


def argv(stage: str, out_dir: Path) -> list[str]:
    if stage == "report":
        return ["report", "--root", str(REPO), "--out-dir", str(out_dir)]
    return [*COMMANDS[stage], "--params", str(PARAMS), "--profile", "smoke", "--out-dir", str(out_dir)]


@dataclass(frozen=True)
class StageRun:
    """One finished command: its output folder, exit code, stdout and stderr."""

    stage: str
    root: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def ok(self) -> StageRun:
        assert self.returncode == 0, f"pqlab {' '.join(COMMANDS[self.stage])} exited {self.returncode}: {self.stderr}"
        return self

    @property
    def written(self) -> list[Path]:
        """The files the command says it wrote (its ``wrote …`` lines)."""
        return [Path(line.removeprefix("wrote ")) for line in self.stdout.splitlines() if line.startswith("wrote ")]

    @property
    def files(self) -> set[str]:
        """Every file under the output folder, relative to it."""
        return {p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()}

    @property
    def metrics(self) -> dict:
        return io.read_json(self.root / "data" / "derived" / str(registry.BY_NAME[self.stage].metrics))

    def table(self, name: str) -> pd.DataFrame:
        """A written table (``paper_figs/*/<name>.csv``)."""
        found = list((self.root / "paper_figs").glob(f"*/{name}.csv"))
        assert len(found) == 1, (name, found)
        return pd.read_csv(found[0])

    def parquet(self, relative: str) -> pd.DataFrame:
        return io.read_parquet(self.root / relative)


def session_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder under the test session's common temporary folder, the same for every xdist worker."""
    base = factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(exist_ok=True)
    return folder


class SmokeOutputs:
    """The session's smoke runs (the ``smoke`` fixture): ``run(stage)`` and ``pipeline()``."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.folder = session_folder(factory, "smoke")

    def run(self, stage: str) -> StageRun:
        """The stage's run (made now if no worker made it yet); a stage that needs a TPM skips or fails without."""
        if stage == "recovery":
            from tests.recovery.conftest import require_tpm

            require_tpm()
        if stage == "transport_crosscheck":
            from tests.ns3_support import require_ns3

            require_ns3()
        record = self.folder / f"{stage}.json"
        with FileLock(str(self.folder / f"{stage}.lock")):
            if not record.exists():
                out = self.folder / stage
                out.mkdir()  # new and empty: the command must find every input in the project
                started = time.monotonic()
                code, stdout, stderr = forked_cli.run(argv(stage, out), self.folder)
                record.write_text(json.dumps({"returncode": code, "stdout": stdout, "stderr": stderr,
                                              "seconds": time.monotonic() - started}))
        return StageRun(stage, self.folder / stage, **json.loads(record.read_text()))

    def pipeline(self) -> StageRun:
        """Every stage's outputs together in one folder, then the report over them (what ``dvc repro`` builds)."""
        record = self.folder / "pipeline.json"
        with FileLock(str(self.folder / "pipeline.lock")):
            if not record.exists():
                out = self.folder / "pipeline"
                out.mkdir()
                for stage in STAGES[:-1]:
                    if (stage == "recovery" and _no_tpm()) or (stage == "transport_crosscheck" and _no_ns3()):
                        continue
                    run = self.run(stage).ok()  # the 355 MB generated image is not the report's business
                    shutil.copytree(run.root, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("image_tree"))
                started = time.monotonic()
                code, stdout, stderr = forked_cli.run(["report", "--root", str(REPO), "--out-dir", str(out)],
                                                      self.folder, timeout=300)
                record.write_text(json.dumps({"returncode": code, "stdout": stdout, "stderr": stderr,
                                              "seconds": time.monotonic() - started}))
        return StageRun("report", self.folder / "pipeline", **json.loads(record.read_text()))


def _no_ns3() -> bool:
    from tests.ns3_support import ns3_problem, required

    return ns3_problem() is not None and not required()


def _no_tpm() -> bool:
    from tests.recovery.conftest import tpm_problem

    return tpm_problem() is not None and os.environ.get("PQLAB_REQUIRE_TPM") != "1"
