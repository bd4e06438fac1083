"""The PQ-CASE transport grid (§IV-C): configurations × hops × interference × device type × transport × runs.

Work is split into chunks of scenarios; each finished chunk is written to a parts folder at once (a
:class:`pqlab.cache.PartStore`: every part listed with its SHA-256, so a damaged part is discarded and recomputed,
never reused; the transport study deletes the folder once its outputs are committed), so an interrupted run skips
every scenario already done when it is run again. A handshake's result depends only on its scenario and run
index, so results do not depend on chunking, worker count or executor (local processes or Dask).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pqlab import framing
from pqlab.cache import PartStore
from pqlab.child_processes import die_with_parent
from pqlab.errors import SchedulerError
from pqlab.transport import core, model
from pqlab.transport.config import TransportParams, TransportSwitches
from pqlab.transport.model import TRANSPORTS, Scenario, build_plan

SCHEDULER_ENV = "PQLAB_DASK_SCHEDULER"
CONNECT_TIMEOUT_ENV = "PQLAB_DASK_CONNECT_TIMEOUT"  # seconds to wait for the scheduler (default 5)
SINGLE_LABEL = "datagram"  # every message fits: one transport, not three
KEY_COLUMNS = ("config", "hops", "loss", "sleepy", "transport")
VARIANTS = ("paper", "source_accurate")  # the transport grid's two model variants


@functools.cache
def code_fingerprint() -> str:
    """Hash of the compiled C core and the plan builder: kept parts from older code are not reused."""
    digest = hashlib.blake2b(digest_size=10)
    for path in (core._core.__file__, model.__file__, framing.__file__):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class GridPoint:
    """One scenario of the grid; ``transport`` is the label (``datagram`` when everything fits).

    ``params``: this point's own model (a sensitivity grid mixes several in one run); None = the grid's.
    """

    config: str
    transport: str
    scenario: Scenario
    params: TransportParams | None = field(default=None, compare=False)

    def model(self, params: TransportParams) -> TransportParams:
        return self.params if self.params is not None else params

    def point_id(self, params: TransportParams, runs: int) -> str:
        model = self.model(params)
        blob = json.dumps([code_fingerprint(), self.config, self.transport, self.scenario.key(), runs,
                           model.model_dump(mode="json", exclude={"runs", "bootstrap_resamples", "confidence"})],
                          sort_keys=True)
        return hashlib.blake2b(blob.encode(), digest_size=10).hexdigest()


def fitting_configs(configs: Mapping[str, Sequence[int]], params: TransportParams) -> set[str]:
    """The configurations whose four messages all fit one Matter message (one datagram each, no transport)."""
    return {name for name, sizes in configs.items() if all(framing.fits(int(s), params.framing) for s in sizes)}


def grid_points(
    configs: Mapping[str, Sequence[int]],
    params: TransportParams,
    device_compute_ms: Mapping[str, tuple[float, float]] | None = None,
) -> list[GridPoint]:
    """All scenarios for ``configs`` (name -> four message sizes in bytes, from the CASE size model).

    A configuration whose messages all fit runs once, labelled ``datagram``; with
    ``params.fitting_under_every_transport`` it runs under each transport label with the identical plan (the
    paper's count of 432,000 handshakes), giving identical results under each label.
    """
    points = []
    fitting = fitting_configs(configs, params)
    for name, sizes in configs.items():
        sizes = tuple(int(s) for s in sizes)
        compute = tuple(device_compute_ms.get(name, (0.0, 0.0))) if device_compute_ms else (0.0, 0.0)
        if name not in fitting:
            transports = [(t, t) for t in TRANSPORTS]
        elif params.fitting_under_every_transport:
            transports = [(t, "ipv6") for t in TRANSPORTS]
        else:
            transports = [(SINGLE_LABEL, "ipv6")]
        for hops in params.hops:
            for loss in params.scenarios:
                for sleepy in (False, True):
                    for label, transport in transports:
                        scenario = Scenario(sizes, hops, loss, sleepy, transport, compute)
                        points.append(GridPoint(name, label, scenario))
    return points


def variant_params(params: TransportParams, variant: str) -> TransportParams:
    """The thread model of one of :data:`VARIANTS`: as configured, or with every source_accurate switch on."""
    if variant == "paper":
        return params
    return params.model_copy(update={"switches": TransportSwitches.source_accurate()})


def channel_rule_points(configs: Mapping[str, Sequence[int]], params: TransportParams,
                        device_compute_ms: Mapping[str, tuple[float, float]] | None,
                        ) -> tuple[TransportParams, list[GridPoint]] | None:
    """The drop-in configuration's always-on IPv6 and block scenarios at the ratio hops under the other
    channel-arbitration rule (the rerun behind the channel-priority sensitivity); None when there are none."""
    d3 = params.figure_configs.get("drop_in", "")
    hops = tuple(h for h in params.hops if h in params.ratio_hops)
    if d3 not in configs or not hops:
        return None
    other = "message_age" if params.channel_priority == "node_arrival" else "node_arrival"
    flipped = params.model_copy(update={"channel_priority": other, "hops": hops})
    points = [p for p in grid_points({d3: configs[d3]}, flipped, device_compute_ms)
              if not p.scenario.sleepy and p.transport in ("ipv6", "block")]
    return flipped, points


def simulate_points(points: Sequence[GridPoint], params: TransportParams, runs: int) -> pd.DataFrame:
    """Run ``runs`` handshakes of each point in the C core; one row per handshake."""
    frames = []
    for point in points:
        res = core.run(build_plan(point.scenario, point.model(params)), 0, runs)
        frames.append(pd.DataFrame({
            "point_id": point.point_id(params, runs),
            "config": point.config,
            "hops": np.int8(point.scenario.hops),
            "loss": point.scenario.loss,
            "sleepy": point.scenario.sleepy,
            "transport": point.transport,
            "run": np.arange(runs, dtype=np.int32),
            "ok": res[:, 0].astype(bool),
            "time_s": res[:, 1] / 1e6,
            "failed_message": res[:, 2].astype(np.int8),
            "retransmissions": res[:, 3].astype(np.int16),
            "spurious": res[:, 4].astype(np.int16),
            "frames": res[:, 5].astype(np.int32),
            "device_tx_ms": res[:, 6] / 1e3,
            "device_rx_ms": res[:, 7] / 1e3,
        }))
    return pd.concat(frames, ignore_index=True)


def _chunks(items: Sequence[GridPoint], size: int) -> list[list[GridPoint]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _part_name(frame: pd.DataFrame) -> str:
    ids = "".join(sorted(frame["point_id"].unique()))
    return hashlib.blake2b(ids.encode(), digest_size=10).hexdigest()


def _connect(scheduler: str):
    """A Dask client, or a SchedulerError (one line) when the scheduler cannot be reached quickly."""
    from distributed import Client

    timeout = float(os.environ.get(CONNECT_TIMEOUT_ENV) or 5)
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SchedulerError(f"cannot reach the Dask scheduler within {timeout:g} s ({reason}); unset "
                             f"{SCHEDULER_ENV} / --scheduler to run on local processes",
                             field=f"scheduler {scheduler}") from None


def _executor_map(
    fn: Callable[[list[GridPoint]], pd.DataFrame], chunks: list[list[GridPoint]], workers: int | None,
    scheduler: str | None,
) -> Iterable[pd.DataFrame]:
    if scheduler:
        from distributed import as_completed

        with _connect(scheduler) as client:
            futures = client.map(fn, chunks, pure=False)
            for future in as_completed(futures):
                yield future.result()
        return
    if workers == 1:
        for chunk in chunks:
            yield fn(chunk)
        return
    # workers die with this process: a SIGKILLed run leaves no orphan waiting on its queue (PPID 1) forever
    with ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        futures = [pool.submit(fn, chunk) for chunk in chunks]
        from concurrent.futures import as_completed as done_in_order

        for future in done_in_order(futures):
            yield future.result()


class _Task:
    """Picklable chunk runner (a closure would not travel to worker processes)."""

    def __init__(self, params: TransportParams, runs: int) -> None:
        self.params, self.runs = params, runs

    def __call__(self, chunk: list[GridPoint]) -> pd.DataFrame:
        return simulate_points(chunk, self.params, self.runs)


def run_grid(
    points: Sequence[GridPoint],
    params: TransportParams,
    parts: str | Path | PartStore,
    *,
    runs: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    chunk_size: int = 8,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every point not yet in the ``parts`` cache and return all rows, one per handshake, sorted.

    ``parts``: a folder (locked for the call) or an open :class:`PartStore` (the transport study holds it until
    its outputs are committed). Kept parts are verified first: a damaged one is discarded, with one warning
    line, and its scenarios are run again, so a kept part can never change a result.
    ``scheduler``: a Dask scheduler address; default from the PQLAB_DASK_SCHEDULER environment variable,
    else a local process pool with ``workers`` processes (``1`` runs in this process).
    """
    runs = params.runs if runs is None else runs
    if runs < 1 or chunk_size < 1:
        raise ValueError("runs and chunk_size must be >= 1")
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    wanted = {p.point_id(params, runs): p for p in points}
    with nullcontext(parts) if isinstance(parts, PartStore) else PartStore(parts) as store:
        frames = []
        for table in store.load().values():
            frame = table.to_pandas()
            frames.append(frame[frame["point_id"].isin(wanted.keys())])
        kept = pd.concat(frames, ignore_index=True).drop_duplicates(["point_id", "run"]) if frames else None
        counts = kept["point_id"].value_counts() if kept is not None else pd.Series(dtype=int)
        done = set(counts[counts == runs].index)
        frames = [kept[kept["point_id"].isin(done)]] if kept is not None else []
        todo = [p for pid, p in wanted.items() if pid not in done]
        chunks = _chunks(todo, chunk_size)
        bar = None
        if progress and chunks:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc="thread grid", unit="scenario", initial=0)
        for frame in _executor_map(_Task(params, runs), chunks, workers, scheduler):
            store.add(_part_name(frame), pa.Table.from_pandas(frame, preserve_index=False))
            frames.append(frame)
            if bar is not None:
                bar.update(frame["point_id"].nunique())
        if bar is not None:
            bar.close()
    table = pd.concat(frames, ignore_index=True) if frames else simulate_points([], params, runs)
    table = table.sort_values(["config", "hops", "loss", "sleepy", "transport", "run"], kind="stable")
    return table.reset_index(drop=True)


def clean_parts(parts: str | Path) -> None:
    """Delete a parts folder once the grid's results are safely written elsewhere (no run may hold it)."""
    shutil.rmtree(parts, ignore_errors=True)
