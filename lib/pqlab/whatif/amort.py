"""``pqlab whatif amort``: the checkpoint interval, detection window and cost per report for a user's PLC fleet.

Eq. 1 (``pqlab.amort.eq1``) over this machine's measured costs: C_mac, C_leaf and C_sign from the costs
stage's statistics (``data/derived/costs_stats.parquet``, read through ``pqlab.io``, the per-report terms of the
controller path ``amort.controller_path`` resolves to), or from a short probe with the cost study's own
operations when that file or a row is missing (the answer says which); C_fsync always from a probe of the
storage folder the user names (its fsync is the one that matters), unless typed in; any term may be typed in
instead (costs taken on the user's PLC). The interval of the cost per report is Eq. 1 at the terms' confidence
bounds. The checkpoint's bytes are ``len()`` of a real AMORT-V1 Checkpoint encoding with one span per identity
that reported within the interval and the signer's real signature length.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pqlab import crypto, io, provenance
from pqlab.amort import eq1
from pqlab.amort.fastpath import native
from pqlab.amort.fastpath.api import resolve_controller_path
from pqlab.amort.sizes import checkpoint_octets
from pqlab.analysis import costs as cost_analysis
from pqlab.case import algorithms as case_algorithms
from pqlab.errors import OutputError, ParamsError, PqlabError
from pqlab.experiments import costs
from pqlab.experiments.harness import empty_call_overhead_ns
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.whatif.deployment import AMORT_FIELDS, NO_LOG, AmortDeployment, amort_deployments, field_values

COSTS_STATS = "costs_stats.parquet"
PROBE_REPS, PROBE_SLOW_REPS = 200, 20
ENCODE_UP_TO = 20_000  # spans encoded for real; beyond, fixed + spans x per-span octets (linear, checked)
TERMS = ("c_mac", "c_leaf", "c_sign", "c_fsync")


@dataclass(frozen=True)
class CostTerm:
    """One input of Eq. 1 (µs): its median, confidence bounds and where it was measured (or that it was typed)."""

    value_us: float
    lo_us: float
    hi_us: float
    source: str


@dataclass(frozen=True)
class AmortAnswer:
    """Everything ``pqlab whatif amort`` says about one fleet."""

    deployment: AmortDeployment
    controller_path: str
    controller_reason: str
    terms: dict[str, CostTerm]
    costs_source: str
    storage: str
    point: eq1.TradeOff
    cost_lo_us: float
    cost_hi_us: float
    signature_octets: int
    spans: int
    checkpoint_octets: int
    identities_within_budget: int
    seconds: float

    @property
    def label(self) -> str:
        return self.deployment.label

    @property
    def passes_budget(self) -> bool:
        return self.checkpoint_octets <= self.deployment.size_budget_octets

    def to_dict(self) -> dict[str, Any]:
        p = self.point
        return {
            "label": self.label, "deployment": self.deployment.model_dump(mode="json"),
            "aggregate_rate_hz": self.deployment.aggregate_rate_hz, "controller_path": self.controller_path,
            "controller_reason": self.controller_reason, "costs_source": self.costs_source, "storage": self.storage,
            "inputs_us": {name: vars(term) for name, term in self.terms.items()},
            "k": p.k, "window_s": p.window_s, "limited_by": p.limited_by, "cost_us_per_report": p.cost_us,
            "cost_interval_us": [self.cost_lo_us, self.cost_hi_us], "floor_us": p.floor_us, "k_star": p.k_star,
            "overhead_over_floor": p.overhead_over_floor,
            "checkpoint": {"spans": self.spans, "octets": self.checkpoint_octets,
                           "signature_octets": self.signature_octets,
                           "octets_per_report": self.checkpoint_octets / p.k,
                           "size_budget_octets": self.deployment.size_budget_octets,
                           "passes_budget": self.passes_budget,
                           "identities_within_budget": self.identities_within_budget},
            "seconds": self.seconds,
        }


def _row(stats: pd.DataFrame, op_id: str, backend: str | None) -> pd.Series | None:
    rows = stats[stats["op_id"] == op_id]
    if backend is not None:
        rows = rows[rows["backend"] == backend]
    return None if rows.empty else rows.iloc[0]


_PROBED: dict[tuple, pd.DataFrame] = {}  # one probe per (operations, signer, backend, folder) and process


def probe(settings: StudyParams, op_ids: set[str], signer: str, backend: str, folder: Path) -> pd.DataFrame:
    """A short run of the cost study's own operations ``op_ids`` (fsync in ``folder``): their statistics.

    The cost study's full measurement (``costs`` stage) takes minutes; this times only what is missing, with
    fewer repetitions (``PROBE_REPS``; ``PROBE_SLOW_REPS`` for SLH-DSA signing and fsync) in one trial, summarised
    with the cost study's own bootstrap (``costs.bootstrap_resamples``, ``costs.confidence``). A process probes the
    same operations once (the notebook's controls re-ask the same fleet with other rates)."""
    key = (frozenset(op_ids), signer, backend, str(folder), settings.seed)
    if key not in _PROBED:
        _PROBED[key] = _probe(settings, op_ids, signer, backend, folder)
    return _PROBED[key]


def _probe(settings: StudyParams, op_ids: set[str], signer: str, backend: str, folder: Path) -> pd.DataFrame:
    cfg = settings.costs.model_copy(update={
        "signers": (signer,), "backend": backend, "trials": 1, "reps": PROBE_REPS, "reps_slow": PROBE_SLOW_REPS,
        "warmup": 5, "native_batches": 20, "native_iterations": 500})
    overhead = empty_call_overhead_ns(reps=1000)
    rng = np.random.default_rng(settings.seed)
    frames = []
    for op in costs.table1_operations(cfg):
        if op.op_id in op_ids:
            frames.append(costs.operation_samples(op, cfg, rng, folder, trial=0, overhead=overhead, in_table1=False))
    if op_ids & set(costs.NATIVE_OPERATIONS):
        frames += [f for f in costs.native_samples(cfg, native.load(), 0) if f["op_id"].iloc[0] in op_ids]
    raw = pd.concat(frames, ignore_index=True)
    raw["net_ns"] = (raw["ns"] - raw["overhead_ns"]).clip(lower=0.0)
    return cost_analysis.summarise(raw, settings.model_copy(update={"costs": cfg}))


def _term(row: pd.Series, source: str) -> CostTerm:
    return CostTerm(float(row["median"]), float(row["median_lo"]), float(row["median_hi"]),
                    f"{row['op_id']} [{row['backend']}], {source}")


def _stage_stats(paths: ProjectPaths) -> tuple[pd.DataFrame | None, str]:
    file = paths.derived / COSTS_STATS
    if not file.is_file():
        return None, f"{file} is missing; `dvc repro costs` measures them fully"
    stats, meta = io.read_parquet_checked(file, what="the costs stage's statistics", stage="costs")
    profile = provenance.analysis_profile(meta)
    commit = (meta.get("git_commit") or "")[:8]
    edited = provenance.hand_edited(meta)
    return stats, (f"costs stage ({file.name}, profile {profile}, commit {commit or '?'}"
                   + (f"; from raw samples EDITED BY HAND: {', '.join(edited)}" if edited else "") + ")")


def _probe_in(storage: Path | None, root: Path, run: Callable[[Path], pd.DataFrame]) -> pd.DataFrame:
    """``run(folder)``; a write or fsync the storage folder refuses (full, I/O error) is one line naming it."""
    folder = storage or root
    try:
        return run(folder)
    except OSError as exc:
        in_folder = exc.filename is not None and Path(exc.filename).parent == folder
        if not in_folder and exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS):
            raise  # not the storage folder's failure
        what = ("no space left there" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
                else f"writing the probe file failed ({exc.strerror or exc})")
        raise OutputError(f"{what}: C_fsync is probed by appending to a file in this folder; free some space, name "
                          "another folder, or type the cost in with --c-fsync",
                          field=f"{'--storage' if storage is not None else 'amortisation.storage'} {folder}") from None


