"""Sequence reservation: the prover may issue numbers up to ``reserved_hi`` and extends it R at a time.

Three arms (§IV-E, §V-H):
- ``fresh``: no reservation; a restart always opens a new epoch (only the epoch number is stored, once per epoch).
- ``naive``: the reservation lives in the state file alone; a restart resumes after the stored ``reserved_hi``.
- ``tpm``: each reservation first increments a TPM NV counter, then stores the counter value with the new
  ``reserved_hi``; a restart resumes only if the stored value equals the TPM's, and otherwise fails secure
  (fresh-epoch recovery). Increment-then-write means a crash between the two leaves the file behind the TPM.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pqlab.amort.device import EpochSecrets
from pqlab.amort.recovery.state import ProverState, write_state
from pqlab.amort.recovery.tpm import NvCounter

Hook = Callable[[str], None]


def _no_hook(name: str) -> None:
    return None


@dataclass(frozen=True)
class Reservation:
    """One completed reservation: the new durable state and what each step cost (ns)."""

    state: ProverState
    increment_ns: int = 0
    read_ns: int = 0
    write_ns: int = 0
    total_ns: int = 0


@dataclass(frozen=True)
class Verdict:
    """What a restarted prover may do with the state it found: resume after ``resume_after`` or open a new epoch."""

    resume: bool
    stale: bool
    reason: str
    tpm_counter: int | None = None
    check_ns: int = 0


class Reserver:
    """The unanchored scheme (arm ``naive``): a reservation is one durable state-file replacement."""

    arm = "naive"
    reserves = True

    def __init__(self, path: Path, window: int, hook: Hook | None = None) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.path = path
        self.window = window
        self.hook = hook or _no_hook

    def _write(self, state: ProverState) -> int:
        t0 = time.perf_counter_ns()
        write_state(self.path, state, self.hook)
        elapsed = time.perf_counter_ns() - t0
        self.hook("state_durable")
        return elapsed

    def store_epoch(self, dev_id: bytes, secrets: EpochSecrets) -> Reservation:
        """After EPOCH_OPEN: the first window [1, R]."""
        return self.reserve(dev_id, secrets, 0)

    def reserve(self, dev_id: bytes, secrets: EpochSecrets, reserved_hi: int) -> Reservation:
        """Extend the reservation from ``reserved_hi`` to ``reserved_hi + R``, durably, before any number in it."""
        t0 = time.perf_counter_ns()
        self.hook("before_reservation")
        state = ProverState.for_epoch(self.arm, dev_id, secrets, secrets.epoch, reserved_hi=reserved_hi + self.window)
        write_ns = self._write(state)
        return Reservation(state, write_ns=write_ns, total_ns=time.perf_counter_ns() - t0)

    def check(self, state: ProverState) -> Verdict:
        """Unanchored: whatever the file says is believed."""
        return Verdict(True, False, "state file believed (no anchor)")


class FreshEpoch(Reserver):
    """Fresh-epoch recovery: the file holds the epoch number only; nothing is reserved, nothing resumed."""

    arm = "fresh"
    reserves = False

    def store_epoch(self, dev_id: bytes, secrets: EpochSecrets) -> Reservation:
        t0 = time.perf_counter_ns()
        state = ProverState.for_epoch(self.arm, dev_id, None, secrets.epoch)
        write_ns = self._write(state)
        return Reservation(state, write_ns=write_ns, total_ns=time.perf_counter_ns() - t0)

    def reserve(self, dev_id: bytes, secrets: EpochSecrets, reserved_hi: int) -> Reservation:
        raise ValueError("the fresh-epoch arm does not reserve sequence numbers")

    def check(self, state: ProverState) -> Verdict:
        return Verdict(False, False, "fresh-epoch recovery always opens a new epoch")


class TpmReserver(Reserver):
    """TPM-anchored reservation: NV_Increment, read the counter back, then store (counter, reserved_hi)."""

    arm = "tpm"

    def __init__(self, path: Path, window: int, counter: NvCounter, hook: Hook | None = None) -> None:
        super().__init__(path, window, hook)
        self.counter = counter

    def reserve(self, dev_id: bytes, secrets: EpochSecrets, reserved_hi: int) -> Reservation:
        t0 = time.perf_counter_ns()
        self.hook("before_reservation")
        self.hook("before_increment")
        self.counter.increment()
        t1 = time.perf_counter_ns()
        self.hook("after_increment")
        t2 = time.perf_counter_ns()
        value = self.counter.read()
        t3 = time.perf_counter_ns()
        if value is None:
            raise RuntimeError("the TPM counter reads as unwritten right after an increment")
        state = ProverState.for_epoch(self.arm, dev_id, secrets, secrets.epoch, reserved_hi=reserved_hi + self.window,
                                      counter=value)
        write_ns = self._write(state)
        return Reservation(state, increment_ns=t1 - t0, read_ns=t3 - t2, write_ns=write_ns,
                           total_ns=time.perf_counter_ns() - t0 - (t2 - t1))

    def check(self, state: ProverState) -> Verdict:
        """Resume only if the file carries the TPM's current counter value; anything else is stale (fail secure)."""
        t0 = time.perf_counter_ns()
        value = self.counter.read()
        elapsed = time.perf_counter_ns() - t0
        if value is not None and state.counter == value:
            return Verdict(True, False, "state matches the TPM counter", value, elapsed)
        if value is not None and state.counter < value:
            reason = f"stale state: file counter {state.counter} < TPM counter {value}"
        else:
            reason = f"state does not match the TPM: file counter {state.counter}, TPM {value}"
        return Verdict(False, True, reason, value, elapsed)
