"""``pqlab whatif case``: what CASE costs one Matter deployment — bytes, fit, frames, device time, handshake time.

For each :class:`~pqlab.whatif.deployment.CaseDeployment`: every message's payload is ``len()`` of the real CASE
encoder's bytes (``pqlab.case``), checked against Matter's 1178-byte limit; the frames each message puts on one
link come from the Thread model's framing plan; the responder's post-quantum milliseconds come from pqm4's cycle
counts (``pqlab.case.pqm4``: fastest, portable or a named implementation, or cycles typed in) at the device's
clock, and an operation pqm4 has no number for is reported as such, never guessed; the handshake-time
distribution comes from the C Thread simulator (``pqlab.transport.core``) over a stated number of runs, seeded from
the project's ``seed`` and the scenario, so the same deployment always gives the same answer.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pqlab.case import pqm4
from pqlab.case.configurations import MAX_APP_MESSAGE_OCTETS, case_message_sizes
from pqlab.case.device_compute import CycleTable, responder_operations
from pqlab.params import StudyParams
from pqlab.stats import level, median_ci
from pqlab.transport import core
from pqlab.transport.config import TransportParams
from pqlab.transport.model import MESSAGES, Scenario, build_plan
from pqlab.whatif.deployment import CASE_FIELDS, CaseDeployment, case_deployments, field_values

DATAGRAM = "datagram"  # every message fits: one datagram each, whatever transport is configured
CUSTOM_CHANNEL = "custom"  # the loss-scenario name of Gilbert–Elliott parameters given with the deployment


@dataclass(frozen=True)
class CaseContext:
    """What every deployment is evaluated against: the project's Thread model, seed and pqm4 table."""

    transport: TransportParams
    pqm4: pqm4.Pqm4Table
    limit: int = MAX_APP_MESSAGE_OCTETS
    seed: int = 0

    @classmethod
    def load(cls, settings: StudyParams, params_dir: str | Path) -> CaseContext:
        """From validated params and the folder holding ``pqm4_implementations.yaml``."""
        table = pqm4.load_implementations(Path(params_dir) / pqm4.IMPLEMENTATIONS_FILE)
        return cls(settings.transport, table, settings.framing.max_app_payload, settings.seed)

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(self.transport.scenarios)

    @property
    def implementations(self) -> tuple[str, ...]:
        return tuple(sorted({name for a in self.pqm4.algorithms.values() for name in a.implementations}))


@dataclass(frozen=True)
class TransportRun:
    """The simulated handshake-time distribution under one transport (times over completed handshakes)."""

    transport: str
    runs: int
    completed: int
    failure_rate: float
    median_s: float | None
    median_lo_s: float | None
    median_hi_s: float | None
    confidence: float          # of the median's interval (``transport.confidence``)
    p95_s: float | None
    failed_in: dict[str, int]  # message that exhausted MRP -> failed runs
    times_s: np.ndarray = field(repr=False, compare=False)

    @property
    def fails_in(self) -> str | None:
        """The message most failures happened in (None when every handshake completed)."""
        return max(self.failed_in, key=self.failed_in.get) if self.failed_in else None

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "times_s"}
        return out | {"fails_in": self.fails_in}


@dataclass(frozen=True)
class DeviceWork:
    """The responder's post-quantum work: each operation's milliseconds, or why pqm4 has no number for it."""

    clock_mhz: float
    implementation: str
    operations: tuple[dict[str, Any], ...]
    before_sigma2_ms: float  # known operations only
    after_sigma3_ms: float

    @property
    def unmeasured(self) -> tuple[str, ...]:
        return tuple(f"{o['algorithm']} {o['operation']}" for o in self.operations if o["ms"] is None)

    @property
    def total_ms(self) -> float | None:
        """The whole responder PQ time; None when an operation has no cycle count (then see ``known_ms``)."""
        return None if self.unmeasured else self.known_ms

    @property
    def known_ms(self) -> float:
        return self.before_sigma2_ms + self.after_sigma3_ms

    def to_dict(self) -> dict[str, Any]:
        return {"clock_mhz": self.clock_mhz, "implementation": self.implementation, "total_ms": self.total_ms,
                "known_ms": self.known_ms, "before_sigma2_ms": self.before_sigma2_ms,
                "after_sigma3_ms": self.after_sigma3_ms, "unmeasured": list(self.unmeasured),
                "operations": [dict(o) for o in self.operations]}


