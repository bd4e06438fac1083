"""Responder-side post-quantum computation of a CASE handshake, from pqm4 Cortex-M4 cycle counts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pqlab.case.configurations import CaseConfig
from pqlab.config import read_table
from pqlab.errors import ParamsError

CLASSICAL = frozenset({"P-256", "ECDSA-P256", "ECDH-P256"})


class _Cycles(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    pqm4_scheme: str | None
    implementation: str | None = None
    encaps: int | None = Field(default=None, gt=0)
    decaps: int | None = Field(default=None, gt=0)
    sign: int | None = Field(default=None, gt=0)
    verify: int | None = Field(default=None, gt=0)


class CycleTable(BaseModel):
    """Cycle counts per algorithm and operation, the clock to scale them by, and their source."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    source_commit: str
    clock_mhz: float = Field(gt=0)
    controller_ms_per_message: float = Field(ge=0)
    algorithms: dict[str, _Cycles]

    def milliseconds(self, algorithm: str, operation: str) -> float | None:
        """Time of one operation at ``clock_mhz``; 0 for classical ECC; None when pqm4 has no number.

        A composite (hybrid) algorithm such as ``ECDSA-P256+ML-DSA-44`` costs the sum of its parts.
        """
        if "+" in algorithm:
            parts = [self.milliseconds(part, operation) for part in algorithm.split("+")]
            return None if None in parts else sum(p for p in parts if p is not None)
        if algorithm in CLASSICAL:
            return 0.0
        if algorithm not in self.algorithms:
            raise ParamsError(f"no cycle counts for {algorithm!r}", field="pqm4_cycles.algorithms")
        cycles = getattr(self.algorithms[algorithm], operation)
        return None if cycles is None else cycles / (self.clock_mhz * 1e3)


def load_cycles(path: str | Path) -> CycleTable:
    """Read and validate ``params/pqm4_cycles.yaml``."""
    return read_table(CycleTable, path, "cycle table")


@dataclass(frozen=True)
class Operation:
    """One responder operation: when it runs, with which algorithm, and why."""

    phase: Literal["before Sigma2", "after Sigma3"]
    algorithm: str
    operation: Literal["encaps", "decaps", "sign", "verify"]
    purpose: str


def responder_operations(config: CaseConfig) -> list[Operation]:
    """Every public-key operation the responder (the Thread device) performs, classical ones included.

    Before Sigma2: encapsulate to the initiator's ephemeral KEM share; sign with the NOC key
    (signature authentication) or decapsulate the initiator's Sigma1 encapsulation (KEM-PDK).
    After Sigma3: decapsulate the Sigma3 ciphertext (KEM authentication); verify the initiator's
    NOC under its issuer and the ICAC under the RCAC unless the initiator's chain is cached;
    verify the initiator's Sigma3 signature. Both parties' chains use the same algorithms.
    """
    operations: list[Operation] = []
    for part in config.key_exchange.split("+"):
        if part not in CLASSICAL:
            operations.append(Operation("before Sigma2", part, "encaps", "ephemeral key exchange"))
    if config.auth == "sig":
        operations.append(Operation("before Sigma2", config.noc, "sign", "Sigma2 signature"))
    elif config.auth == "kem-pdk":
        operations.append(Operation("before Sigma2", config.responder_kem, "decaps",
                                    "Sigma1 encapsulation to the NOC key"))
    else:
        operations.append(Operation("after Sigma3", config.responder_kem, "decaps",
                                    "Sigma3 encapsulation to the NOC key"))
    if config.cached != "both":
        issuer = config.icac or config.rcac
        operations.append(Operation("after Sigma3", issuer, "verify", "initiator NOC"))
        if config.icac:
            operations.append(Operation("after Sigma3", config.rcac, "verify", "initiator ICAC"))
    operations.append(Operation("after Sigma3", config.noc, "verify", "Sigma3 signature"))
    return operations


@dataclass(frozen=True)
class DeviceCost:
    """Responder PQ milliseconds, and the operations pqm4 has no number for (counted as 0)."""

    milliseconds: float
    unmeasured: tuple[str, ...]


def device_pq_ms(config: CaseConfig, table: CycleTable) -> DeviceCost:
    """Sum the responder's post-quantum operations' time at the table's clock; classical ECC is excluded."""
    total, unmeasured = 0.0, []
    for op in responder_operations(config):
        ms = table.milliseconds(op.algorithm, op.operation)
        if ms is None:
            unmeasured.append(f"{op.algorithm} {op.operation}")
        else:
            total += ms
    return DeviceCost(total, tuple(unmeasured))


def device_pq_ms_by_phase(config: CaseConfig, table: CycleTable) -> dict[str, float]:
    """Responder PQ milliseconds before Sigma2 and after Sigma3 (unmeasured operations count 0)."""
    phases = {"before Sigma2": 0.0, "after Sigma3": 0.0}
    for op in responder_operations(config):
        phases[op.phase] += table.milliseconds(op.algorithm, op.operation) or 0.0
    return phases
