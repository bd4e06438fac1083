"""AMORT-V1 §V-D: the checkpoint-interval sweep sized from its own spread, with the path-terms probes beside it.

Each point (baseline, k) is the mean amortised controller cost per report over all its timed checkpoints. The first
trial runs every point at its minimum size; after each trial the spread measured so far says how many checkpoints
the point needs for its interval (at ``confidence``) to reach the target half-width (±3 % by default), and the next
trial runs that need spread over the trials left — within a wall-time budget: when the budget is short, every
point's share above its minimum shrinks by the same factor. Each trial runs in ``rounds`` rounds: in every round
each point runs its share of the trial's checkpoints and each probe its share of its repetitions, in a seeded random
order, so a shared machine whose speed changes over seconds is sampled at the same moments by every k and by the
probes (one burst per point and trial would give each point the speed of its own moment).

The probes measure Eq. 1's terms on the path itself, independently of the sweep's own timings: the controller's
work per report and per checkpoint (ingest + checkpoint body + commit, with a fixed signature of the real length,
nothing signed or written) at the smallest and the largest k, one append + fsync of the real checkpoint
(``DurableLog``, as the sweep writes it) for every checkpoint size the sweep produces, and signatures by each
signer on the sweep's backend over a message of the largest checkpoint's length, as many as the signing time's
spread needs for the same ±half-width as the points (ML-DSA's rejection loop makes it heavy-tailed) — in the same
rounds as the points, so a host whose speed drifts feeds the model what it did during the interval_sweep.
"""

from __future__ import annotations

import itertools
import math
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pqlab import progress
from pqlab.amort.durable import DurableLog
from pqlab.amort.fastpath.api import checkpoint_context
from pqlab.amort.identity import SigningKey
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.experiments import interval_sweep

PATH_PHASES = ("ingest_ns", "body_ns", "commit_ns")  # the path's own work in a checkpoint (no signature, no write)


@dataclass(frozen=True)
class SweepTarget:
    """How precise each point must be, and what the sweep may spend on it."""

    half_width: float        # relative half-width of each point's interval (0.03 = ±3 %)
    confidence: float
    trials: int              # every point runs in every trial
    budget_s: float          # wall time for the whole sweep, probes included
    min_reports: int         # per point over all trials: at least this many reports ...
    min_checkpoints: int     # ... and in every trial at least this many checkpoints
    max_checkpoints: int = 50_000  # per point and trial
    rounds: int = 1                # per trial: every point and probe runs a share of its work in every round


@dataclass(frozen=True)
class Point:
    """One sweep point and its own target half-width (points beside the main comparison may be looser)."""

    baseline: interval_sweep.Baseline
    k: int
    half_width: float

    @property
    def key(self) -> tuple[str, int]:
        return self.baseline.scheme, self.k


@dataclass(frozen=True)
class ProbePlan:
    """The path-terms probes of every trial: per signer (its signature length) the path at ``k_small`` and
    ``k_large``; per signer with a durable log the append + fsync at every checkpoint size in ``touched``."""

    signers: tuple[tuple[str, str], ...]   # (signer, backend) of each path probe
    log_signers: tuple[str, ...]           # signers whose baselines keep a durable log
    log_folder: Path | None
    k_small: int
    small_checkpoints: int
    k_large: int
    large_checkpoints: int
    fsync_reps: int
    touched: tuple[int, ...]               # devices touched by a checkpoint: 1 .. devices (sizes differ)
    sign_reps: int = 0                     # signatures per signer in the first trial, at least as many in each
                                           # later one (its spread decides the rest); 0: no signing probe


@dataclass
class SweepResult:
    """Everything the sweep measured: checkpoint rows, probe rows, the plan it followed."""

    raw: pd.DataFrame     # one row per timed checkpoint of every point
    path: pd.DataFrame    # one row per path-probe checkpoint
    fsync: pd.DataFrame   # one row per probed append + fsync
    sign: pd.DataFrame    # one row per probed signature
    sizes: pd.DataFrame   # signer, touched devices, checkpoint octets
    plan: pd.DataFrame    # per trial and point: checkpoints run, seconds spent, half-width after the trial
    wall_s: float
    budget_s: float


def minimum_checkpoints(k: int, target: SweepTarget) -> int:
    """Checkpoints a point runs in every trial at least: ``min_checkpoints``, and together over the trials at least
    ``min_reports`` reports (the first trial's pilot; the spread decides the rest)."""
    return max(target.min_checkpoints, math.ceil(target.min_reports / (k * target.trials)))


