"""The transport study's inputs for Table I configurations, taken from the CASE size and device-compute models.

Sizes are ``len()`` of the messages pqlab.case encodes (Matter payloads; the transport model adds
``framing.matter_header_bytes`` of Matter message header to each); device computation is the responder's
post-quantum work from pqm4 cycle counts, split by when it runs: before Sigma2 (encapsulation, signing or
KEM-PDK decapsulation) and after Sigma3, i.e. before the status report (decapsulation, chain and Sigma3
signature verification). This is the order ``Scenario.device_compute_ms`` expects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pqlab.case.configurations import TABLE1, CaseConfigError, case_message_sizes, table1_config
from pqlab.case.device_compute import CycleTable, device_pq_ms_by_phase, load_cycles
from pqlab.config import name_problem, read_yaml
from pqlab.errors import ParamsError

SIZE_KEYS = ("Sigma1", "Sigma2", "Sigma3", "StatusReport")
MAX_CONFIGS = 1000              # a --configs file's entries (Table I has 15); each one is a whole grid of runs
MAX_CONFIGS_BYTES = 256 << 10   # 256 KiB: ~1,000 entries of one line each, with room for comments


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
                              field="transport.configurations") from exc
        sizes = case_message_sizes(config)
        configs[name] = tuple(sizes[key] for key in SIZE_KEYS)
        phases = device_pq_ms_by_phase(config, table)
        compute[name] = (phases["before Sigma2"], phases["after Sigma3"])
    return configs, compute


def load_configs(path: str | Path) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[float, float]]]:
    """Read ``name: {sizes: [s1, s2, s3, status], device_compute_ms: [before Sigma2, before status]}``
    (YAML or JSON; sizes from the CASE size model; at most ``MAX_CONFIGS`` entries in ``MAX_CONFIGS_BYTES``).
    Malformed entries raise ParamsError naming them."""
    return parse_configs(read_yaml(path, "configurations file", max_bytes=MAX_CONFIGS_BYTES), str(path))


def parse_configs(data: Any, source: str = "configurations") -> tuple[dict[str, tuple[int, ...]],
                                                                     dict[str, tuple[float, float]]]:
    """Validate a configurations document (see :func:`load_configs`); anything else is one ParamsError."""
    if not isinstance(data, dict) or not data:
        raise ParamsError("must map configuration names to their sizes", field=source)
    if len(data) > MAX_CONFIGS:
        raise ParamsError(f"holds {len(data):,} configurations; at most {MAX_CONFIGS:,} are accepted (each one is a "
                          "whole grid of simulated handshakes)", field=source)
    configs, compute = {}, {}
    for name, entry in data.items():
        where = f"{source}: {_short(name)}"
        if not isinstance(name, str | int) or isinstance(name, bool):
            raise ParamsError("configuration names are strings", field=where)
        problem = name_problem(str(name))
        if problem:
            raise ParamsError(problem, field=where)
        if not isinstance(entry, dict) or set(entry) - {"sizes", "device_compute_ms"} or "sizes" not in entry:
            raise ParamsError("expected {sizes: [4 ints], device_compute_ms: [2 numbers]}", field=where)
        sizes = entry["sizes"]
        if not (isinstance(sizes, list) and len(sizes) == 4 and all(type(s) is int and 0 < s < 1 << 24 for s in sizes)):
            raise ParamsError(f"sizes: four positive integers below 2^24 expected, got {_short(sizes)}", field=where)
        cost = entry.get("device_compute_ms", [0.0, 0.0])
        finite = isinstance(cost, list) and all(type(c) in (int, float) and math.isfinite(c) and 0 <= c <= 1e6
                                                for c in cost)
        if not (finite and len(cost) == 2):
            raise ParamsError(f"device_compute_ms: two finite numbers in 0..1e6 expected, got {_short(cost)}",
                              field=where)
        if str(name) in configs:
            raise ParamsError("listed twice", field=where)
        configs[str(name)] = tuple(sizes)
        compute[str(name)] = (float(cost[0]), float(cost[1]))
    return configs, compute


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
