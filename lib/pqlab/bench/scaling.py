"""AMORT-V1 §V-E controller scaling (Table III): one process per trial and identity count; bytes from encodings."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.amort.fleet import Fleet, report_rounds
from pqlab.amort.messages import HASH, ID_OCTETS, Checkpoint, CloseEntry, Report, Span
from pqlab.errors import MeasurementError
from pqlab.params import StudyParams
from pqlab.stats import median_ci

WORKER = "pqlab.bench.controller_worker"
KIB, MIB = 1024, 1024 * 1024
PAPER_IDENTITIES = (10, 100, 1000, 4000, 10_000)  # Table III's rows
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
                fleet = Fleet(n, settings.seed, trial, tag_len=cfg.tag_len, variant=settings.amort.variant,
                              wire_format=settings.amort.wire_format)
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


@dataclass(frozen=True)
class Decomposition:
    """How the bytes split, each part the ``len()`` of a real encoding (report, empty checkpoint, one span...)."""

    record: int
    tags: int
    report: int
    signature: int
    checkpoint_fixed: int
    span: int
    close: int
    wire_format: str = "implied"

    def checkpoint(self, spans: int, closes: int = 0) -> int:
        return self.checkpoint_fixed + spans * self.span + closes * self.close


def _checkpoint(spans: tuple[Span, ...], closes: tuple[CloseEntry, ...], signature_octets: int,
                wire_format: str = "implied") -> bytes:
    return Checkpoint(bytes(ID_OCTETS), 0, bytes(HASH), len(spans), bytes(HASH), spans, closes, 1,
                      bytes(signature_octets), wire_format=wire_format).encode()


def one_report_spans(n: int) -> tuple[Span, ...]:
    """``n`` spans of one report each (distinct dev_ids), as a checkpoint of one report per identity holds."""
    return tuple(Span(i.to_bytes(ID_OCTETS, "big"), 1, 1, 1, bytes(HASH)) for i in range(n))


def checkpoint_octets(spans: int, signature_octets: int, wire_format: str = "implied") -> int:
    """``len()`` of a real Checkpoint encoding with ``spans`` one-report spans and a ``signature_octets`` signature
    (the what-if tools' checkpoint size for a fleet)."""
    return len(_checkpoint(one_report_spans(spans), (), signature_octets, wire_format))


def decompose(report: bytes, signature_octets: int, wire_format: str = "implied") -> Decomposition:
    """Record, tags and report from ``report``'s own encoding; the checkpoint's fixed part, per-span and per-close
    octets from real Checkpoint encodings carrying a signature of ``signature_octets`` (in ``wire_format``)."""
    record = len(Report.decode(report, wire_format=wire_format).record.encode())
    empty = len(_checkpoint((), (), signature_octets, wire_format))
    span = len(_checkpoint(one_report_spans(1), (), signature_octets, wire_format)) - empty
    close = len(_checkpoint((), (CloseEntry(bytes(ID_OCTETS), 1, 0, 0),), signature_octets, wire_format)) - empty
    return Decomposition(record=record, tags=len(report) - record, report=len(report), signature=signature_octets,
                         checkpoint_fixed=empty, span=span, close=close, wire_format=wire_format)


def summarise(trials: pd.DataFrame, settings: StudyParams, parts: Decomposition) -> pd.DataFrame:
    """Table III: per identity count, medians over trials (bootstrap CI of the cost) and the byte columns."""
    rows = []
    for index, (n, group) in enumerate(trials.groupby("identities", sort=True)):
        median, low, high = median_ci(group["us_per_report"].to_numpy(), 2000, 0.95, settings.seed + index)
        checkpoint = int(group["checkpoint_octets"].iloc[0])
        if group["checkpoint_octets"].nunique() != 1 or group["report_octets"].nunique() != 1:
            raise MeasurementError("checkpoint or report size differs between trials", field=f"n={n}")
        report = int(group["report_octets"].iloc[0])
        fleet_rss = (group["rss_after_register_kib"] - group["rss_before_fleet_kib"]) * KIB
        rows.append({
            "identities": int(n), "in_paper": int(n) in PAPER_IDENTITIES, "trials": len(group),
            "us_per_report": median, "us_per_report_lo": low, "us_per_report_hi": high,
            "us_per_report_min": float(group["us_per_report"].min()),
            "us_per_report_max": float(group["us_per_report"].max()),
            **{f"{p}_us_per_report": float(group[f"{p}_us_per_report"].median())
               for p in ("ingest", "body", "sign", "commit", "durable")},
            "checkpoint_octets": checkpoint, "checkpoint_kib": checkpoint / KIB,
            "record_octets": parts.record, "tag_octets": parts.tags, "report_octets": report,
            "checkpoint_share_octets": checkpoint / n, "bytes_per_report": report + checkpoint / n,
            "verify_ms": float(group["verify_ms"].median()),
            "rss_peak_mib": float(group["rss_peak_kib"].median()) / KIB,
            "rss_interpreter_mib": float(group["rss_before_fleet_kib"].median()) / KIB,
            "state_octets_per_identity": int(group["state_octets"].iloc[0]),
            "fleet_rss_octets_per_identity": float(fleet_rss.median()) / n,
        })
    table = pd.DataFrame(rows)
    expected = [parts.checkpoint(n) for n in table["identities"]]
    if list(table["checkpoint_octets"]) != expected:
        raise MeasurementError(f"checkpoint sizes {list(table['checkpoint_octets'])} are not fixed + spans × "
                               f"{parts.span} ({expected})", field="checkpoint_octets")
    return table


# What-if span layouts: the per-identity octets if the span's fields changed (field widths, not encodings).
SPAN_LAYOUTS: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    ("explicit wire format: dev_id, epoch, seq_lo, seq_hi, subtree",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 8), ("seq_hi", 8), ("subtree", 32))),
    ("implied wire format, the paper's tuple: dev_id, seq_lo, seq_hi, subtree (epoch once per checkpoint)",
     (("dev_id", 8), ("seq_lo", 8), ("seq_hi", 8), ("subtree", 32))),
    ("4-octet epoch-relative seq_lo and a 2-octet count instead of seq_hi",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 4), ("count", 2), ("subtree", 32))),
    ("one-report spans: no subtree (it equals the leaf hash the global tree commits)",
     (("dev_id", 8), ("epoch", 4), ("seq_lo", 8))),
)


