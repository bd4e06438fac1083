"""Raw samples of the measuring stages read back: the checks a raw file gets in place or on import
(:func:`verified`: content digest, provenance, stage, file, measurement parameters, columns), reading a stage's
whole set, and importing files measured on another machine.

A file edited on purpose comes in only through ``pqlab raw import --edited`` (:func:`import_edited`), which records
that it was edited by hand; every analysis output and metrics file it feeds carries that record (``hand_edited``),
and REPORT.md marks each row it feeds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from pqlab.errors import InputError, RawSamplesError, warn
from pqlab.io import copy_atomic, file_digest, read_parquet_checked, read_parquet_unchecked, write_parquet
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline.raw_provenance import differences, measurement_params, params_hash
from pqlab.pipeline.registry import MEASURING, RawSpec, raw_spec
from pqlab.provenance import EDITED_KEY, HAND_EDITED, PROVENANCE_KEY

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
        diff = differences(block["measurement_params"], current)
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
    if stage is not None and named != raw_spec(stage).stage:
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
    raw = raw_spec(stage)
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
