"""Load ``params/params.yaml``, apply the selected profile, and validate every field strictly."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pqlab.errors import ParamsError

BackendChoice = Literal["auto", "liboqs", "openssl", "pqcrypto"]


class _Strict(BaseModel):
    """Unknown keys and silent type coercion (e.g. "10" -> 10) are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CostsParams(_Strict):
    """AMORT-V1 §V-C cost characterisation (Table I, Fig. 2)."""

    backend: BackendChoice = "auto"
    kem: str = "ML-KEM-768"
    signers: tuple[str, ...] = Field(default=("ML-DSA-65", "SLH-DSA-SHA2-128f"), min_length=1)
    comparison_signer: str = "ML-DSA-65"
    record_octets: int = Field(default=83, ge=1, le=65536)
    sign_message_octets: int = Field(default=4096, ge=1, le=1 << 20)
    fsync_block_octets: int = Field(default=4096, ge=1, le=1 << 24)
    trials: int = Field(ge=1, le=1000)
    reps: int = Field(ge=1, le=10_000_000)
    reps_slow: int = Field(ge=1, le=10_000_000)
    warmup: int = Field(ge=0, le=1_000_000)
    bootstrap_resamples: int = Field(ge=100, le=1_000_000)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)


class AttackMatrixParams(_Strict):
    """AMORT-V1 Appendix A, Table VI: the attack matrix over the reference model."""

    n_devices: int = Field(default=4, ge=2, le=64)
    checkpoint_signer: Literal["ML-DSA-65"] = "ML-DSA-65"
    alternative_signer: Literal["SLH-DSA-SHA2-128f"] = "SLH-DSA-SHA2-128f"
    stream_records: int = Field(default=640, ge=1, le=1_000_000)  # P5: honest stream length
    stream_k: int = Field(default=64, ge=1, le=1_000_000)  # P5: checkpoint interval
    repeats: int = Field(default=1, ge=1, le=100)  # independent runs, each with its own seed and fresh keys


class StudyParams(_Strict):
    """The parameters one run sees: the profile's values merged over the common ones."""

    profile: str
    seed: int = Field(ge=0, lt=2**63)
    costs: CostsParams
    attack_matrix: AttackMatrixParams = Field(default_factory=AttackMatrixParams)


_PROFILE_KEYS = {"costs", "attack_matrix"}


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _yaml_lists_to_tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _yaml_lists_to_tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_yaml_lists_to_tuples(v) for v in value)
    return value


def _describe(error: dict[str, Any], prefix: str) -> str:
    location = ".".join(str(part) for part in error["loc"])
    field = f"{prefix}.{location}" if prefix else location
    got = error.get("input")
    got_text = "" if error["type"] == "missing" else f" (got {got!r})"
    return f"{field}: {error['msg']}{got_text}"


def load_raw(path: str | Path) -> dict[str, Any]:
    """Read a params YAML file into a mapping, with a typed error for anything unreadable."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ParamsError(f"cannot read parameters file: {exc.strerror}", field=str(path)) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ParamsError(f"not valid YAML: {exc}", field=str(path)) from exc
    if not isinstance(data, dict):
        raise ParamsError("top level must be a mapping", field=str(path))
    return data


def resolve(data: dict[str, Any], profile: str | None = None, *, source: str = "params") -> StudyParams:
    """Merge ``profiles[profile]`` over the common values and validate the result."""
    data = dict(data)
    profiles = data.pop("profiles", None)
    if not isinstance(profiles, dict) or not profiles:
        raise ParamsError("must map profile names to their settings", field=f"{source}: profiles")
    chosen = profile if profile is not None else data.get("profile")
    if not isinstance(chosen, str):
        raise ParamsError(f"must be a profile name (got {chosen!r})", field=f"{source}: profile")
    if chosen not in profiles:
        known = ", ".join(sorted(profiles))
        raise ParamsError(f"unknown profile {chosen!r}; known: {known}", field=f"{source}: profile")
    overrides = profiles[chosen]
    if not isinstance(overrides, dict):
        raise ParamsError("must be a mapping", field=f"{source}: profiles.{chosen}")
    unknown = set(overrides) - _PROFILE_KEYS
    if unknown:
        raise ParamsError(
            f"unknown section(s) {sorted(unknown)}; a profile may set {sorted(_PROFILE_KEYS)}",
            field=f"{source}: profiles.{chosen}",
        )
    for name, body in profiles.items():
        if not isinstance(body, dict):
            raise ParamsError("must be a mapping", field=f"{source}: profiles.{name}")
    merged = _deep_merge(data, overrides)
    merged["profile"] = chosen
    try:
        return StudyParams.model_validate(_yaml_lists_to_tuples(merged))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = f"profiles.{chosen} over " if first["loc"] and first["loc"][0] in _PROFILE_KEYS else ""
        raise ParamsError(f"{where}{_describe(first, '')}", field=source) from exc


def load(path: str | Path, profile: str | None = None) -> StudyParams:
    """Load and validate a params file; ``profile`` overrides the file's own ``profile`` key."""
    return resolve(load_raw(path), profile, source=str(path))


def project_root(params_path: str | Path) -> Path:
    """The project a params file belongs to: the parent of its ``params/`` folder."""
    return Path(params_path).resolve().parent.parent
