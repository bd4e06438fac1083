"""Every pqm4 implementation's Cortex-M4 cycle counts, and the device cycle table a choice of implementation implies.

``params/pqm4_implementations.yaml`` lists, per algorithm of ``pqlab.case.algorithms``, each pqm4 implementation's
cycles (or ``pqm4_scheme: null`` with a note saying why there is no number). :func:`cycle_table` turns a device
choice — the fastest implementation per operation (the paper's rule), the portable C one (``clean``/``ref``, a
device without Cortex-M4 assembly) or one named implementation — plus a clock into the
:class:`pqlab.case.device_compute.CycleTable` the device-computation model reads. Cycle counts given directly
override pqm4's. An algorithm without a number stays without one: the model reports it, never guesses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from pqlab.case.device_compute import CLASSICAL, CycleTable
from pqlab.config import Strict, read_table
from pqlab.errors import ParamsError
from pqlab.validation import first_problem

IMPLEMENTATIONS_FILE = "pqm4_implementations.yaml"  # in the project's params/ folder
Operation = Literal["encaps", "decaps", "sign", "verify"]
OPERATIONS: tuple[str, ...] = ("encaps", "decaps", "sign", "verify")
FASTEST, PORTABLE = "fastest", "portable"
PORTABLE_NAMES = ("clean", "ref")  # PQClean's and the submitters' portable C, in that order of preference
NO_NUMBER = "no Cortex-M4 cycle count published"


class Pqm4Algorithm(Strict):
    """One algorithm: its pqm4 scheme (None: pqm4 has none) and each implementation's cycles per operation."""

    pqm4_scheme: str | None
    note: str | None = None
    implementations: dict[str, dict[Operation, int]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Pqm4Algorithm:
        if (self.pqm4_scheme is None) != (not self.implementations):
            raise ValueError("an algorithm has implementations exactly when it names a pqm4 scheme")
        if self.pqm4_scheme is None and not self.note:
            raise ValueError("an algorithm without a pqm4 scheme needs a note saying why")
        for name, cycles in self.implementations.items():
            if not cycles or any(value <= 0 for value in cycles.values()):
                raise ValueError(f"implementations.{name}: positive cycle counts expected")
        return self


class Pqm4Table(Strict):
    """The whole file: the pqm4 commit the numbers come from and every algorithm."""

    source_commit: str = Field(min_length=7)
    algorithms: dict[str, Pqm4Algorithm] = Field(min_length=1)

    def implementations(self, algorithm: str) -> tuple[str, ...]:
        return tuple(self.algorithms[algorithm].implementations) if algorithm in self.algorithms else ()

    def why_missing(self, algorithm: str) -> str:
        """Why an operation of ``algorithm`` has no cycle count (pqm4 has no scheme for it, and what it has)."""
        entry = self.algorithms.get(algorithm)
        if entry is None:
            return f"{NO_NUMBER}: {algorithm} is not in the pqm4 table"
        return entry.note if entry.pqm4_scheme is None and entry.note else NO_NUMBER


def load_implementations(path: str | Path) -> Pqm4Table:
    """Read and validate ``params/pqm4_implementations.yaml``; a bad entry is a ParamsError naming it."""
    return read_table(Pqm4Table, path, "pqm4 implementations table")


def _chosen(table: Pqm4Table, algorithm: str, implementation: str, field: str) -> dict[str, int]:
    """The cycles per operation of ``algorithm`` under the device's implementation choice ({} when pqm4 has none)."""
    entry = table.algorithms[algorithm]
    if not entry.implementations:
        return {}
    if implementation == FASTEST:
        best: dict[str, int] = {}
        for cycles in entry.implementations.values():
            for operation, value in cycles.items():
                best[operation] = min(value, best.get(operation, value))
        return best
    if implementation == PORTABLE:
        for name in PORTABLE_NAMES:
            if name in entry.implementations:
                return dict(entry.implementations[name])
        raise ParamsError(f"pqm4 has no portable C implementation ({' or '.join(PORTABLE_NAMES)}) of {algorithm}; "
                          f"it has {', '.join(entry.implementations)}", field=field)
    if implementation not in entry.implementations:
        raise ParamsError(f"pqm4 has no {implementation!r} implementation of {algorithm}; it has "
                          f"{', '.join(entry.implementations)} (or say fastest / portable)", field=field)
    return dict(entry.implementations[implementation])


def cycle_table(table: Pqm4Table, *, implementation: str = FASTEST, clock_mhz: float = 64.0,
                algorithms: Iterable[str] | None = None,
                cycles: Mapping[str, Mapping[str, int]] | None = None,
                controller_ms_per_message: float = 5.0, field: str = "device.implementation") -> CycleTable:
    """The device-computation table for one device: ``implementation`` (fastest / portable / a pqm4 name) for
    ``algorithms`` (default: all), at ``clock_mhz``; ``cycles`` (algorithm -> operation -> cycles) replaces
    pqm4's numbers where given. ParamsError, naming ``field``, for an implementation an algorithm lacks."""
    names = [a for a in (algorithms if algorithms is not None else table.algorithms) if a not in CLASSICAL]
    given = {name: dict(ops) for name, ops in (cycles or {}).items()}
    entries = {}
    for name in dict.fromkeys([*names, *given]):
        chosen = _chosen(table, name, implementation, field) if name in table.algorithms else {}
        chosen.update(given.get(name, {}))
        scheme = table.algorithms[name].pqm4_scheme if name in table.algorithms else None
        entries[name] = {"pqm4_scheme": scheme, "implementation": implementation,
                         **{op: chosen[op] for op in OPERATIONS if op in chosen}}
    try:
        return CycleTable.model_validate({"source_commit": table.source_commit, "clock_mhz": float(clock_mhz),
                                          "controller_ms_per_message": float(controller_ms_per_message),
                                          "algorithms": entries})
    except ValidationError as exc:
        raise ParamsError(first_problem(exc).line(), field="device") from None