def relative_half_width(values: np.ndarray, confidence: float) -> float:
    """Half-width of the t interval of the mean, relative to the mean (inf below two values)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2 or data.mean() <= 0:
        return math.inf
    t = stats.t.ppf(0.5 + confidence / 2, data.size - 1)
    return float(t * data.std(ddof=1) / math.sqrt(data.size) / data.mean())


def required_checkpoints(values: np.ndarray, half_width: float, confidence: float) -> int:
    """Checkpoints the point needs in all for its interval to reach ``half_width``, from its spread so far."""
    data = np.asarray(values, dtype=float)
    if data.size < 2 or data.mean() <= 0:
        return data.size + 2
    z = stats.norm.ppf(0.5 + confidence / 2)
    return math.ceil((z * data.std(ddof=1) / data.mean() / half_width) ** 2)


def allocate(need: dict, minimum: dict, seconds_each: dict, trials_left: int, budget_s: float, cap: int) -> dict:
    """Checkpoints per point for the next trial: the remaining need spread over the trials left, never below the
    minimum nor above ``cap``. When the predicted time exceeds this trial's share of the budget, every point's share
    above its minimum shrinks by one common factor, so the points still short end equally short (relative to
    their need) instead of the last ones in line going without."""
    if trials_left < 1:
        raise ValueError("no trials left to allocate")
    want = {p: min(cap, max(minimum[p], math.ceil(need[p] / trials_left))) for p in need}
    share = budget_s / trials_left
    base = sum(minimum[p] * seconds_each[p] for p in want)
    extra = sum((want[p] - minimum[p]) * seconds_each[p] for p in want)
    if extra <= 0 or base + extra <= share:
        return want
    factor = max(0.0, (share - base) / extra)
    return {p: minimum[p] + int((want[p] - minimum[p]) * factor) for p in want}


def spread(total: int, rounds: int) -> list[int]:
    """``total`` split over ``rounds`` as evenly as whole numbers allow, the remainder at evenly spaced rounds (not
    all at the start): 4 over 8 rounds is 0, 1, 0, 1, 0, 1, 0, 1."""
    edges = [(i * total) // rounds for i in range(rounds + 1)]
    return [b - a for a, b in itertools.pairwise(edges)]


def _fixed_signature(signer: str, backend: str) -> bytes:
    key = SigningKey.generate(signer, backend)
    return key.signer.sign(key.secret, b"AMORT-V1 path probe", checkpoint_context(PAPER_PROFILE))


def _probe_baseline(signer: str, backend: str) -> interval_sweep.Baseline:
    return interval_sweep.Baseline(f"path {signer}", f"path probe {signer}", signer, backend, False)


def checkpoint_sizes(path: str, plan: ProbePlan, signatures: dict[str, bytes], keys: dict[bytes, bytes],
                     rng: np.random.Generator) -> pd.DataFrame:
    """The signed checkpoint's length per signer and number of devices touched (one untimed checkpoint each)."""
    rows = []
    for signer, backend in plan.signers:
        for touched in plan.touched:
            row = interval_sweep.run_point(path, _probe_baseline(signer, backend), None, keys, touched, 1, rng,
                                  warmup_reports=0, fixed_signature=signatures[signer])[0]
            rows.append({"signer": signer, "touched": touched, "checkpoint_octets": row["checkpoint_octets"]})
    return pd.DataFrame(rows)


def fsync_probe(folder: Path, octets: int, reps: int, rng: np.random.Generator, warmup: int = 2) -> np.ndarray:
    """``reps`` times (ns) of one ``DurableLog.append`` (write + fsync) of an ``octets``-long entry, as the sweep
    appends its checkpoints, into a fresh log in ``folder`` (removed afterwards)."""
    handle, name = tempfile.mkstemp(dir=folder, prefix=".amort-fsync-probe-", suffix=".log")
    os.close(handle)
    clock = time.perf_counter_ns
    samples = np.empty(reps, dtype=np.int64)
    try:
        with DurableLog(name) as log:
            entry = rng.bytes(octets)
            for _ in range(warmup):
                log.append(entry)
            for i in range(reps):
                start = clock()
                log.append(entry)
                samples[i] = clock() - start
    finally:
        Path(name).unlink(missing_ok=True)
    return samples


