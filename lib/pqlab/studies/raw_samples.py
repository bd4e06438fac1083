"""Raw samples of the measuring stages: which files and parameters each owns, their provenance, writing, checked
reading and import from another machine.

A measuring study is two stages: ``measure_<stage>`` (``pqlab.studies.measure_<stage>``) runs the harness and
writes only ``data/raw/<file>.parquet``, each file carrying a provenance block (machine, load average, the
measurement parameters and their hash, seed, a measurement id shared by the files of one run); ``<stage>``
(``pqlab.studies.<stage>``) reads those files through :mod:`pqlab.io` (checksums checked) and computes every
statistic, table, figure and metric. The analysis refuses samples measured for another stage or with other
measurement parameters. The seed is provenance, not a parameter to match: samples measured elsewhere with another
seed are valid samples (and the report says where they came from).

A raw file in place and one being imported get the same checks (:func:`verified`): content digest, provenance,
stage, file, measurement parameters, columns. A file edited on purpose comes in only through
``pqlab raw import --edited`` (:func:`import_edited`), which records that it was edited by hand; every analysis
output and metrics file it feeds carries that record (``hand_edited``), and REPORT.md marks each row it feeds.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from pqlab import machine
from pqlab.errors import InputError, RawSamplesError, warn
from pqlab.io import copy_atomic, file_digest, read_parquet_checked, read_parquet_unchecked, write_parquet
from pqlab.params import StudyParams
from pqlab.params.loader import dump_all
from pqlab.paths import ProjectPaths
from pqlab.provenance import EDITED_KEY, HAND_EDITED, PROVENANCE_KEY
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult


@dataclass(frozen=True)
class RawSpec:
    """What one measuring stage writes: its files (each with the columns its analysis reads), the params sections
    its measurement reads, and the keys of those sections that only the analysis reads."""

    stage: str
    command: str                                  # the ``pqlab`` command (``pqlab <command> --measure-only``)
    files: dict[str, tuple[str, ...]]             # file name under data/raw -> columns the analysis needs
    sections: tuple[str, ...]                     # params sections the measurement reads (whole, minus below)
    analysis_keys: tuple[str, ...] = ()           # dotted keys (``costs.bootstrap_resamples``) only analysis reads

    @property
    def measure_stage(self) -> str:
        return f"measure_{self.stage}"

    def raw_paths(self, paths: ProjectPaths) -> list[Path]:
        return [paths.raw / name for name in self.files]


MEASURING: dict[str, RawSpec] = {spec.stage: spec for spec in (
    RawSpec("costs", "costs",
            {"costs.parquet": ("op_id", "operation", "frequency", "algorithm", "backend", "in_table1", "trial",
                               "net_ns", "overhead_ns")},
            ("costs",), ("costs.bootstrap_resamples", "costs.confidence")),
    RawSpec("amortisation", "amortisation",
            {"amortisation_sweep.parquet": ("scheme", "label", "signer", "backend", "durable_log", "storage", "k",
                                            "trial", "reports", "total_ns", "ingest_ns", "body_ns", "sign_ns",
                                            "commit_ns", "write_ns", "checkpoint_octets"),
             "amortisation_path_probe.parquet": ("signer", "k", "trial", "path_ns"),
             "amortisation_fsync_probe.parquet": ("signer", "touched", "trial", "checkpoint_octets", "ns"),
             "amortisation_sign_probe.parquet": ("signer", "backend", "trial", "message_octets", "ns"),
             "amortisation_checkpoint_sizes.parquet": ("signer", "touched", "checkpoint_octets"),
             "amortisation_sweep_plan.parquet": ("trial", "scheme", "k", "checkpoints", "target_half_width_pct",
                                                 "half_width_pct"),
             "amortisation_sensitivity_probe.parquet": ("combo", "signer", "backend", "storage", "c_sign_us",
                                                        "c_fsync_us"),
             "amortisation_sensitivity_sweep.parquet": ("scheme", "k", "trial", "reports", "total_ns"),
             "amortisation_omission.parquet": ("strategy", "k", "exposed", "delay_records",
                                               "checkpoints_until_exposed", "check"),
             "amortisation_equivocation.parquet": ("exposed", "exposed_by_gossip", "view_a_valid_alone",
                                                   "view_b_valid_alone", "variant")},
            ("amortisation", "amort"),
            ("amortisation.bootstrap_resamples", "amortisation.model_inputs", "amortisation.rates")),
    RawSpec("control_cycle", "control-cycle",
            {"control_cycle_samples.parquet": ("configuration", "cycle", "response_ns", "latency_ns", "execution_ns",
                                               "evidence", "evidence_ns")},
            ("control_cycle",),
            ("control_cycle.deadline_us", "control_cycle.bootstrap_resamples", "control_cycle.confidence")),
    RawSpec("device_origin", "device-origin",
            {"device_origin_auditor.parquet": ("k", "component", "us_per_report"),
             "device_origin_delays.parquet": ("k", "delay_records"),
             "device_origin_tags.parquet": ("tags", "us_per_report"),
             "device_origin_prover.parquet": ("one_tag_ns", "two_tag_ns"),
             "device_origin_chain_setup.parquet": ("chain_us_per_report",)},
            ("device_origin", "amort"), ("device_origin.report_rate_hz",)),
    RawSpec("full_image", "full-image",
            {"full_image_samples.parquet": ("condition", "repetition", "seconds", "octets", "files", "pages",
                                            "digest", "resident_before", "resident_after_eviction",
                                            "files_still_resident", "resident_after_read"),
             "full_image_evictions.parquet": ("repetition",)},
            ("full_image",), ("full_image.reference_operation",)),
    RawSpec("scaling", "scaling",
            {"scaling_rounds.parquet": ("identities", "trial"),
             "scaling_trials.parquet": ("identities", "trial", "us_per_report", "signature_octets",
                                        "checkpoint_octets", "verify_ms"),
             "scaling_rekey.parquet": ("identities", "rekey_us", "open_epoch_us", "confirm_us"),
             "scaling_replay.parquet": ("backlog", "trial", "merge_ns", "total_ns", "one_window"),
             "scaling_isolation.parquet": ("identities", "others", "others_attesting", "rekeyed")},
            ("scaling", "amort"),
            ("scaling.size_budget_octets", "scaling.bootstrap_resamples", "scaling.confidence")),
    RawSpec("recovery", "recovery",
            {"recovery_trials.parquet": ("arm", "scenario", "killed_by_sigkill", "new_epoch", "stale_detected",
                                         "resume_rejected", "reissued", "skipped", "ready_ms", "spawn_to_ready_ms"),
             "recovery_restart.parquet": ("trial", "epoch", "interrupted", "kill_point", "lost",
                                          "err_evidence_incomplete", "restart_rate_refused"),
             "recovery_crashes.parquet": ("case", "killed_by_sigkill", "outcome", "fails_secure_or_resumes"),
             "recovery_reservations.parquet": ("arm", "increment_ms", "read_ms", "write_ms", "total_ms")},
            ("recovery",), ("recovery.sizing",)),
    RawSpec("transport", "transport",
            {"thread_grid.parquet": ("point_id", "run"), "thread_grid_source_accurate.parquet": ("point_id", "run"),
             "thread_channel_rule.parquet": (), "thread_channel_rule_source_accurate.parquet": ()},
            ("thread", "inputs", "framing"), ("thread.bootstrap_resamples", "thread.confidence")),
    RawSpec("sensitivity", "sensitivity",
            {"sensitivity_runs.parquet": ("point_id", "run")},
            ("sensitivity", "thread", "inputs", "framing"),
            ("sensitivity.success_threshold", "sensitivity.report", "thread.bootstrap_resamples",
             "thread.confidence")),
    RawSpec("assumptions", "assumptions",
            {"assumptions_runs.parquet": ("point_id", "run")},
            ("assumptions", "thread", "inputs", "framing"),
            ("assumptions.bound_hops", "assumptions.count_tail", "thread.bootstrap_resamples", "thread.confidence")),
    RawSpec("transport_crosscheck", "transport-crosscheck",
            {"crosscheck_runs.parquet": ("simulator", "kind", "config", "role", "hops", "loss", "transport",
                                         "topology", "message", "run", "ok", "time_us", "failed_message",
                                         "retransmissions", "spurious", "frames"),
             "crosscheck_ns3_used.parquet": ("key", "value")},
            ("transport_crosscheck", "thread", "inputs", "framing"),
            ("transport_crosscheck.agreement_pct", "transport_crosscheck.chunk_runs", "thread.bootstrap_resamples",
             "thread.confidence")),
)}


def spec(stage: str) -> RawSpec:
    """The raw-sample spec of a measuring stage (RawSamplesError for any other stage)."""
    try:
        return MEASURING[stage]
    except KeyError:
        raise RawSamplesError(f"{stage!r} is not a measuring stage (measuring stages: {', '.join(MEASURING)})",
                              field="stage") from None


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


def _differences(recorded: Any, current: Any, prefix: str = "") -> list[str]:
    if isinstance(recorded, dict) and isinstance(current, dict):
        found = []
        for key in sorted(set(recorded) | set(current)):
            found += _differences(recorded.get(key), current.get(key), f"{prefix}{key}.")
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


# --- reading -----------------------------------------------------------------------------------------------------

def _provenance_of(path: Path, raw: RawSpec, block: Any) -> dict[str, Any]:
    needed = ("stage", "file", "measurement_id", "machine", "load_average", "measurement_params", "params_hash",
              "seed")
    if not isinstance(block, dict) or any(key not in block for key in needed):
        missing = needed if not isinstance(block, dict) else [k for k in needed if k not in block]
        raise RawSamplesError(f"no complete provenance block (missing {', '.join(missing)}): not a raw-sample file "
                              f"written by `pqlab {raw.command} --measure-only`", field=str(path))
    if block["params_hash"] != params_hash(block["measurement_params"]):
        raise RawSamplesError("its provenance block's params_hash does not match its measurement_params",
                              field=str(path))
    return block


def check_matches(raw: RawSpec, settings: StudyParams, block: dict[str, Any], path: Path,
                  file: str | None = None) -> None:
    """The samples were measured for this stage and file with this project's measurement parameters."""
    if block["stage"] != raw.stage:
        raise RawSamplesError(f"measured for stage {block['stage']!r}, not {raw.stage!r}", field=str(path))
    if file is not None and block["file"] != file:
        raise RawSamplesError(f"holds {block['file']!r} of stage {raw.stage}, not {file!r}", field=str(path))
    current = measurement_params(raw, settings)
    if block["params_hash"] != params_hash(current):
        diff = _differences(block["measurement_params"], current)
        raise RawSamplesError(f"measured with other measurement parameters ({'; '.join(diff[:3])}"
                              f"{f'; and {len(diff) - 3} more' if len(diff) > 3 else ''}): rerun "
                              f"`dvc repro {raw.measure_stage}` or set the same values", field=str(path))