@dataclass(frozen=True)
class CaseAnswer:
    """Everything ``pqlab whatif case`` says about one deployment."""

    deployment: CaseDeployment
    messages: dict[str, int]
    limit: int
    frames_per_hop: dict[str, int]
    device: DeviceWork
    transports: tuple[TransportRun, ...]
    chosen: str
    channel: str
    seconds: float

    @property
    def label(self) -> str:
        return self.deployment.label

    @property
    def fits(self) -> dict[str, bool]:
        return {m: size <= self.limit for m, size in self.messages.items()}

    @property
    def best(self) -> TransportRun:
        return next(t for t in self.transports if t.transport == self.chosen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label, "deployment": self.deployment.model_dump(mode="json"),
            "messages": dict(self.messages), "total_bytes": sum(self.messages.values()), "limit_bytes": self.limit,
            "fits": self.fits, "all_fit": all(self.fits.values()), "frames_per_hop": dict(self.frames_per_hop),
            "device": self.device.to_dict(), "channel": self.channel, "transport": self.chosen,
            "handshake": self.best.to_dict(), "transports": [t.to_dict() for t in self.transports],
            "times_are_lower_bounds": bool(self.device.unmeasured), "seconds": self.seconds,
        }


def _note(algorithm: str, operation: str, table: CycleTable, source: pqm4.Pqm4Table,
          typed: dict[str, dict[str, int]]) -> str:
    """Where an operation's number comes from when that needs saying: typed in, a caveat, or why there is none."""
    if operation in typed.get(algorithm, {}):
        return f"{algorithm} {operation}: cycles given"
    if table.milliseconds(algorithm, operation) is None:
        return f"{algorithm} {operation}: {source.why_missing(algorithm)}"
    entry = source.algorithms.get(algorithm)
    return f"{algorithm}: {entry.note}" if entry is not None and entry.note else ""


def device_work(deployment: CaseDeployment, context: CaseContext) -> DeviceWork:
    """The responder's operations at the device's clock under its implementation choice (or typed cycles)."""
    spec = deployment.device
    table: CycleTable = pqm4.cycle_table(context.pqm4, implementation=spec.implementation, clock_mhz=spec.clock_mhz,
                                         algorithms=deployment.algorithms_used(), cycles=spec.cycles,
                                         field=f"{deployment.label}: device.implementation")
    operations, phases = [], {"before Sigma2": 0.0, "after Sigma3": 0.0}
    for op in responder_operations(deployment.config()):
        ms = table.milliseconds(op.algorithm, op.operation)
        if ms == 0.0 and all(part in pqm4.CLASSICAL for part in op.algorithm.split("+")):
            continue  # classical ECC: not post-quantum work (the paper's Device PQ column leaves it out)
        note = "; ".join(_note(part, op.operation, table, context.pqm4, spec.cycles)
                         for part in op.algorithm.split("+") if part not in pqm4.CLASSICAL) or None
        operations.append({"phase": op.phase, "algorithm": op.algorithm, "operation": op.operation,
                           "purpose": op.purpose, "ms": ms, "note": note})
        phases[op.phase] += ms or 0.0
    return DeviceWork(spec.clock_mhz, spec.implementation, tuple(operations), phases["before Sigma2"],
                      phases["after Sigma3"])


def _thread_for(deployment: CaseDeployment, context: CaseContext) -> tuple[TransportParams, str]:
    """The project's Thread model with this mesh's poll interval and, when given, its own channel."""
    mesh = deployment.mesh
    update: dict[str, Any] = {"poll_interval_ms": mesh.poll_interval_ms}
    loss = mesh.interference
    if mesh.gilbert_elliott is not None:
        update["scenarios"] = {**context.transport.scenarios, CUSTOM_CHANNEL: mesh.gilbert_elliott}
        loss = CUSTOM_CHANNEL
    return context.transport.model_copy(update=update), loss


def _summary(transport: str, results: np.ndarray, thread: TransportParams, seed: int) -> TransportRun:
    """The handshakes of one transport: the median with its interval (``transport.bootstrap_resamples``,
    ``transport.confidence``), p95, failures."""
    ok = results[:, 0].astype(bool)
    times = results[ok, 1] / 1e6
    failed = Counter(MESSAGES[int(m)] for m in results[~ok, 2] if 0 <= int(m) < len(MESSAGES))
    if times.size:
        median, lo, hi = median_ci(times, thread.bootstrap_resamples, thread.confidence, seed)
        p95 = float(np.quantile(times, 0.95))
    else:
        median = lo = hi = p95 = None
    return TransportRun(transport, len(results), int(ok.sum()), float((~ok).mean()), median, lo, hi,
                        thread.confidence, p95, dict(failed), times)


def _frames(plan: Any) -> dict[str, int]:
    return {name: sum(len(plan.units[u]) for u in range(plan.first_unit[i], plan.first_unit[i] + plan.n_units[i]))
            for i, name in enumerate(MESSAGES)}