def checkpoint_probe(signer: str, backend: str, octets: int, reps: int, rng: np.random.Generator,
                     log_folder: Path | None = None, sizes: tuple[tuple[int, int], ...] = (), start: int = 0,
                     warmup: int = 2) -> pd.DataFrame:
    """``reps`` checkpoint signatures by a fresh ``signer`` key on ``backend`` over an ``octets``-long message
    (``ns``), as the sweep's checkpoints call it; with a ``log_folder``, each followed — as in the sweep — by one
    ``DurableLog.append`` of a real checkpoint into a fresh log there, removed afterwards (``append_ns``; ``sizes``:
    (devices touched, octets), taken in turn from the ``start``-th, so successive calls cover every size). An fsync
    right after a signature is what the sweep pays; on this VM it costs several times a back-to-back fsync
    (:func:`fsync_probe`)."""
    key = SigningKey.generate(signer, backend)
    message = rng.bytes(octets)
    clock = time.perf_counter_ns
    rows = []
    log, name = None, None
    if log_folder is not None:
        handle, name = tempfile.mkstemp(dir=log_folder, prefix=".amort-checkpoint-probe-", suffix=".log")
        os.close(handle)
        log = DurableLog(name)
    entries = {touched: rng.bytes(size) for touched, size in sizes}
    try:
        for i in range(warmup + reps):
            began = clock()
            key.signer.sign(key.secret, message, checkpoint_context(PAPER_PROFILE))
            row = {"ns": clock() - began}
            if log is not None:
                touched, size = sizes[(start + i - warmup) % len(sizes)]
                before = clock()
                log.append(entries[touched])
                row |= {"touched": touched, "checkpoint_octets": size, "append_ns": clock() - before}
            if i >= warmup:
                rows.append(row)
    finally:
        if log is not None:
            log.close()
            Path(name).unlink(missing_ok=True)
    return pd.DataFrame(rows)


def _path_rows(path: str, signer: str, backend: str, signature: bytes, keys: dict[bytes, bytes], k: int,
               checkpoints: int, rng: np.random.Generator, disclosure_tag: bool, warmup: int) -> pd.DataFrame:
    rows = interval_sweep.run_point(path, _probe_baseline(signer, backend), None, keys, k, checkpoints, rng,
                           disclosure_tag=disclosure_tag, warmup_reports=warmup, fixed_signature=signature)
    frame = pd.DataFrame(rows)
    frame["path_ns"] = frame[list(PATH_PHASES)].sum(axis=1)
    frame.insert(0, "k", k)
    frame.insert(0, "signer", signer)
    return frame


