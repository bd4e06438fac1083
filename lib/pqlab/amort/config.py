"""AMORT-V1's typed configs: the implementation switches (path, wire format, variant) and the attack matrix."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pqlab.config import Strict

CheckpointSigner = Literal["ML-DSA-65", "SLH-DSA-SHA2-128f"]  # the two checkpoint signatures of AMORT-V1


class AmortParams(Strict):
    """AMORT-V1 implementation switches: which controller path runs the per-report work (pqlab.amort.fastpath),
    the wire format and the protocol variant (pqlab.amort.profile, docs/protocol.md).

    ``native`` (C + libcrypto) falls back to ``reference`` only through ``resolve_controller_path``, which
    returns the path actually used and the reason; studies record both. ``wire_format``: ``implied`` (the encoding
    the paper's byte counts imply: 99-octet reports, 56 octets per identity) or ``explicit`` (tag length octets and
    an epoch per span). ``variant``: ``paper`` or ``hardened`` (issue 27's N03-N05 closed). The scaling stage
    measures Table III in the chosen format and variant; attack_matrix runs both variants in the chosen format;
    the other AMORT-V1 stages measure the paper variant in the default format."""

    controller_path: Literal["reference", "native"] = "native"
    wire_format: Literal["implied", "explicit"] = "implied"
    variant: Literal["paper", "hardened"] = "paper"


class AttackMatrixParams(Strict):
    """AMORT-V1 Appendix A, Table VI: the attack matrix over the reference model."""

    n_devices: int = Field(default=4, ge=2, le=64)
    checkpoint_signer: Literal["ML-DSA-65"] = "ML-DSA-65"
    alternative_signer: Literal["SLH-DSA-SHA2-128f"] = "SLH-DSA-SHA2-128f"
    stream_records: int = Field(default=640, ge=1, le=1_000_000)  # P5: honest stream length
    stream_k: int = Field(default=64, ge=1, le=1_000_000)  # P5: checkpoint interval
    repeats: int = Field(default=1, ge=1, le=100)  # independent runs, each with its own seed and fresh keys
    # What the hardened variant costs (pqlab.experiments.hardening_cost), both variants alternating in each trial:
    cost_trials: int = Field(default=5, ge=1, le=1000)
    cost_identities: int = Field(default=1000, ge=1, le=100_000)  # reports per checkpoint (one per identity)
    cost_rounds: int = Field(default=3, ge=1, le=1000)  # checkpoints per trial
    cost_k: int = Field(default=64, ge=2, le=4096)  # reports per auditor interval (half of them the audited device's)
    cost_epochs: int = Field(default=5, ge=1, le=1000)  # epoch exchanges per trial
    # §IV-B: the deployment over which a truncated tag's online forgery probability is stated (10 000 controllers
    # reporting at 1 Hz for twenty years, one forgery attempt per verified tag)
    forgery_controllers: int = Field(default=10_000, ge=1, le=10**9)
    forgery_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)
    forgery_years: float = Field(default=20.0, gt=0.0, le=1000.0)

