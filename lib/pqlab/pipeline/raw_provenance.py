"""Raw samples' provenance: the measurement and analysis parameters of a measuring stage, the block every raw file
carries (machine, load average, measurement parameters and their hash, seed, measurement id), writing a
measurement's files as one set, and the provenance an analysis output and a metrics file carry on.

The seed is provenance, not a parameter to match: samples measured elsewhere with another seed are valid samples
(and the report says where they came from)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
from pathlib import Path
from typing import Any

import pandas as pd

from pqlab import machine
from pqlab.errors import RawSamplesError
from pqlab.params import StudyParams
from pqlab.params.loader import dump_all
from pqlab.paths import ProjectPaths
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.registry import RawSpec
from pqlab.provenance import HAND_EDITED, PROVENANCE_KEY

# --- parameters --------------------------------------------------------------------------------------------------

def _drop(tree: dict[str, Any], dotted: str) -> None:
    *parents, leaf = dotted.split(".")
    node: Any = tree
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(leaf, None)


def is_analysis_key(raw: RawSpec, dotted: str) -> bool:
    """Whether a params.yaml key path (``costs.bootstrap_resamples``, ``costs.profiles.quick.bootstrap_resamples``)
    is one of the stage's analysis keys or inside one."""
    parts = dotted.split(".")
    plain = ".".join([parts[0], *parts[3:]]) if len(parts) > 2 and parts[1] == "profiles" else dotted
    return any(plain == key or plain.startswith(key + ".") for key in raw.analysis_keys)


def measurement_params(raw: RawSpec, settings: StudyParams) -> dict[str, Any]:
    """The parameters that shape the samples: the stage's sections without the analysis-only keys."""
    dumped = dump_all(settings)  # sections kept out of model_dump included
    chosen = {section: dumped[section] for section in raw.sections}
    for key in raw.analysis_keys:
        _drop(chosen, key)
    return chosen


def analysis_params(raw: RawSpec, settings: StudyParams) -> dict[str, Any]:
    """The analysis-only keys and their values (recorded beside every analysis output)."""
    dumped = dump_all(settings)  # sections kept out of model_dump included
    out: dict[str, Any] = {"seed": settings.seed, "profile": settings.profile}
    for key in raw.analysis_keys:
        node: Any = dumped
        for part in key.split("."):
            node = node[part]
        out[key] = node
    return out


def params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def differences(recorded: Any, current: Any, prefix: str = "") -> list[str]:
    if isinstance(recorded, dict) and isinstance(current, dict):
        found = []
        for key in sorted(set(recorded) | set(current)):
            found += differences(recorded.get(key), current.get(key), f"{prefix}{key}.")
        return found
    return [] if recorded == current else [f"{prefix.rstrip('.')} = {json.dumps(recorded)} there, "
                                           f"{json.dumps(current)} here"]


# --- provenance --------------------------------------------------------------------------------------------------

def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load average, two decimals."""
    return [round(x, 2) for x in os.getloadavg()]


def provenance(raw: RawSpec, settings: StudyParams, load_before: list[float], file: str,
               measurement_id: str) -> dict[str, Any]:
    """The block every raw file carries: stage, file, machine, load average, measurement params and hash, seed."""
    chosen = measurement_params(raw, settings)
    return {"stage": raw.stage, "file": file, "measurement_id": measurement_id, "machine": socket.gethostname(),
            "cpu_model": machine.cpu_model(), "load_average": {"before": load_before, "after": load_average()},
            "profile": settings.profile, "seed": settings.seed, "measurement_params": chosen,
            "params_hash": params_hash(chosen)}


def write(raw: RawSpec, settings: StudyParams, paths: ProjectPaths, frames: dict[str, pd.DataFrame],
          metadata: dict[str, Any], load_before: list[float]) -> list[Path]:
    """Write every raw file of one measurement as one set (all or none), each with its provenance block."""
    if set(frames) != set(raw.files):
        raise RawSamplesError(f"a measurement gave {sorted(frames)}, the spec names {sorted(raw.files)}",
                              field=raw.measure_stage)
    measurement_id = secrets.token_hex(8)
    metadata = metadata | {"params": measurement_params(raw, settings)}
    with OutputSet(paths, raw.measure_stage) as out:
        for name, frame in frames.items():
            out.parquet(paths.raw / name, frame,
                        metadata | {PROVENANCE_KEY: provenance(raw, settings, load_before, name, measurement_id)})
    return out.written


def analysis_metadata(raw_metadata: dict[str, Any], raw: RawSpec, settings: StudyParams) -> dict[str, Any]:
    """The metadata block of an analysis output: the measurement's own (machine, time, provenance), the analysis
    parameters and the code that analysed it — no clock, so the same samples and params give the same bytes. The
    provenance block moves to ``measured``: an analysis output can never pass for a raw file."""
    commit = machine.git_commit()
    measured = {key: value for key, value in raw_metadata.items() if key != PROVENANCE_KEY}
    return measured | {"measured": raw_metadata[PROVENANCE_KEY], "analysis": {"params": analysis_params(raw, settings),
                                        "source_fingerprint": machine.source_fingerprint(),
                                        "git_commit": commit.removesuffix("-dirty") if commit else None}}


def source(raw_metadata: dict[str, Any], upstream_edited: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Where and when the samples were measured, for the stage's metrics and REPORT.md's header; ``hand_edited``
    lists the raw files imported as edited by hand, this stage's and (``upstream_edited``) those of the derived
    inputs it read."""
    block = raw_metadata[PROVENANCE_KEY]
    return {"machine": block["machine"], "cpu_model": str(block.get("cpu_model") or "unknown"),
            "measured_utc": str(raw_metadata.get("timestamp_utc") or "unknown"),
            "load_average": {"before": [float(x) for x in block["load_average"]["before"]],
                             "after": [float(x) for x in block["load_average"]["after"]]},
            "seed": int(block["seed"]), "profile": str(block.get("profile") or "unknown"),
            HAND_EDITED: [*raw_metadata.get(HAND_EDITED, []), *upstream_edited]}