def _check_columns(raw: RawSpec, name: str, frame: pd.DataFrame, path: Path) -> None:
    missing = [column for column in raw.files[name] if column not in frame.columns]
    if missing:
        raise RawSamplesError(f"lacks the column(s) {', '.join(missing)} the {raw.stage} analysis reads",
                              field=str(path))


@dataclass(frozen=True)
class Verified:
    """A raw file that passed :func:`verified`: its stage, samples, ``pqlab`` metadata and provenance block."""

    raw: RawSpec
    frame: pd.DataFrame
    metadata: dict[str, Any]
    block: dict[str, Any]


def verified(path: Path, settings: StudyParams, *, stage: str | None = None, file: str | None = None) -> Verified:
    """Every check a raw-sample file gets, in place (the analysis) or on import: its content matches the SHA-256 it
    carries, its provenance block is complete and names a measuring stage (``stage``, when given) and one of that
    stage's files (``file``, when given), it was measured with this project's measurement parameters, and it holds
    the columns the analysis reads. A file without a digest or provenance is an UnverifiedInputError; the rest are
    RawSamplesError / InputError naming the file."""
    remedy = MEASURING[stage].measure_stage if stage in MEASURING else None
    frame, metadata = read_parquet_checked(path, "raw samples", stage=remedy)
    block = metadata.get(PROVENANCE_KEY)
    named = block.get("stage") if isinstance(block, dict) else None
    if named not in MEASURING:
        raise RawSamplesError(f"names no measuring stage (stage {named!r}): not a raw-sample file", field=str(path))
    if stage is not None and named != spec(stage).stage:
        raise RawSamplesError(f"measured for stage {named!r}, not {stage!r}", field=str(path))
    raw = MEASURING[named]
    block = _provenance_of(path, raw, block)
    if block["file"] not in raw.files:
        raise RawSamplesError(f"holds {block['file']!r}, which stage {named} does not write", field=str(path))
    check_matches(raw, settings, block, path, file)
    _check_columns(raw, block["file"], frame, path)
    return Verified(raw, frame, metadata, block)


