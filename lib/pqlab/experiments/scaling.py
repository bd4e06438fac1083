"""AMORT-V1 §V-E controller scaling (Table III): one process per trial and identity count; bytes from encodings."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.amort.profile import Profile
from pqlab.errors import MeasurementError
from pqlab.experiments.amort_fleet import Fleet, report_rounds
from pqlab.params import StudyParams

WORKER = "pqlab.experiments.controller_worker"
WORKER_TIMEOUT_S = 3600


def rounds_for(n: int, rounds: int, min_reports: int) -> int:
    """Timed checkpoints per trial: ``rounds``, raised until they hold at least ``min_reports`` reports."""
    return max(rounds, math.ceil(min_reports / n))


def run_worker(job: dict[str, Any]) -> dict[str, Any]:
    """One trial in a fresh interpreter (so identity counts never share a heap); MeasurementError on failure.

    The worker runs in its own session: a Ctrl-C in a notebook interrupts this process, and subprocess.run kills
    the worker on the way out."""
    try:
        done = subprocess.run([sys.executable, "-m", WORKER], input=json.dumps(job), capture_output=True,
                              text=True, timeout=WORKER_TIMEOUT_S, check=False, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        raise MeasurementError(f"no result within {WORKER_TIMEOUT_S} s", field=f"scaling n={job['n']}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise MeasurementError(f"worker exited {done.returncode}: {last}", field=f"scaling n={job['n']}")
    return json.loads(done.stdout)


def write_reports(rounds: list[list[bytes]], target: Path) -> int:
    """The rounds, round-major, into ``target``; returns the (common) report length."""
    lengths = {len(report) for reports in rounds for report in reports}
    if len(lengths) != 1:
        raise ValueError(f"reports of several lengths {sorted(lengths)}")
    with open(target, "wb") as handle:
        for reports in rounds:
            handle.write(b"".join(reports))
    return lengths.pop()


def measure(settings: StudyParams, path: str, scratch: Path, *, progress: bool = True,
            keep_checkpoint_below: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, bytes]]:
    """Every trial of every identity count: (per-checkpoint rows, per-trial rows, a sample report per count).

    ``keep_checkpoint_below``: return the last checkpoint's encoding for counts below this (tests)."""
    cfg = settings.scaling
    round_rows, trial_rows, sample_reports = [], [], {}
    steps = tqdm(total=len(cfg.identities) * cfg.trials, desc="controller scaling", disable=not progress)
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".scaling-") as tmp:
        for n in cfg.identities:
            rounds = rounds_for(n, cfg.rounds, cfg.min_reports)
            for trial in range(cfg.trials):
                steps.set_postfix_str(f"{n:,} identities, trial {trial + 1}")
                fleet = Fleet(n, settings.seed, trial, tag_len=cfg.tag_len,
                              profile=Profile(settings.amort.variant, settings.amort.wire_format))
                built = report_rounds(fleet, path, [cfg.disclosure_tag] * (cfg.warmup_rounds + rounds))
                sample_reports[n] = built[0][0]
                reports_file = Path(tmp) / f"reports-{n}-{trial}.bin"
                length = write_reports(built, reports_file)
                del built
                job = {"n": n, "seed": settings.seed, "trial": trial, "tag_len": cfg.tag_len, "path": path,
                       "signer": cfg.checkpoint_signer, "backend": cfg.backend, "reports": str(reports_file),
                       "report_len": length, "rounds": rounds, "warmup_rounds": cfg.warmup_rounds,
                       "verify_reps": cfg.verify_reps, "log": str(Path(tmp) / f"checkpoints-{n}-{trial}.log"),
                       "keep_checkpoint": n < keep_checkpoint_below, "variant": settings.amort.variant,
                       "wire_format": settings.amort.wire_format}
                out = run_worker(job)
                reports_file.unlink()
                if out["path"] != path:
                    raise MeasurementError(f"worker ran the {out['path']} path, asked for {path}", field="path")
                for row in out["rounds"]:
                    round_rows.append({"identities": n, "trial": trial, "report_octets": length, **row})
                timed = [r for r in out["rounds"] if not r["warmup"]]
                mem = out["memory_kib"]
                trial_rows.append({
                    "identities": n, "trial": trial, "rounds": len(timed), "reports": n * len(timed),
                    "us_per_report": sum(r["total_ns"] for r in timed) / (n * len(timed)) / 1000.0,
                    **{f"{phase}_us_per_report": sum(r[f"{phase}_ns"] for r in timed) / (n * len(timed)) / 1000.0
                       for phase in ("ingest", "body", "sign", "commit", "durable")},
                    "checkpoint_octets": timed[-1]["checkpoint_octets"], "report_octets": length,
                    "signature_octets": out["signature_octets"], "verify_ms": float(np.median(out["verify_ns"])) / 1e6,
                    "register_us_per_identity": out["register_ns"] / n / 1000.0,
                    "rss_start_kib": mem["start"]["VmRSS"], "rss_before_fleet_kib": mem["before_fleet"]["VmRSS"],
                    "rss_after_register_kib": mem["after_register"]["VmRSS"], "rss_end_kib": mem["end"]["VmRSS"],
                    "rss_peak_kib": mem["end"]["VmHWM"], "state_octets": out["state_octets"],
                    "signature_backend": out["backend"], "checkpoint_hex": out["checkpoint_hex"],
                })
                steps.update()
    steps.close()
    return pd.DataFrame(round_rows), pd.DataFrame(trial_rows), sample_reports


