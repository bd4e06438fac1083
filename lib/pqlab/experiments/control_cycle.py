"""AMORT-V1 §V-G: run the C control-cycle loop in each configuration (pqlab.analysis.control_cycle summarises).

The loop (``pqlab.experiments._cycle``, C) releases a synthetic scan every period on one pinned core and, on
evidence cycles, builds a report through the native AMORT-V1 device path. Background configurations run
a real signer (:mod:`pqlab.experiments.signing_load`) in a process pinned to the same core for the whole run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab import crypto
from pqlab.errors import CycleError, PqlabError
from pqlab.experiments import _cycle
from pqlab.params import ControlCycleParams, CycleConfiguration
from pqlab.raw_labels import SCAN_COST

POLICIES = {getattr(os, name): name for name in ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH",
                                                 "SCHED_IDLE") if hasattr(os, name)}
STATE_OCTETS = 4096  # §V-I: the experiments measure a 4 KiB cached representation of software state


@dataclass(frozen=True)
class EvidenceSpec:
    """Keys and fixed fields of the device's epoch, as the C device path takes them."""

    tags: int
    k_evid: bytes
    chain_seed: bytes
    chain_length: int
    dev_id: bytes
    epoch: int
    digest: bytes
    policy_id: int
    tag_len: int

    def as_tuple(self) -> tuple:
        return (self.tags, self.k_evid, self.chain_seed, self.chain_length, self.dev_id, self.epoch, self.digest,
                self.policy_id, self.tag_len)


def evidence_spec(tags: int, tag_len: int, chain_length: int, rng: np.random.Generator) -> EvidenceSpec:
    """A fresh epoch from ``rng``: evidence key, disclosure seed, identity, and the digest of a 4 KiB state."""
    if tags not in (1, 2):
        raise ValueError("tags must be 1 or 2")
    state = rng.bytes(STATE_OCTETS)
    return EvidenceSpec(tags, rng.bytes(32), rng.bytes(32), chain_length, rng.bytes(8), int(rng.integers(1, 2**31)),
                        hashlib.sha256(state).digest(), int(rng.integers(0, 2**16)), tag_len)


def default_cpu() -> int:
    """The highest-numbered CPU this process may run on."""
    return max(os.sched_getaffinity(0))


def evidence_every(cfg: ControlCycleParams, configuration: CycleConfiguration) -> int:
    """Recorded cycles between evidence generations (0 = none): 1 for every cycle, else period × rate."""
    if configuration.tags == 0:
        return 0
    if configuration.every_cycle:
        return 1
    return max(1, round(1e6 / (cfg.evidence_rate_hz * cfg.period_us)))