def read(raw: RawSpec, settings: StudyParams, paths: ProjectPaths) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Every raw file of the stage, checked as an import is (:func:`verified`) and from one measurement, and the
    metadata of the measurement (the first file's), with ``hand_edited``: the files imported as edited by hand."""
    frames: dict[str, pd.DataFrame] = {}
    first: dict[str, Any] | None = None
    edited: list[str] = []
    for name in raw.files:
        path = paths.raw / name
        if not path.exists():
            raise missing_error(raw, path)
        checked = verified(path, settings, stage=raw.stage, file=name)
        if first is not None and checked.block["measurement_id"] != first[PROVENANCE_KEY]["measurement_id"]:
            raise RawSamplesError("comes from another measurement than the stage's other raw files: import or "
                                  "measure the whole set", field=str(path))
        frames[name] = checked.frame
        edited += [name] if checked.block.get(EDITED_KEY) else []
        first = first or checked.metadata
    assert first is not None
    return frames, first | {HAND_EDITED: edited}


def read_named(raw: RawSpec, settings: StudyParams, paths: ProjectPaths,
               *names: str) -> tuple[list[pd.DataFrame], dict[str, Any]]:
    """:func:`read`, with the frames of ``<stage>_<name>.parquet`` for ``names``, in that order."""
    frames, metadata = read(raw, settings, paths)
    return [frames[f"{raw.stage}_{name}.parquet"] for name in names], metadata


def missing_error(raw: RawSpec, path: Path) -> RawSamplesError:
    return RawSamplesError(f"no raw samples: run `dvc repro {raw.measure_stage}` or `pqlab {raw.command} "
                           f"--measure-only`, or `pqlab raw import FILE`", field=str(path))


def needs_measuring(raw: RawSpec, settings: StudyParams, paths: ProjectPaths) -> str | None:
    """Why the stage must measure before it can analyse (None: its raw files are in place and match, seed too)."""
    for name in raw.files:
        path = paths.raw / name
        if not path.exists():
            return f"{path} does not exist"
        try:
            block = verified(path, settings, stage=raw.stage, file=name).block
        except RawSamplesError as exc:  # another stage's, other parameters: measure anew
            return str(exc)
        except InputError as exc:  # unreadable, edited in place (no digest, another digest): never used; say so
            warn(f"{exc}; measuring anew replaces it")
            return str(exc)
        if block["seed"] != settings.seed:
            return f"{path} was measured with seed {block['seed']}, not {settings.seed}"
    return None


def prepare(stage: str, settings: StudyParams, paths: ProjectPaths, *, analyse_only: bool,
            progress: bool = True, **measure_options: Any) -> list[Path]:
    """Before an analysis: with ``analyse_only`` (the pipeline) only check the raw files exist; otherwise measure
    first when they are missing or do not match (``pqlab.studies.measure_<stage>``, imported only then, so the
    analysis stage's import closure holds no measurement code). Returns the raw files it wrote."""
    raw = spec(stage)
    if analyse_only:
        for path in raw.raw_paths(paths):
            if not path.exists():
                raise missing_error(raw, path)
        return []
    if needs_measuring(raw, settings, paths) is None:
        return []
    measure = importlib.import_module(f"pqlab.studies.{raw.measure_stage}").measure
    return measure(settings, paths, progress=progress, **measure_options)


def measured_then_analysed(stage: str, analyse: Callable[..., StudyResult],
                           settings: StudyParams, paths: ProjectPaths, *, analyse_only: bool,
                           progress: bool = True, **measure_options: Any) -> StudyResult:
    """A measuring study's ``run``: :func:`prepare` (measure if needed, unless ``analyse_only``), then
    ``analyse(settings, paths, progress=...)``; the result lists the raw files it measured before the analysis
    outputs."""
    measured = prepare(stage, settings, paths, analyse_only=analyse_only, progress=progress, **measure_options)
    result = analyse(settings, paths, progress=progress)
    result.files[:0] = measured
    return result


def runner(stage: str, analyse: Callable[..., StudyResult]) -> Callable[..., StudyResult]:
    """The ``run(settings, paths, *, progress=True, analyse_only=False, **measure_options)`` of a measuring study's
    module: measure when the raw samples are missing or do not match (never with ``analyse_only``; the options, such
    as ``workers``, go to the measurement), then ``analyse``."""

    def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True, analyse_only: bool = False,
            **measure_options: Any) -> StudyResult:
        return measured_then_analysed(stage, analyse, settings, paths, analyse_only=analyse_only, progress=progress,
                                      **measure_options)

    run.__doc__ = runner.__doc__
    return run


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


