"""The recovery experiment's typed config: the TPM, reservation window, restart limits and §V-H sizing."""

from __future__ import annotations

from pydantic import Field

from pqlab.amort.config import CheckpointSigner
from pqlab.config import Strict


class RecoverySizingParams(Strict):
    """§V-H sizing: the NV-write budget, report rate and service life that fix the minimum reservation window."""

    nv_write_budget: int = Field(default=500_000, ge=1, le=10**12)  # "an assumed NV-write budget of 5 × 10^5"
    report_rate_hz: float = Field(default=1.0, gt=0.0, le=1e6)
    service_years: float = Field(default=10.0, gt=0.0, le=100.0)
    days_per_year: float = Field(default=365.0, ge=365.0, le=366.0)


class RecoveryParams(Strict):
    """AMORT-V1 §IV-E, §V-H: restart and rollback-safe recovery with a real TPM 2.0 (Table IV, RQ3)."""

    tpm: str = Field(default="swtpm", pattern=r"^(swtpm|device:/\S+)$")  # swtpm | device:/dev/tpmrm0
    nv_index: int = Field(default=0x01800100, ge=0x01000000, le=0x01FFFFFF)  # owner-range NV counter index
    window: int = Field(default=64, ge=2, le=1 << 20)  # R: sequence numbers per reservation
    k: int = Field(default=64, ge=1, le=1 << 20)  # checkpoint interval of the restart experiment
    rollback_depth: int = Field(default=2, ge=1, le=64)  # the stale state is this many reservations behind
    interrupted_epochs: int = Field(default=2, ge=1, le=20)  # SIGKILLed epochs per restart trial, then a clean one
    restart_max_reports: int = Field(default=256, ge=1, le=1 << 20)  # kill point drawn (seeded) from 1..this
    clean_checkpoints: int = Field(default=2, ge=1, le=1000)  # the clean epoch sends this many × k reports
    max_restarts: int = Field(default=3, ge=1, le=1000)  # controller: ERR_RESTART_RATE beyond this many opens
    restart_window_ms: int = Field(default=60_000, ge=1, le=10**9)
    checkpoint_signer: CheckpointSigner = "ML-DSA-65"
    sizing: RecoverySizingParams = Field(default_factory=RecoverySizingParams)
    trials: int = Field(default=1, ge=1, le=100_000)  # per Table IV cell (arm × restart/rollback)
    restart_trials: int = Field(default=1, ge=1, le=100_000)
    crash_trials: int = Field(default=1, ge=1, le=100_000)  # per crash-injection point
    reservation_samples: int = Field(default=10, ge=1, le=1_000_000)