def _storage_folder(deployment: AmortDeployment, settings: StudyParams, paths: ProjectPaths) -> Path | None:
    if deployment.storage == NO_LOG:
        return None
    if deployment.storage is None:
        cfg = settings.amortisation
        folder = Path(cfg.storage[cfg.log_storage])
        return io.ensure_writable_dir(folder if folder.is_absolute() else paths.root / folder, "amortisation.storage")
    folder = Path(deployment.storage)
    # /proc, a read-only mount, a folder without write permission: one line naming it before anything is timed
    return io.ensure_writable_dir(folder if folder.is_absolute() else paths.root / folder, "--storage")


def _signature_octets(signer: str, backend: str | None) -> int:
    if backend is not None:
        return crypto.get_signer(signer, backend).sizes.signature
    return case_algorithms.signature(signer).signature


def checkpoint_size(spans: int, signature_octets: int) -> int:
    """Octets of a checkpoint with ``spans`` spans: a real encoding up to ``ENCODE_UP_TO`` spans; beyond, the
    encoding's fixed part plus ``spans`` times one span's octets (both measured from encodings, linearity checked)."""
    if spans <= ENCODE_UP_TO:
        return checkpoint_octets(spans, signature_octets)
    fixed = checkpoint_octets(0, signature_octets)
    span = checkpoint_octets(1, signature_octets) - fixed
    if checkpoint_octets(ENCODE_UP_TO, signature_octets) != fixed + ENCODE_UP_TO * span:
        raise PqlabError("checkpoint encoding is not linear in its spans", field="checkpoint")
    return fixed + spans * span


