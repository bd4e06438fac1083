"""The cross-check's scenarios and how each simulator runs them.

Handshakes: each role's configuration (``transport.figure_configs``) at each hop count and loss scenario, under every
transport for a configuration with an oversized message (one ``datagram`` label otherwise), always-on device; in
ns-3 on each topology (``chain``; ``shared`` for ``shared_losses`` only). Transfers: one message alone, controller
to device, loss-free, no MRP (pqlab: its timers pushed beyond the transfer; ns-3: none in the application), timed
from hand-off to the last unit's arrival — the frame-timing check without the protocol around it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pqlab.crosscheck import ns3_program
from pqlab.crosscheck.scenario_file import HANDSHAKE, TRANSFER, Ns3Run, render
from pqlab.transport import core
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import SINGLE_LABEL, fitting_configs
from pqlab.transport.model import Scenario, build_plan
from pqlab.transport.reference import EV_DELIVER
from pqlab.transport.sweep_config import MESSAGE_NAMES, CrosscheckParams

NO_MRP_MS = 3_600_000  # a transfer's timers: far beyond any transfer here, so no copy but the first is sent
FILLER_BYTES = 8       # the three messages a transfer does not send (the scenario needs four sizes)
KEY = ("kind", "config", "role", "hops", "loss", "transport", "topology", "message")


@dataclass(frozen=True)
class Case:
    """One cross-check scenario; ``topology`` is ns-3's (pqlab has one channel: its rows say ``pqlab``)."""

    kind: str                  # "handshake" | "transfer"
    config: str
    role: str
    hops: int
    loss: str
    transport: str             # ipv6 | block | pull | datagram
    message: str               # the transfer's message; "handshake" for handshakes
    scenario: Scenario
    topologies: tuple[str, ...]

    def key(self, topology: str) -> dict:
        return {"kind": self.kind, "config": self.config, "role": self.role, "hops": self.hops, "loss": self.loss,
                "transport": self.transport, "topology": topology, "message": self.message}


def cases(cross: CrosscheckParams, thread: TransportParams, configs: Mapping[str, Sequence[int]],
          compute: Mapping[str, tuple[float, float]]) -> list[Case]:
    """Every handshake and transfer scenario of the cross-check, in a fixed order."""
    names = {role: thread.figure_configs[role] for role in cross.roles}
    fitting = fitting_configs({n: configs[n] for n in names.values()}, thread)
    out: list[Case] = []
    for role, name in names.items():
        transports = [SINGLE_LABEL] if name in fitting else list(cross.transports)
        sizes = tuple(int(s) for s in configs[name])
        for hops in cross.hops:
            for loss in cross.losses:
                topologies = tuple(t for t in cross.topologies if t == "chain" or loss in cross.shared_losses)
                for transport in transports:
                    scenario = Scenario(sizes, hops, loss, False, "ipv6" if transport == SINGLE_LABEL else transport,
                                        tuple(compute.get(name, (0.0, 0.0))))
                    out.append(Case("handshake", name, role, hops, loss, transport, "handshake", scenario,
                                    topologies))
    quiet = next(loss for loss in thread.scenarios if thread.scenarios[loss].p_good == 0
                 and thread.scenarios[loss].fraction_bad == 0)
    seen: set[tuple[int, str]] = set()
    for role, name in names.items():
        for message in cross.transfer_messages:
            size = int(configs[name][MESSAGE_NAMES.index(message)])
            oversized = size > thread.framing.max_app_payload
            for transport in (cross.transfer_transports if oversized else (SINGLE_LABEL,)):
                if (size, transport) in seen:
                    continue  # the same message (the 8-B status report of every configuration) once
                seen.add((size, transport))
                for hops in cross.hops:
                    scenario = Scenario((size, FILLER_BYTES, FILLER_BYTES, FILLER_BYTES), hops, quiet, False,
                                        "ipv6" if transport == SINGLE_LABEL else transport)
                    out.append(Case("transfer", name, role, hops, quiet, transport, message, scenario,
                                    tuple(cross.topologies)))
    return out


def transfer_model(thread: TransportParams) -> TransportParams:
    """The thread model of a transfer: MRP timers beyond the transfer (ns-3's transfer has no MRP either)."""
    return thread.model_copy(update={"mrp_device_interval_ms": NO_MRP_MS, "mrp_controller_interval_ms": NO_MRP_MS,
                                     "mrp_device_boost_ms": 0})