def budget(parts: Decomposition, budget_octets: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Where a checkpoint of one-report spans passes ``budget_octets``, confirmed by encoding checkpoints of
    the last fitting count and the first one over; the same limit under what-if span layouts."""
    fits = (budget_octets - parts.checkpoint_fixed) // parts.span
    first_over = fits + 1
    sizes = {}
    for n in (fits, first_over):
        sizes[n] = len(_checkpoint(one_report_spans(n), (), parts.signature, parts.wire_format))
    if not (sizes[fits] <= budget_octets < sizes[first_over]):
        raise MeasurementError(f"encoded sizes {sizes} do not straddle {budget_octets}", field="size_budget_octets")
    rows = []
    for label, fields in SPAN_LAYOUTS:
        span = sum(width for _, width in fields)
        rows.append({"span_layout": label, "span_octets": span,
                     "identities_within_budget": (budget_octets - parts.checkpoint_fixed) // span,
                     "bytes_per_report_at_10000": parts.report + (parts.checkpoint_fixed + 10_000 * span) / 10_000})
    crossing = {"budget_octets": budget_octets, "identities_within_budget": fits,
                "first_identities_over_budget": first_over, "checkpoint_octets_at_limit": sizes[fits],
                "checkpoint_octets_over_limit": sizes[first_over]}
    return pd.DataFrame(rows), crossing