def evaluate(deployment: AmortDeployment, settings: StudyParams, paths: ProjectPaths) -> AmortAnswer:
    """k, W, the cost per report with its interval, and the checkpoint's bytes for one fleet."""
    start = time.perf_counter()
    typed = deployment.costs
    path, reason = resolve_controller_path(settings.amort.controller_path)
    names = settings.amortisation.model_inputs
    op_ids = {"c_mac": names.native_mac if path == "native" else names.mac,
              "c_leaf": names.native_leaf if path == "native" else names.leaf,
              "c_sign": f"sign_{deployment.signer}", "c_fsync": names.fsync}
    storage = _storage_folder(deployment, settings, paths)
    try:
        backend = crypto.resolve_backend(deployment.signer, deployment.backend)
    except PqlabError:
        if typed.c_sign is None:
            raise
        backend = None  # signing is typed in: no backend here needs to offer the signer
    terms: dict[str, CostTerm] = {}
    for name in TERMS:
        value = getattr(typed, name)
        if value is not None:
            terms[name] = CostTerm(value, value, value, "typed in")
    if storage is None and "c_fsync" not in terms:
        terms["c_fsync"] = CostTerm(0.0, 0.0, 0.0, "no durable log (storage: none)")
    wanted = [n for n in ("c_mac", "c_leaf", "c_sign") if n not in terms]
    stats, stage = _stage_stats(paths) if wanted else (None, "")
    for name in wanted:
        row = None if stats is None else _row(stats, op_ids[name], backend if name == "c_sign" else None)
        if row is not None:
            terms[name] = _term(row, stage)
    missing = {op_ids[n] for n in TERMS if n not in terms}
    if missing:
        probed = _probe_in(storage, paths.root, lambda folder: probe(settings, missing, deployment.signer,
                                                                     backend or "auto", folder))
        why = stage if stats is None else f"not in the {stage}"
        for name in TERMS:
            if name not in terms:
                where = f"probed in {storage}" if name == "c_fsync" else f"short probe in this run: {why}"
                terms[name] = _term(_row(probed, op_ids[name], None), where)
    sources = {t.source.split(", ", 1)[-1] for t in terms.values()}
    inputs = {bound: eq1.CostInputs(*(getattr(terms[n], attr) for n in TERMS), label=deployment.label)
              for bound, attr in (("median", "value_us"), ("lo", "lo_us"), ("hi", "hi_us"))}
    field = "window_s" if deployment.window_s is not None else "budget_us"
    try:
        point = eq1.tradeoff(inputs["median"], deployment.aggregate_rate_hz, window_s=deployment.window_s,
                             budget_us=deployment.budget_us)
    except ValueError as exc:
        raise ParamsError(str(exc), field=field) from None
    signature = _signature_octets(deployment.signer, backend)
    spans = min(point.k, deployment.identities)
    fixed = checkpoint_octets(0, signature)
    per_span = checkpoint_octets(1, signature) - fixed
    within = max(0, (deployment.size_budget_octets - fixed) // per_span)
    return AmortAnswer(deployment, path, reason, terms, "; ".join(sorted(sources)),
                       str(storage) if storage is not None else NO_LOG, point, eq1.cost(inputs["lo"], point.k),
                       eq1.cost(inputs["hi"], point.k), signature, spans, checkpoint_size(spans, signature),
                       int(within), time.perf_counter() - start)


def answer(settings: StudyParams, paths: ProjectPaths, **values: Any) -> AmortAnswer:
    """One fleet from flat values — the CLI's option names (``rate_hz``, ``identities``, ``window_s`` ...) —
    validated and answered (the notebook's call)."""
    fleet = amort_deployments(flags=field_values(values, AMORT_FIELDS), root=paths.root)[0]
    return evaluate(fleet, settings, paths)


def table(answers: list[AmortAnswer]) -> pd.DataFrame:
    """Fleets side by side (one column each), as strings to print."""
    columns = {}
    for a in answers:
        d, p = a.deployment, a.point
        column = {
            "fleet": f"{d.identities:,} identities × {d.rate_hz:g} reports/s = {d.aggregate_rate_hz:,.6g}/s",
            "asked": f"window ≤ {d.window_s:g} s" if d.window_s is not None else f"≤ {d.budget_us:g} µs/report",
            "signer [backend]": f"{d.signer} [{d.backend}]", "controller path": a.controller_path,
            "storage": a.storage,
        }
        for name, term in a.terms.items():
            column[f"{name} [µs]"] = f"{term.value_us:.4g} [{term.lo_us:.4g}, {term.hi_us:.4g}]"
        column["checkpoint interval k"] = f"{p.k:,}"
        column["detection window W [s]"] = f"{p.window_s:.4g}"
        column["cost [µs/report]"] = f"{p.cost_us:.4g} [{a.cost_lo_us:.4g}, {a.cost_hi_us:.4g}]"
        column["floor, k*"] = f"{p.floor_us:.4g} µs, {p.k_star:,.0f}"
        column["checkpoint"] = f"{a.checkpoint_octets:,} B ({a.spans:,} spans, {a.signature_octets:,}-B signature)"
        column["size budget"] = (f"{'passes' if a.passes_budget else 'exceeds'} {d.size_budget_octets:,} B "
                                 f"(up to {a.identities_within_budget:,} identities fit)")
        columns[a.label] = column
    return pd.DataFrame(columns)


def describe_sources(answer: AmortAnswer) -> list[str]:
    """Where each input came from, one line each."""
    return [f"{name}: {term.source}" for name, term in answer.terms.items()] + \
        ([f"controller path: {answer.controller_path} ({answer.controller_reason})"] if answer.controller_reason
         else [])
