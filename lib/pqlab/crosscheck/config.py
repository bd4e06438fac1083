"""The transport cross-check's typed config (``transport_crosscheck:`` in params.yaml): which scenarios run in both
pqlab's Thread simulator and the ns-3 scenario program, and how many handshakes each."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pqlab.config import Name, Strict
from pqlab.thread.config import FIGURE_ROLES, TRANSPORTS, Hops

MESSAGE_NAMES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


class CrosscheckParams(Strict):
    """PQ-CASE's transport model beside ns-3 (lr-wpan + sixlowpan): the same scenarios, the same `thread:` params.

    Every number of the model (MAC, 6LoWPAN, MRP, loss scenarios, sizes) comes from the `thread:` section and the
    CASE size model; this section only picks scenarios and sample sizes.
    """

    roles: tuple[Literal[FIGURE_ROLES], ...] = Field(  # type: ignore[valid-type]
        default=("classical", "smallest", "drop_in"), min_length=1)  # thread.figure_configs: B, C5, D3
    hops: tuple[Hops, ...] = Field(default=(1, 2, 3, 4), min_length=1)
    # loss-free, a fixed per-frame loss probability, and the Gilbert-Elliott channel (names of thread.scenarios)
    losses: tuple[Name, ...] = Field(default=("none", "iid_15", "light_wifi"), min_length=1)
    transports: tuple[Literal[TRANSPORTS], ...] = Field(  # type: ignore[valid-type]
        default=("ipv6", "block", "pull"), min_length=1)   # for configurations with an oversized message
    # ns-3's radio topology: "chain" (only neighbours in range, the issue's setting) and, as a diagnosis of the
    # difference, "shared" (every node hears every other: pqlab's one channel without spatial reuse)
    topologies: tuple[Literal["chain", "shared"], ...] = Field(default=("chain", "shared"), min_length=1)
    shared_losses: tuple[Name, ...] = ("none",)   # the "shared" topology runs only these loss scenarios
    runs: int = Field(default=300, ge=2, le=100_000)                # handshakes per scenario and simulator
    # loss-free single-message transfers (no MRP): these messages of each role's configuration, 1..max hops
    transfer_messages: tuple[Literal[MESSAGE_NAMES], ...] = Field(  # type: ignore[valid-type]
        default=("Sigma2", "StatusReport"), min_length=1)
    transfer_transports: tuple[Literal["ipv6", "block"], ...] = ("ipv6", "block")  # for oversized messages
    transfer_runs: int = Field(default=100, ge=2, le=100_000)
    agreement_pct: float = Field(default=10.0, gt=0.0, le=100.0)   # the claim judged on loss-free transfers
    start_ms: float = Field(default=100.0, ge=0.0, le=10_000.0)     # ns-3: the handshake starts after the stack is up
    spacing_m: float = Field(default=10.0, gt=0.0, le=1000.0)      # ns-3: node spacing along the chain
    chunk_runs: int = Field(default=50, ge=1, le=100_000)         # ns-3 runs per program invocation (one process)

    @model_validator(mode="after")
    def _distinct(self) -> CrosscheckParams:
        for name in ("roles", "hops", "losses", "transports", "topologies", "transfer_messages"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: listed twice in {list(values)}")
        if not set(self.shared_losses) <= set(self.losses):
            raise ValueError(f"shared_losses: {sorted(set(self.shared_losses) - set(self.losses))} not in losses")
        return self
