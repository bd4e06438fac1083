"""The unstated-assumption study: the transport headlines under each choice the paper leaves open.

The paper does not say how the one shared channel is arbitrated between concurrent datagrams
(``channel_priority``), whether 802.15.4 ACK frames are lost like data frames (``ack_frame_loss``), how a sleepy
device's indirect retries are spaced (``indirect_retry_spacing``), or when block transfer's MRP timer starts
(``block_timer_start``). Each assumption set is the thread model with those fields set; its grid is the drop-in
configuration (always-on, every loss scenario, IPv6 fragmentation and block transfer) and every oversized
configuration on a sleepy device under interference with IPv6 fragmentation. ``headline`` reduces one set's
rows to the quantities the paper quotes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from pqlab.transport.config import TransportParams
from pqlab.transport.grid import GridPoint, fitting_configs
from pqlab.transport.model import Scenario
from pqlab.transport.sweep_config import AssumptionsParams

FIELDS = ("channel_priority", "ack_frame_loss", "indirect_retry_spacing", "block_timer_start")


def assumption_sets(settings: AssumptionsParams, thread: TransportParams) -> dict[str, TransportParams]:
    """Set id -> thread model: every channel rule x ACK-loss choice, then each further retry spacing and block
    timer start on the configured model (a set identical to an earlier one is skipped)."""
    sets: dict[str, TransportParams] = {}

    def add(key: str, **update) -> None:
        model = thread.model_copy(update=update)
        if all(any(getattr(model, f) != getattr(other, f) for f in FIELDS) for other in sets.values()):
            sets[key] = model

    for rule in settings.channel_rules:
        for ack in settings.ack_frame_loss:
            add(f"{rule}-ack_{ack}", channel_priority=rule, ack_frame_loss=ack)
    for spacing in settings.indirect_retry_spacing:
        add(f"{thread.channel_priority}-retry_{spacing}", indirect_retry_spacing=spacing)
    for start in settings.block_timer_start:
        add(f"{thread.channel_priority}-block_timer_{start}", block_timer_start=start)
    return sets


def describe(model: TransportParams) -> dict[str, str]:
    """The four assumption fields of a model, for the table."""
    return {field: str(getattr(model, field)) for field in FIELDS}


def oversized(configs: Mapping[str, Sequence[int]], thread: TransportParams) -> list[str]:
    """Configurations with a message above the Matter limit (the ones a transport is chosen for)."""
    fitting = fitting_configs(configs, thread)
    return [name for name in configs if name not in fitting]


def assumption_points(
    settings: AssumptionsParams, sets: Mapping[str, TransportParams], thread: TransportParams,
    configs: Mapping[str, Sequence[int]], device_compute_ms: Mapping[str, tuple[float, float]], runs: int,
) -> tuple[list[GridPoint], pd.DataFrame]:
    """Every set's grid points and a table mapping each point_id to its set."""
    d3 = thread.figure_configs["drop_in"]
    noisy = thread.figure_scenarios["interference"]
    points: list[GridPoint] = []
    rows: list[dict] = []

    def add(key: str, model: TransportParams, name: str, hops: int, loss: str, sleepy: bool, transport: str) -> None:
        scenario = Scenario(tuple(int(s) for s in configs[name]), hops, loss, sleepy, transport,
                            tuple(device_compute_ms.get(name, (0.0, 0.0))))
        point = GridPoint(name, transport, scenario, model)
        points.append(point)
        rows.append({"point_id": point.point_id(thread, runs), "set": key})

    for key, model in sets.items():
        for hops in settings.drop_in_hops:
            for loss in thread.scenarios:
                for transport in ("ipv6", "block"):
                    add(key, model, d3, hops, loss, False, transport)
        for name in oversized(configs, thread):
            for hops in settings.sleepy_hops:
                add(key, model, name, hops, noisy, True, "ipv6")
    return points, pd.DataFrame(rows)