def evaluate(deployment: CaseDeployment, context: CaseContext) -> CaseAnswer:
    """Sizes, fit, frames per hop, device time and the simulated handshake for one deployment."""
    start = time.perf_counter()
    sizes = case_message_sizes(deployment.config())
    messages = {m: sizes[m] for m in MESSAGES}
    device = device_work(deployment, context)
    thread, loss = _thread_for(deployment, context)
    oversized = any(size > context.limit for size in messages.values())
    if not oversized:
        transports = (DATAGRAM,)
    elif deployment.transport == "best":
        transports = ("ipv6", "pull", "block")
    else:
        transports = (deployment.transport,)
    runs, plans = [], {}
    for index, transport in enumerate(transports):
        scenario = Scenario(tuple(messages.values()), deployment.mesh.hops, loss, deployment.mesh.sleepy,
                            "ipv6" if transport == DATAGRAM else transport,
                            (device.before_sigma2_ms, device.after_sigma3_ms))
        plans[transport] = build_plan(scenario, thread)
        runs.append(_summary(transport, core.run(plans[transport], 0, deployment.runs), thread,
                             context.seed + index))
    chosen = min(runs, key=lambda r: (r.failure_rate, r.median_s if r.median_s is not None else float("inf")))
    channel = loss if loss != CUSTOM_CHANNEL else "Gilbert–Elliott " + ", ".join(
        f"{k} {v:g}" for k, v in deployment.mesh.gilbert_elliott.model_dump().items())
    return CaseAnswer(deployment, messages, context.limit, _frames(plans[chosen.transport]), device, tuple(runs),
                      chosen.transport, channel, time.perf_counter() - start)


def evaluate_all(deployments: Sequence[CaseDeployment], context: CaseContext) -> list[CaseAnswer]:
    return [evaluate(d, context) for d in deployments]


def answer(context: CaseContext, **values: Any) -> CaseAnswer:
    """One deployment from flat values — the CLI's option names (``hops=4``, ``clock_mhz=128.0``), ``mode`` as
    ``"kem-pdk/both"``, ``icac="none"`` for no intermediate CA — validated and answered (the notebook's call)."""
    flags = field_values(values, CASE_FIELDS)
    deployment = case_deployments(flags=flags, scenarios=context.scenarios, implementations=context.implementations)
    return evaluate(deployment[0], context)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def table(answers: Sequence[CaseAnswer]) -> pd.DataFrame:
    """Deployments side by side (one column each): what was asked and every answer, as strings to print."""
    columns = {}
    for answer in answers:
        d, run = answer.deployment, answer.best
        column = {
            "key exchange": d.key_exchange, "NOC / ICAC / RCAC": f"{d.noc} / {d.icac or '–'} / {d.rcac}",
            "auth / cached": f"{d.auth} / {d.cached}",
            "device": f"{d.device.implementation} @ {d.device.clock_mhz:g} MHz",
            "mesh": f"{d.mesh.hops} hop{'s' * (d.mesh.hops > 1)}, {answer.channel}, "
                    f"{'sleepy' if d.mesh.sleepy else 'always-on'}",
        }
        for message, size in answer.messages.items():
            column[f"{message} [B]"] = f"{size:,}{'' if size <= answer.limit else ' > ' + str(answer.limit)}"
        column["frames per hop"] = " + ".join(str(v) for v in answer.frames_per_hop.values()) + \
            f" = {sum(answer.frames_per_hop.values())}"
        total = answer.device.total_ms
        column["device PQ [ms]"] = _ms(total) if total is not None else \
            f"≥ {answer.device.known_ms:.1f} (no count: {', '.join(answer.device.unmeasured)})"
        column["transport"] = answer.chosen
        column[f"median [s] ({run.runs} runs, {level(run.confidence)} interval)"] = "—" if run.median_s is None else \
            f"{run.median_s:.2f} [{run.median_lo_s:.2f}, {run.median_hi_s:.2f}]"
        column["p95 [s]"] = "—" if run.p95_s is None else f"{run.p95_s:.2f}"
        column["failure rate"] = f"{run.failure_rate:.1%}" + (f" (in {run.fails_in})" if run.fails_in else "")
        columns[answer.label] = column
    return pd.DataFrame(columns)


def notes(answers: Sequence[CaseAnswer]) -> list[str]:
    """The lines a reader needs beside the table: unpublished cycle counts, caveats, lower bounds."""
    lines = []
    for answer in answers:
        lines += [f"{answer.label}: {op['note']}" for op in answer.device.operations if op["note"]]
        if answer.device.unmeasured:
            lines.append(f"{answer.label}: the simulated times leave out {', '.join(answer.device.unmeasured)} "
                         "(no cycle count): they are lower bounds")
    return list(dict.fromkeys(lines))