@dataclass
class BackgroundSigner:
    """A signing process pinned to ``cpu`` for the lifetime of the ``with`` block."""

    algorithm: str
    backend: str
    cpu: int
    message_octets: int
    seed: int
    ready: dict[str, Any] = field(default_factory=dict)
    stopped: dict[str, Any] = field(default_factory=dict)
    _process: subprocess.Popen | None = None

    def __enter__(self) -> BackgroundSigner:
        # its own session: a Ctrl-C in a notebook reaches this process only, which stops the signer itself
        # (here or in __exit__) instead of the signer dying half-way through writing its summary
        self._process = subprocess.Popen(
            [sys.executable, "-m", "pqlab.experiments.signing_load", self.algorithm, self.backend, str(self.cpu),
             str(self.message_octets), str(self.seed)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            line = self._process.stdout.readline()
        except BaseException:  # interrupted before the signer was ready: __exit__ will not run
            self._process.kill()
            self._process.communicate()
            raise
        if not line:
            error = self._process.stderr.read().strip().splitlines()
            self._process.wait()
            raise CycleError(f"background signer did not start: {error[-1] if error else 'no output'}",
                             field=f"background_signer {self.algorithm}")
        self.ready = json.loads(line)
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        process.terminate()
        out, _ = process.communicate(timeout=120)
        lines = [json.loads(x) for x in out.splitlines() if x.strip()]
        self.stopped = lines[-1] if lines else {}


@dataclass(frozen=True)
class ConfigurationRun:
    """One configuration's per-cycle samples and what the loop and the signer reported."""

    name: str
    samples: pd.DataFrame
    info: dict[str, Any]


def run_configuration(name: str, configuration: CycleConfiguration, cfg: ControlCycleParams, cpu: int,
                      rng: np.random.Generator, *, cycles: int | None = None, warmup: int | None = None,
                      offset: int = 0) -> ConfigurationRun:
    """Run the loop once in one configuration (with its background signer, if any): ``cycles`` recorded cycles
    (default ``cfg.cycles``) after ``warmup`` (default ``cfg.warmup_cycles``); ``offset``: the configuration's
    cycles recorded in earlier rounds, so that its evidence schedule (every 100th cycle at 1 Hz) runs on."""
    if _cycle.EVIDENCE_PLACEHOLDER and configuration.tags:
        raise CycleError("the evidence hook is still the placeholder, not the native device path",
                         field=f"control_cycle.configurations.{name}")
    cycles = cfg.cycles if cycles is None else cycles
    warmup = cfg.warmup_cycles if warmup is None else warmup
    every = evidence_every(cfg, configuration)
    spec = evidence_spec(configuration.tags, cfg.tag_len, cycles + 1, rng).as_tuple() if every else None
    signer = None
    if configuration.background_signer:
        signer = BackgroundSigner(configuration.background_signer, cfg.signer_backend, cpu, cfg.sign_message_octets,
                                  int(rng.integers(0, 2**63)))
    steal_before = steal_ticks(cpu)
    try:
        with contextlib.ExitStack() as stack:
            if signer:
                stack.enter_context(signer)
            raw = _cycle.run(cfg.period_us * 1000, cycles, warmup, cpu, cfg.realtime,
                             cfg.fifo_priority, cfg.workload_blocks, every, spec, None, offset)
    except CycleError as exc:
        raise CycleError(str(exc), field=f"control_cycle.configurations.{name}", code=exc.code) from exc
    return ConfigurationRun(name, _frame(name, raw, cycles), _info(name, configuration, cfg, cpu, raw, every,
                                                                  signer, steal_before))


def _frame(name: str, raw: dict[str, Any], cycles: int) -> pd.DataFrame:
    """One run's per-cycle samples (the C loop's buffers) as a frame."""
    latency = np.frombuffer(raw.pop("latency_ns"), dtype=np.int64)
    work = np.frombuffer(raw.pop("work_ns"), dtype=np.int64)
    evidence = np.frombuffer(raw.pop("evidence_ns"), dtype=np.int64)
    return pd.DataFrame({
        "configuration": name, "cycle": np.arange(cycles, dtype=np.int64),
        "latency_ns": latency, "work_ns": work, "evidence_ns": evidence,
        "execution_ns": work + evidence, "response_ns": latency + work + evidence,
        "evidence": np.frombuffer(raw.pop("evidence"), dtype=np.uint8).astype(bool),
        "cpu": np.frombuffer(raw.pop("cpu"), dtype=np.int32),
        "variant": np.frombuffer(raw.pop("variant"), dtype=np.int8),
    })


def _info(name: str, configuration: CycleConfiguration, cfg: ControlCycleParams, cpu: int, raw: dict[str, Any],
          every: int, signer: BackgroundSigner | None, steal_before: int | None) -> dict[str, Any]:
    """What the loop and the signer reported about one run."""
    steal_after = steal_ticks(cpu)
    raw["last_report_octets"] = len(raw.pop("last_report"))
    return {**raw, "configuration": name, "label": configuration.label, "tags": configuration.tags,
            "evidence_every": every, "cpu_requested": cpu,
            "policy_name": POLICIES.get(raw["policy"], str(raw["policy"])),
            "realtime_requested": cfg.realtime,
            "realtime_obtained": raw["policy"] == getattr(os, "SCHED_FIFO", 1),
            "fifo_error": os.strerror(raw["fifo_errno"]) if raw["fifo_errno"] > 0 else None,
            "background_signer": configuration.background_signer,
            "steal_ms": None if steal_before is None or steal_after is None
            else (steal_after - steal_before) * 1000 / os.sysconf("SC_CLK_TCK"),
            "signer": {"ready": signer.ready, "stopped": signer.stopped} if signer else None}


_ADDITIVE = ("off_target_cycles", "overruns", "voluntary_switches", "involuntary_switches", "wall_ns")


def run_scan_cost(cfg: ControlCycleParams, cpu: int, rng: np.random.Generator, *, cycles: int,
                  warmup: int) -> ConfigurationRun:
    """The per-scan cost run: no evidence, one tag and two tags with the chain step in rotation, cycle by cycle
    (cycle i runs variant i % 3), so that all three meet the same state of the host."""
    configuration = CycleConfiguration(label="scan / 1 tag / 2 tags + chain, in rotation", tags=2, every_cycle=True)
    one = evidence_spec(1, cfg.tag_len, cycles + 1, rng).as_tuple()
    two = evidence_spec(2, cfg.tag_len, cycles + 1, rng).as_tuple()
    steal_before = steal_ticks(cpu)
    try:
        raw = _cycle.run(cfg.period_us * 1000, cycles, warmup, cpu, cfg.realtime, cfg.fifo_priority,
                         cfg.workload_blocks, 1, None, (one, two))
    except CycleError as exc:
        raise CycleError(str(exc), field=f"control_cycle.{SCAN_COST}", code=exc.code) from exc
    return ConfigurationRun(SCAN_COST, _frame(SCAN_COST, raw, cycles),
                            _info(SCAN_COST, configuration, cfg, cpu, raw, 1, None, steal_before))


def _blocks(total: int, rounds: int) -> list[int]:
    """``total`` cycles in ``rounds`` blocks as even as they go (the first ones one longer)."""
    return [total // rounds + (1 if i < total % rounds else 0) for i in range(rounds)]


def _merge(runs: list[ConfigurationRun]) -> ConfigurationRun:
    """One configuration's rounds as one run: the cycles numbered on, the counts summed, the rest from round 1."""
    frames, offset = [], 0
    for number, run in enumerate(runs):
        frame = run.samples.assign(cycle=run.samples["cycle"] + offset, round=number)
        offset += len(frame)
        frames.append(frame)
    info = dict(runs[0].info)
    for key in _ADDITIVE:
        info[key] = sum(r.info[key] for r in runs)
    steals = [r.info["steal_ms"] for r in runs]
    info["steal_ms"] = None if any(s is None for s in steals) else sum(steals)
    info["affinity_is_target"] = min(r.info["affinity_is_target"] for r in runs)
    info["realtime_obtained"] = all(r.info["realtime_obtained"] for r in runs)
    info["fifo_error"] = next((r.info["fifo_error"] for r in runs if r.info["fifo_error"]), None)
    info["policy_name"] = "/".join(sorted({r.info["policy_name"] for r in runs}))
    checksum = 0
    for r in runs:
        checksum ^= r.info["workload_checksum"]
    info["workload_checksum"] = checksum
    if info.get("signer"):
        info["signer"] = {"ready": runs[0].info["signer"]["ready"], "stopped": runs[-1].info["signer"]["stopped"]}
    info["rounds"] = len(runs)
    return ConfigurationRun(runs[0].name, pd.concat(frames, ignore_index=True), info)


def run_all(cfg: ControlCycleParams, seed: int, *, progress: bool = True) -> tuple[pd.DataFrame, list[dict]]:
    """Every configuration and the per-scan cost rotation on the same pinned core, interleaved in ``cfg.rounds``
    rounds (each round runs every configuration for its share of the cycles); (samples, per-run info)."""
    cpu = default_cpu() if cfg.cpu is None else cfg.cpu
    if cpu not in os.sched_getaffinity(0):
        raise CycleError(f"CPU {cpu} is not available to this process (allowed: {sorted(os.sched_getaffinity(0))})",
                         field="control_cycle.cpu")
    for name, configuration in cfg.configurations.items():  # fail before any run, naming the configuration
        if configuration.background_signer:
            try:
                crypto.resolve_backend(configuration.background_signer, cfg.signer_backend)
            except PqlabError as exc:
                raise CycleError(str(exc), field=f"control_cycle.configurations.{name}.background_signer") from exc
    rng = np.random.default_rng(seed)
    blocks = _blocks(cfg.cycles, cfg.rounds)
    warmup = -(-cfg.warmup_cycles // cfg.rounds)  # the warm-up spread over the rounds: each run starts afresh
    done: dict[str, list[ConfigurationRun]] = {name: [] for name in [*cfg.configurations, SCAN_COST]}
    with tqdm(total=len(blocks) * len(done), desc="control cycle", disable=not progress) as bar:
        for number, cycles in enumerate(blocks):
            for name, configuration in cfg.configurations.items():
                bar.set_postfix_str(f"round {number + 1}/{len(blocks)}: {configuration.label}")
                done[name].append(run_configuration(name, configuration, cfg, cpu, rng, cycles=cycles,
                                                    warmup=warmup, offset=sum(blocks[:number])))
                bar.update()
            bar.set_postfix_str(f"round {number + 1}/{len(blocks)}: per-scan cost rotation")
            done[SCAN_COST].append(run_scan_cost(cfg, cpu, rng, cycles=cycles, warmup=warmup))
            bar.update()
    runs = [_merge(r) for r in done.values()]
    samples = pd.concat([r.samples for r in runs], ignore_index=True)
    samples.loc[samples["configuration"] != SCAN_COST, "variant"] = -1
    samples["variant"] = samples["variant"].astype(np.int8)
    samples["configuration"] = pd.Categorical(samples["configuration"], categories=list(done))
    return samples, [r.info for r in runs]


def back_to_back_evidence_us(cfg: ControlCycleParams, rng: np.random.Generator,
                             reports: int = 2000) -> dict[int, float]:
    """Median µs of one and of two tags when reports are built back to back in C (caches warm), for contrast
    with the in-scan time, where every report follows a sleep of one period."""
    out = {}
    for tags in (1, 2):
        spec = evidence_spec(tags, cfg.tag_len, reports + 1, rng)
        out[tags] = float(np.median(np.frombuffer(_cycle.time_reports(spec.as_tuple(), reports), dtype=np.int64)))
        out[tags] /= 1000.0
    return out


def steal_ticks(cpu: int) -> int | None:
    """Steal time of ``cpu`` so far (USER_HZ ticks, /proc/stat): time a hypervisor ran something else."""
    try:
        with open("/proc/stat") as handle:
            for line in handle:
                fields = line.split()
                if fields[0] == f"cpu{cpu}" and len(fields) > 8:
                    return int(fields[8])
    except OSError:
        return None
    return None


def clock_overhead_ns(samples: int = 10_000) -> float:
    """Median of back-to-back CLOCK_MONOTONIC reads in C (every interval the loop records spans one read)."""
    return float(np.median(np.frombuffer(_cycle.clock_pairs(samples), dtype=np.int64)))