# --- import ------------------------------------------------------------------------------------------------------

def import_file(file: str | Path, settings: StudyParams, paths: ProjectPaths, stage: str | None = None) -> Path:
    """Validate a raw file measured elsewhere (:func:`verified`: the same checks as a file in place) and put it
    in place under data/raw atomically; with ``stage``, it must have been measured for that stage."""
    source_path = Path(file)
    if not source_path.is_file():
        raise RawSamplesError("no such file", field=str(source_path))
    checked = verified(source_path, settings, stage=stage)
    return copy_atomic(source_path, paths.raw / checked.block["file"])


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def import_edited(file: str | Path, settings: StudyParams, paths: ProjectPaths, stage: str | None = None,
                  name: str | None = None) -> Path:
    """Put a raw file edited by hand (a pandas round trip, a changed value) in place, recorded as edited.

    Its digest may be missing or stale; its provenance comes from the file itself when complete, else from the raw
    file it replaces under data/raw (which must pass :func:`verified`). The stage and file name come from that
    provenance, ``stage`` / ``name``, the stage's only raw file or the file's own name. The edited samples must still
    hold the analysis's columns and be measured with this project's measurement parameters; they are written with a
    fresh digest and the provenance block gains ``edited_by_hand`` (from where, its SHA-256, when), which every
    output they feed carries on."""
    source_path = Path(file)
    if not source_path.is_file():
        raise RawSamplesError("no such file", field=str(source_path))
    frame, own = read_parquet_unchecked(source_path, "edited raw samples")
    block = own.get(PROVENANCE_KEY) if isinstance(own.get(PROVENANCE_KEY), dict) else {}
    stage = stage or block.get("stage")
    if stage is None:
        raise RawSamplesError("carries no provenance naming its stage: give --stage (one of "
                              f"{', '.join(MEASURING)})", field=str(source_path))
    raw = spec(stage)
    name = name or block.get("file") or (next(iter(raw.files)) if len(raw.files) == 1 else source_path.name)
    if name not in raw.files:
        raise RawSamplesError(f"{name!r} is not a raw file of stage {raw.stage} ({', '.join(raw.files)}): give "
                              "--as NAME", field=str(source_path))
    try:
        metadata, template = own, _provenance_of(source_path, raw, block)
    except RawSamplesError:  # no complete provenance of its own: take the one of the file it replaces
        target = paths.raw / name
        if not target.exists():
            raise RawSamplesError(f"carries no complete provenance and {target} does not exist to take it from: "
                                  f"measure or import the original first", field=str(source_path)) from None
        checked = verified(target, settings, stage=raw.stage, file=name)
        metadata, template = checked.metadata, checked.block
    if template["stage"] != raw.stage or template["file"] != name:
        raise RawSamplesError(f"its provenance names {template['stage']}/{template['file']}, not {raw.stage}/{name}",
                              field=str(source_path))
    check_matches(raw, settings, template, source_path, name)
    _check_columns(raw, name, frame, source_path)
    record = {"imported_from": str(source_path.resolve()), "source_sha256": file_digest(source_path),
              "imported_utc": _utc_now(), "previous": template.get(EDITED_KEY)}
    block = {**template, EDITED_KEY: record}
    return write_parquet(paths.raw / name, frame, {**metadata, PROVENANCE_KEY: block})