def adaptive_sweep(path: str, points: list[Point], probes: ProbePlan, target: SweepTarget, seed: int, *,
                   n_devices: int, disclosure_tag: bool = True, warmup_reports: int = 16,
                   desc: str = "amortisation sweep", progress_bar: bool = True) -> SweepResult:
    """Run every point and probe in every trial (seeded random order per trial), sizing the points adaptively."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    keys = interval_sweep.epoch_keys(n_devices)
    signatures = {signer: _fixed_signature(signer, backend) for signer, backend in probes.signers}
    sizes = checkpoint_sizes(path, probes, signatures, keys, rng)
    octets = {(r.signer, r.touched): int(r.checkpoint_octets) for r in sizes.itertuples()}
    minimum = {p.key: minimum_checkpoints(p.k, target) for p in points}
    alloc = dict(minimum)
    values: dict[tuple[str, int], list[float]] = {p.key: [] for p in points}
    spent = dict.fromkeys(values, 0.0)
    frames, path_frames, fsync_frames, sign_frames, plan_rows = [], [], [], [], []
    items: list[tuple[str, object]] = [("point", p) for p in points]
    items += [("path", pair) for pair in probes.signers]
    if probes.sign_reps:
        items += [("sign", pair) for pair in probes.signers]
    if probes.log_folder is not None:
        items += [("fsync", (s, t)) for s in probes.log_signers for t in probes.touched]
    rounds = max(1, target.rounds)
    # the signing probe is sized like a point: its pilot is sign_reps per trial, then what its spread needs
    sign_alloc = {signer: probes.sign_reps for signer, _ in probes.signers}
    sign_values: dict[str, list[float]] = {signer: [] for signer in sign_alloc}
    with progress.bar(total=target.trials * rounds * len(items), desc=desc, disable=not progress_bar) as bar:
        for trial in range(target.trials):
            trial_keys = interval_sweep.epoch_keys(n_devices)
            signing = {p.baseline.scheme: SigningKey.generate(p.baseline.signer, p.baseline.backend)
                       for p in points}
            shares = {key: spread(n, rounds) for key, n in alloc.items()}
            path_shares = [(k, spread(n, rounds)) for k, n in ((probes.k_small, probes.small_checkpoints),
                                                              (probes.k_large, probes.large_checkpoints))]
            sign_shares = {signer: spread(n, rounds) for signer, n in sign_alloc.items()}
            fsync_shares = spread(probes.fsync_reps, rounds)
            probe_s = 0.0
            for turn in range(rounds):
                for index in rng.permutation(len(items)):
                    kind, item = items[index]
                    began = time.perf_counter()
                    if kind == "point" and shares[item.key][turn]:
                        bar.set_postfix_str(f"trial {trial + 1}: {item.baseline.label}, k = {item.k}")
                        rows = interval_sweep.run_point(path, item.baseline, signing[item.baseline.scheme], trial_keys,
                                               item.k, shares[item.key][turn], rng, disclosure_tag=disclosure_tag,
                                               warmup_reports=warmup_reports)
                        frames.append(interval_sweep.point_frame(rows, item.baseline, item.k, trial))
                        values[item.key].extend(r["total_ns"] / item.k / 1000.0 for r in rows)
                        spent[item.key] += time.perf_counter() - began
                    elif kind == "path":
                        signer, backend = item
                        bar.set_postfix_str(f"trial {trial + 1}: path probe {signer}")
                        for k, share in path_shares:
                            if share[turn]:
                                frame = _path_rows(path, signer, backend, signatures[signer], trial_keys, k,
                                                   share[turn], rng, disclosure_tag, warmup_reports)
                                path_frames.append(frame.assign(trial=trial))
                    elif kind == "sign" and sign_shares[item[0]][turn]:
                        signer, backend = item
                        bar.set_postfix_str(f"trial {trial + 1}: signing probe {signer}")
                        largest = octets[(signer, probes.touched[-1])]
                        logged = signer in probes.log_signers and probes.log_folder is not None
                        frame = checkpoint_probe(
                            signer, backend, largest, sign_shares[signer][turn], rng,
                            probes.log_folder if logged else None,
                            tuple((t, octets[(signer, t)]) for t in probes.touched) if logged else (),
                            start=len(sign_values[signer]))
                        sign_values[signer].extend(frame["ns"] / 1000.0)
                        sign_frames.append(frame.assign(signer=signer, backend=backend, trial=trial,
                                                        message_octets=largest))
                    elif kind == "fsync" and fsync_shares[turn]:
                        signer, touched = item
                        bar.set_postfix_str(f"trial {trial + 1}: fsync probe {signer}, {touched} device(s)")
                        ns = fsync_probe(probes.log_folder, octets[(signer, touched)], fsync_shares[turn], rng)
                        fsync_frames.append(pd.DataFrame({"signer": signer, "touched": touched, "trial": trial,
                                                          "checkpoint_octets": octets[(signer, touched)], "ns": ns}))
                    if kind != "point":
                        probe_s += time.perf_counter() - began
                    bar.update()
            for p in points:
                plan_rows.append({"trial": trial, "scheme": p.baseline.scheme, "k": p.k, "checkpoints": alloc[p.key],
                                  "seconds": spent[p.key], "target_half_width_pct": 100 * p.half_width,
                                  "half_width_pct": 100 * relative_half_width(values[p.key], target.confidence)})
            trials_left = target.trials - trial - 1
            if trials_left:
                need = {p.key: max(0, required_checkpoints(values[p.key], p.half_width, target.confidence)
                                   - len(values[p.key])) for p in points}
                each = {key: spent[key] / max(1, len(values[key])) for key in values}
                left = target.budget_s - (time.perf_counter() - start) - probe_s * trials_left
                alloc = allocate(need, minimum, each, trials_left, max(0.0, left), target.max_checkpoints)
                for signer, samples in sign_values.items():
                    short = required_checkpoints(np.asarray(samples), target.half_width, target.confidence) \
                        - len(samples)
                    sign_alloc[signer] = min(target.max_checkpoints,
                                             max(probes.sign_reps, math.ceil(max(0, short) / trials_left)))
    raw = pd.concat(frames, ignore_index=True)
    raw["path"] = path
    return SweepResult(raw, pd.concat(path_frames, ignore_index=True),
                       pd.concat(fsync_frames, ignore_index=True) if fsync_frames else pd.DataFrame(
                           columns=["signer", "touched", "trial", "checkpoint_octets", "ns"]),
                       pd.concat(sign_frames, ignore_index=True) if sign_frames else pd.DataFrame(
                           columns=["signer", "backend", "trial", "message_octets", "ns", "touched",
                                    "checkpoint_octets", "append_ns"]),
                       sizes, pd.DataFrame(plan_rows), time.perf_counter() - start, target.budget_s)


def probe_plan(points: list[Point], ks: list[int], n_devices: int, log_folder: Path | None, *, small: int,
               large: int, fsync_reps: int, sign_reps: int = 0) -> ProbePlan:
    """The probes the main points need: one path probe and ``sign_reps`` signatures per signer, fsync at every size
    for signers with a log."""
    signers = tuple(dict.fromkeys((p.baseline.signer, p.baseline.backend) for p in points))
    by_signer = tuple(dict.fromkeys(signer for signer, _ in signers))
    signers = tuple((signer, next(b for s, b in signers if s == signer)) for signer in by_signer)
    logged = tuple(dict.fromkeys(p.baseline.signer for p in points if p.baseline.durable_log))
    touched = tuple(sorted({min(k, n_devices) for k in ks}))
    return ProbePlan(signers, logged, log_folder, min(ks), small, max(ks), large, fsync_reps, touched, sign_reps)


def with_backend(baseline: interval_sweep.Baseline, backend: str, scheme: str) -> interval_sweep.Baseline:
    """The same baseline signing on another backend (a point beside the main comparison)."""
    return replace(baseline, scheme=scheme, backend=backend, label=f"{baseline.label} [{backend}]")


def summarise(raw: pd.DataFrame, resamples: int, confidence: float, seed: int
              ) -> tuple[pd.DataFrame, dict[tuple[str, int], np.ndarray]]:
    """Per (scheme, k): the mean amortised cost per report over every timed checkpoint (all trials) with its
    percentile-bootstrap interval, the achieved half-width, the samples behind it and the phase means; and each
    point's bootstrap distribution of the mean (for intervals of statistics over points)."""
    keys = ["scheme", "label", "signer", "backend", "durable_log", "storage", "k"]
    rows, replicates = [], {}
    data = raw.assign(amortised_us=raw["total_ns"] / raw["reports"] / 1000.0)
    for index, (key, group) in enumerate(data.groupby(keys, sort=False)):
        costs = group["amortised_us"].to_numpy()
        mean = float(costs.mean())
        if costs.size > 1 and np.ptp(costs) > 0:
            boot = stats.bootstrap((costs,), np.mean, n_resamples=resamples, confidence_level=confidence,
                                   method="percentile", vectorized=True, batch=max(1, 4_000_000 // costs.size),
                                   rng=np.random.default_rng(seed + index))
            lo, hi = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
            replicates[(key[0], int(key[-1]))] = np.asarray(boot.bootstrap_distribution, dtype=float)
        else:
            lo = hi = mean
            replicates[(key[0], int(key[-1]))] = np.full(resamples, mean)
        trial_means = group.groupby("trial")["amortised_us"].mean()
        checkpoints = len(group)
        rows.append({**dict(zip(keys, key, strict=True)), "trials": int(group["trial"].nunique()),
                     "checkpoints": checkpoints, "reports": int(group["reports"].sum()),
                     "measured_us": mean, "measured_lo": lo, "measured_hi": hi,
                     "half_width_pct": 100 * max(mean - lo, hi - mean) / mean,
                     "measured_min": float(trial_means.min()), "measured_max": float(trial_means.max()),
                     "per_report_us": float(group[list(PATH_PHASES)].sum(axis=1).sum() / group["reports"].sum()
                                            / 1000.0),
                     "per_checkpoint_us": float((group["sign_ns"] + group["write_ns"]).mean() / 1000.0),
                     "sign_us": float(group["sign_ns"].mean() / 1000.0),
                     "write_us": float(group["write_ns"].mean() / 1000.0),
                     "checkpoint_octets": int(group["checkpoint_octets"].median())})
    stats_frame = pd.DataFrame(rows).sort_values(["scheme", "k"], kind="stable").reset_index(drop=True)
    return stats_frame, replicates
