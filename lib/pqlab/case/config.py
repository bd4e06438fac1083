"""The CASE design space's typed config and the names it accepts (Table I's rows, auth and cache modes)."""

from __future__ import annotations

from pydantic import Field

from pqlab.config import Strict

TABLE1_NAMES = ("B", "D1", "D2", "D3", "D4", "S1", "S2", "S3", "S4", "S5", "C1", "C2", "C3", "C4", "C5")
AUTH_MODES = ("sig", "kem", "kem-pdk")
CACHE_MODES = ("none", "responder", "both")


class DesignSpaceParams(Strict):
    """PQ-CASE §IV-B, §VIII: the design space (Fig. 6), device computation, the fit and Pareto results."""

    key_exchanges: tuple[str, ...] = Field(default=("ML-KEM-512", "ML-KEM-768", "P-256+ML-KEM-768"), min_length=1)
    noc: tuple[str, ...] = Field(
        default=("ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4"), min_length=1)
    icac: tuple[str | None, ...] = Field(
        default=(None, "ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4"), min_length=1)
    rcac: tuple[str, ...] = Field(
        default=("ECDSA-P256", "ML-DSA-44", "Falcon-512", "SLH-DSA-SHA2-128s", "MAYO-2", "SNOVA-24-5-4",
                 "UOV-Is-pkc"), min_length=1)
    modes: tuple[str, ...] = Field(
        default=("sig/none", "sig/responder", "sig/both", "kem/none", "kem-pdk/none", "kem-pdk/both"), min_length=1)
    static_kem: str = "ML-KEM-768"
    configurations: tuple[str, ...] = Field(default=TABLE1_NAMES, min_length=1)


class ExtendedDesignSpaceParams(Strict):
    """Beyond the paper: ``design_space``'s members with these newer algorithms added to each dimension (HQC, NIST's
    2025 KEM; round-2 additional signatures). The paper's 3,780 points stay a subset, unchanged."""

    add_key_exchanges: tuple[str, ...] = ("HQC-1",)
    add_noc: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small")
    add_icac: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small")
    add_rcac: tuple[str, ...] = ("MAYO-1", "SNOVA-25-8-3", "HAWK-512", "SQIsign-I", "CROSS-RSDPG-128-small",
                                 "UOV-Ip-pkc")

