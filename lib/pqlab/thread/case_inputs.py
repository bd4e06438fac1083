"""The transport study's inputs for Table I configurations, taken from the CASE size and device-compute models.

Sizes are ``len()`` of the messages pqlab.case encodes (Matter payloads; the transport model adds
``thread.matter_overhead_bytes`` of Matter message header to each); device computation is the responder's
post-quantum work from pqm4 cycle counts, split by when it runs: before Sigma2 (encapsulation, signing or
KEM-PDK decapsulation) and after Sigma3, i.e. before the status report (decapsulation, chain and Sigma3
signature verification). This is the order ``Scenario.device_compute_ms`` expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pqlab.case.configurations import TABLE1, CaseConfigError, case_message_sizes, table1_config
from pqlab.case.device_compute import CycleTable, device_pq_ms_by_phase, load_cycles
from pqlab.errors import ParamsError

SIZE_KEYS = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")


def table1_inputs(
    names: Sequence[str], cycles: CycleTable | str | Path
) -> tuple[dict[str, tuple[int, int, int, int]], dict[str, tuple[float, float]]]:
    """``(configs, device_compute_ms)`` for ``study.run``: name -> four message sizes, name -> (before Sigma2,
    before the status report) in ms. An unknown name or a bad cycles file raises ParamsError naming it."""
    table = cycles if isinstance(cycles, CycleTable) else load_cycles(cycles)
    configs, compute = {}, {}
    for name in names:
        try:
            config = table1_config(name)
        except CaseConfigError as exc:
            known = ", ".join(c.name for c in TABLE1)
            raise ParamsError(f"no Table I configuration {name!r}; known: {known}",
                              field="thread.configurations") from exc
        sizes = case_message_sizes(config)
        configs[name] = tuple(sizes[key] for key in SIZE_KEYS)
        phases = device_pq_ms_by_phase(config, table)
        compute[name] = (phases["before Sigma2"], phases["after Sigma3"])
    return configs, compute
