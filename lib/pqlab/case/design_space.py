"""The CASE design space: every key exchange × chain × authentication/caching mode, sized by the real encoder."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pqlab.case.certificates import parts_of
from pqlab.case.configurations import CaseConfig, case_message_sizes
from pqlab.case.device_compute import CycleTable, device_pq_ms
from pqlab.case.pareto import pareto_mask

FIPS = frozenset({"ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87",
                  "SLH-DSA-SHA2-128s", "SLH-DSA-SHA2-128f"})
FALCON = frozenset({"Falcon-512"})
ADDITIONAL = frozenset({"MAYO-2", "SNOVA-24-5-4", "UOV-Is-pkc"})  # NIST's second-round additional signatures
CLASSICAL_SIGNATURES = frozenset({"ECDSA-P256"})

FAMILY_FIPS = "FIPS 203/204/205 only"
FAMILY_FALCON = "adds Falcon-512"
FAMILY_ADDITIONAL = "uses MAYO, SNOVA or UOV"
FAMILY_CLASSICAL = "ECDSA in the chain"
FAMILIES = (FAMILY_FIPS, FAMILY_FALCON, FAMILY_ADDITIONAL, FAMILY_CLASSICAL)
MESSAGES = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


@dataclass(frozen=True)
class Mode:
    """How the responder authenticates and which chains the peer already holds."""

    auth: str
    cached: str

    @classmethod
    def parse(cls, text: str) -> Mode:
        auth, _, cached = text.partition("/")
        return cls(auth, cached)

    def __str__(self) -> str:
        return f"{self.auth}/{self.cached}"


def family(config: CaseConfig) -> str:
    """The least-established signature family a point relies on (classical ECDSA counted separately)."""
    signatures = {p for alg in (config.noc, config.icac, config.rcac) if alg for p in parts_of(alg)}
    if signatures & CLASSICAL_SIGNATURES:
        return FAMILY_CLASSICAL
    if signatures & ADDITIONAL:
        return FAMILY_ADDITIONAL
    if signatures & FALCON:
        return FAMILY_FALCON
    return FAMILY_FIPS


def enumerate_configs(key_exchanges: Iterable[str], nocs: Iterable[str], icacs: Iterable[str | None],
                      rcacs: Iterable[str], modes: Iterable[Mode], static_kem: str) -> list[CaseConfig]:
    """Every combination, in a fixed order (the product of the inputs as given)."""
    return [
        CaseConfig(key_exchange=kex, noc=noc, icac=icac, rcac=rcac, auth=mode.auth, cached=mode.cached,
                   auth_kem=static_kem if mode.auth != "sig" else None,
                   name=f"{kex}|{noc}/{icac or '-'}/{rcac}|{mode}")
        for kex, noc, icac, rcac, mode in itertools.product(key_exchanges, nocs, icacs, rcacs, modes)
    ]


def evaluate(configs: list[CaseConfig], cycles: CycleTable, limit: int) -> pd.DataFrame:
    """One row per point: message payloads from the encoder, largest message, fit flag, device ms, family."""
    rows = []
    for config in configs:
        sizes = case_message_sizes(config)
        cost = device_pq_ms(config, cycles)
        largest = max(sizes[m] for m in MESSAGES)
        rows.append({
            "point": config.name, "key_exchange": config.key_exchange, "noc": config.noc,
            "icac": config.icac or "none", "rcac": config.rcac, "auth": config.auth, "cached": config.cached,
            "mode": f"{config.auth}/{config.cached}", "chain": config.chain_label,
            **{m: sizes[m] for m in MESSAGES}, "total": sizes["Total"], "largest": largest,
            "fits": largest <= limit, "messages_over_limit": sum(sizes[m] > limit for m in MESSAGES),
            "device_ms": cost.milliseconds, "device_unmeasured": ", ".join(cost.unmeasured),
            "family": family(config),
        })
    return pd.DataFrame(rows)


def restrict(space: pd.DataFrame, families: Iterable[str]) -> pd.DataFrame:
    """The points whose family is one of ``families``."""
    return space[space["family"].isin(list(families))]


def pareto_points(space: pd.DataFrame) -> pd.DataFrame:
    """Points on the (total bytes, device ms) Pareto front, cheapest device first."""
    if space.empty:
        return space
    mask = pareto_mask(space["total"].to_numpy(), space["device_ms"].to_numpy())
    return space[mask].sort_values(["device_ms", "total"])


def smallest_largest_message(space: pd.DataFrame) -> pd.DataFrame:
    """All points that share the smallest largest-message size."""
    return space[space["largest"] == space["largest"].min()]


def filter_space(space: pd.DataFrame, max_message: int | None = None, max_device_ms: float | None = None,
                 families: Iterable[str] | None = None, max_total: int | None = None) -> pd.DataFrame:
    """The survivors of a set of constraints, smallest handshake first (the notebook's interactive view)."""
    keep = np.ones(len(space), dtype=bool)
    if max_message is not None:
        keep &= space["largest"].to_numpy() <= max_message
    if max_device_ms is not None:
        keep &= space["device_ms"].to_numpy() <= max_device_ms
    if max_total is not None:
        keep &= space["total"].to_numpy() <= max_total
    if families is not None:
        keep &= space["family"].isin(list(families)).to_numpy()
    return space[keep].sort_values(["total", "device_ms"])
