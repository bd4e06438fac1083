"""Fault injection for the test suite: run a stage's command in a forked process that is killed (SIGKILL) or
interrupted (SIGINT) at a chosen point of its write phase, and count every injected fault and how it ended.

The write phase starts when the stage's output set creates its staging folder; from then on every file-system
event the interpreter audits (open, mkdir, rename, remove, rmdir) is a numbered point. A fault is injected from
inside the process at point N, so the points are exact and reproducible, and the process is a real one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import uuid
from collections import Counter
from pathlib import Path

import yaml

from tests import forked_cli, smoke

# every injected fault: (kind, target, outcome) with outcome "correct result" or "one clear line"
LOG: list[tuple[str, str, str]] = []
OUTCOMES = ("correct result", "one clear line")
_EVENTS = ("open", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.rmtree")


def record(kind: str, target: str, outcome: str) -> None:
    assert outcome in OUTCOMES, outcome
    LOG.append((kind, target, outcome))


@contextlib.contextmanager
def expecting(count: int, *kinds: str):
    """The block must record exactly ``count`` faults, each of one of ``kinds`` (so no test can pass having injected
    nothing, and no test depends on another's faults)."""
    start = len(LOG)
    yield
    new = LOG[start:]
    assert len(new) == count, f"{len(new)} faults recorded, {count} expected"
    assert {kind for kind, _, _ in new} <= set(kinds), new


def summary() -> str:
    by_kind = Counter(kind for kind, _, _ in LOG)
    by_outcome = Counter(outcome for _, _, outcome in LOG)
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(by_kind.items()))
    ends = ", ".join(f"{by_outcome[o]} {o}" for o in OUTCOMES)
    return f"fault injection: {len(LOG)} faults injected ({kinds}); every one ended in a {OUTCOMES[0]} or " \
           f"{OUTCOMES[1]}: {ends}; 0 silent changes"


def small_params(raw: dict) -> None:
    """The smoke profile made smaller still: the write phase is what is under test."""
    raw["costs"]["profiles"]["smoke"].update(trials=1, reps=5, reps_slow=2, warmup=0, bootstrap_resamples=100)
    raw["attack_matrix"].update(stream_records=64, stream_k=8)
    raw["case_sizes"]["configurations"] = ["B", "D3"]
    for name in raw["case_sizes"]["profiles"]:
        raw["case_sizes"]["profiles"][name]["real_material"] = ["B"]
    raw["design_space"].update(key_exchanges=["ML-KEM-512"], noc=["ML-DSA-44", "Falcon-512"], icac=[None],
                               rcac=["ECDSA-P256", "ML-DSA-44"], modes=["sig/none", "kem-pdk/both"],
                               configurations=["B", "D3"])
    raw["transport"]["hops"] = [1]
    raw["transport"]["profiles"]["smoke"].update(runs=2, bootstrap_resamples=100)
    raw["image_tree"] = {"files": 40, "total_bytes": 400_000, "directories": 5}
    raw["control_cycle"]["profiles"]["smoke"].update(cycles=10, warmup_cycles=1)
    raw["amortisation"]["profiles"]["smoke"].update(  # every baseline and storage target, two intervals, no budget
        intervals=[1, 16], sensitivity_intervals=[1, 16], min_reports=8, min_checkpoints=1, sweep_budget_s=0.5,
        sweep_rounds=1, omission_trials=1, equivocation_trials=1, sensitivity_min_reports=4,
        sensitivity_min_checkpoints=1, probe_reps=1, path_probe_small=2, fsync_probe_reps=2, sign_probe_reps=2,
        bootstrap_resamples=100)


def make_project(root: Path) -> Path:
    (root / "params").mkdir(parents=True)
    for source in (Path(__file__).resolve().parent.parent / "params").glob("*.yaml"):
        shutil.copy(source, root / "params" / source.name)
    path = root / "params" / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    small_params(raw)
    path.write_text(yaml.safe_dump(raw))
    return root


def command(stage: str, root: Path) -> list[str]:
    """The `pqlab` command line that runs ``stage`` in project ``root`` on the smoke profile: the session's smoke run
    of the stage (tests/smoke.py, from the stage registry) with this project's params."""
    if stage == "report":
        return ["report", "--root", str(root)]
    return [*smoke.COMMANDS[stage], "--params", str(root / "params" / "params.yaml"), "--profile", "smoke"]


def _job(stage: str, root: str, fault: str | None, point: int, result: str) -> None:
    """Runs in a fresh process: the stage's command, with ``fault`` ("kill" / "int") at write-phase point ``point``."""
    from pqlab import cli
    from pqlab.pipeline.outputs import STAGING

    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a fresh pqlab process
    marker = f"{os.sep}{STAGING}{os.sep}{stage}-"
    seen = [0, False]  # events counted, write phase started

    def hook(event: str, args: tuple) -> None:
        if event not in _EVENTS:
            return
        if not seen[1]:
            path = str(args[0]) if args else ""
            if marker not in path or "-scratch-" in path:
                return
            seen[1] = True
        seen[0] += 1
        if fault and seen[0] == point:
            if fault == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                signal.raise_signal(signal.SIGINT)

    sys.addaudithook(hook)
    with open(os.devnull, "w") as sink, open(f"{result}.stderr", "w") as err, \
            contextlib.redirect_stdout(sink), contextlib.redirect_stderr(err):
        code = cli.main(command(stage, Path(root)))
    Path(result).write_text(json.dumps({"code": code, "events": seen[0]}))


def run(stage: str, root: Path, fault: str | None = None, point: int = 0) -> dict:
    """Run ``stage`` in a new process; returns {"code", "events", "stderr"}, code -9 when it was killed."""
    result = root.parent / f".{root.name}-{stage}-{fault}-{point}-{uuid.uuid4().hex[:8]}.json"  # runs may overlap
    process = forked_cli.context().Process(target=_job, args=(stage, str(root), fault, point, str(result)))
    process.start()
    process.join(600)
    stderr_path = Path(f"{result}.stderr")
    stderr = stderr_path.read_text() if stderr_path.exists() else ""
    stderr_path.unlink(missing_ok=True)
    if process.exitcode != 0:
        return {"code": process.exitcode, "events": None, "stderr": stderr}
    data = json.loads(result.read_text())
    result.unlink()
    return data | {"stderr": stderr}