def _pqlab_transfer(case: Case, thread: TransportParams, runs: int) -> pd.DataFrame:
    plan = build_plan(case.scenario, transfer_model(thread))
    units = plan.n_units[0]
    # every frame of the message crosses every hop once (loss-free)
    psdu_bytes = case.hops * sum(sum(plan.units[u]) for u in range(plan.first_unit[0], plan.first_unit[0] + units))
    rows = []
    for run in range(runs):
        _, events = core.trace(plan, run)
        delivered = events[(events[:, 0] == 1) & (events[:, 2] == EV_DELIVER) & (events[:, 3] == 0)]
        ok = len(delivered) >= units
        done = int(delivered[units - 1, 1]) if ok else -1
        frames = events[(events[:, 0] == 0) & (events[:, 2] == 0) & ((events[:, 1] < done) | (done < 0))]
        rows.append((run, int(ok), done, -1 if ok else 0, 0, 0, len(frames), psdu_bytes))
    return pd.DataFrame(rows, columns=["run", "ok", "time_us", "failed_message", "retransmissions", "spurious",
                                       "frames", "psdu_bytes"])


def run_pqlab(case: Case, thread: TransportParams, runs: int) -> pd.DataFrame:
    """pqlab's results for one case: ``runs`` handshakes (the C core) or transfers (its event trace)."""
    if case.kind == "transfer":
        frame = _pqlab_transfer(case, thread, runs)
    else:
        result = core.run(build_plan(case.scenario, thread), 0, runs)
        frame = pd.DataFrame(result, columns=list(core.RESULT_FIELDS))
        frame.insert(0, "run", np.arange(runs, dtype="int64"))
        frame = frame[["run", "ok", "time_us", "failed_message", "retransmissions", "spurious", "frames"]].copy()
        frame["psdu_bytes"] = -1  # not recorded by the core
    for column, value in case.key("pqlab").items():
        frame[column] = value
    frame["simulator"] = "pqlab"
    return frame


@dataclass(frozen=True)
class Ns3Job:
    case: Case
    topology: str
    first_run: int
    runs: int


def ns3_jobs(all_cases: Sequence[Case], cross: CrosscheckParams) -> Iterator[Ns3Job]:
    """The program invocations: each case on each of its topologies, in blocks of ``chunk_runs`` runs."""
    for case in all_cases:
        total = cross.runs if case.kind == "handshake" else cross.transfer_runs
        for topology in case.topologies:
            for first in range(0, total, cross.chunk_runs):
                yield Ns3Job(case, topology, first, min(cross.chunk_runs, total - first))


def run_ns3_job(program, job: Ns3Job, thread: TransportParams, cross: CrosscheckParams,
                seed: int) -> tuple[pd.DataFrame, dict[str, str]]:
    """One invocation of the ns-3 program; its rows carry the case's key."""
    case = job.case
    model = transfer_model(thread) if case.kind == "transfer" else thread
    text = render(Ns3Run(case.scenario, TRANSFER if case.kind == "transfer" else HANDSHAKE, job.topology,
                         job.first_run, job.runs), model, seed=seed, start_ms=cross.start_ms, spacing_m=cross.spacing_m)
    out = ns3_program.run_file(program, text)
    frame = out.runs
    for column, value in case.key(job.topology).items():
        frame[column] = value
    frame["simulator"] = "ns3"
    return frame, out.used


def run_ns3(jobs: Sequence[Ns3Job], thread: TransportParams, cross: CrosscheckParams, seed: int, *, workers: int,
            on_done: Callable[[int], None] | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """Every job on ``workers`` concurrent program processes; rows in job order, and what ns-3 used."""
    program = ns3_program.locate()
    results: list[pd.DataFrame | None] = [None] * len(jobs)
    used: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(run_ns3_job, program, job, thread, cross, seed): i for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            frame, job_used = future.result()
            results[futures[future]] = frame
            used = used or {k: v for k, v in job_used.items() if k != "psdu_sizes_first_run" and k != "fields"}
            if on_done:
                on_done(futures[future])
    frames = [f for f in results if f is not None]
    return pd.concat(frames, ignore_index=True), used
