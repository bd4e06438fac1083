"""Read params YAML, merge the selected profile, validate every field and name, and locate the first error."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pqlab.case.config import AUTH_MODES, CACHE_MODES, TABLE1_NAMES
from pqlab.config import name_problem, read_yaml
from pqlab.errors import ParamsError
from pqlab.params.schema import StudyParams
from pqlab.transport.config import FIGURE_ROLES
from pqlab.validation import dotted, first_problem

# Sections whose values may differ by profile (sample sizes); each holds its own ``profiles:`` block.
# Values that several stages read live in ``inputs`` / ``framing`` and are copied where a model needs them.
_SHARED = {"profile", "seed", "profiles", "execution_timeout_s", "inputs", "framing"}
_INJECTED = {"transport": ("framing", "seed")}
_RENAMED = {"thread": "transport"}  # old section name -> its name now: an old file's error names the new one


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


def _has_path(mapping: Any, path: tuple[Any, ...]) -> bool:
    for part in path:
        if not isinstance(mapping, dict) or part not in mapping:
            return False
        mapping = mapping[part]
    return True


def load_raw(path: str | Path) -> dict[str, Any]:
    """Read a params YAML file into a mapping, with a typed error for anything unreadable."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ParamsError("top level must be a mapping", field=str(path))
    return data


def _for_profile(data: dict[str, Any], chosen: str, names: tuple[str, ...], source: str) -> tuple[dict, dict]:
    """The document with every section's ``profiles[chosen]`` merged in, and the overrides that were applied."""
    merged: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SHARED or not isinstance(value, dict):
            merged[key] = value
            continue
        section = dict(value)
        overrides = section.pop("profiles", {})
        if not isinstance(overrides, dict):
            raise ParamsError("must map profile names to settings", field=f"{source}: {key}.profiles")
        unknown = set(overrides) - set(names)
        if unknown:
            raise ParamsError(f"unknown profile(s) {sorted(unknown)}; profiles: {list(names)}",
                              field=f"{source}: {key}.profiles")
        for name, body in overrides.items():
            if not isinstance(body, dict):
                raise ParamsError("must be a mapping", field=f"{source}: {key}.profiles.{name}")
        chosen_overrides = overrides.get(chosen, {})
        merged[key] = _deep_merge(section, chosen_overrides)
        applied[key] = chosen_overrides
    for section, fields in _INJECTED.items():
        body = merged.get(section)
        if isinstance(body, dict):
            for name in fields:
                if name in body:
                    raise ParamsError(f"set at the top level, not in {section}", field=f"{source}: {section}.{name}")
            merged[section] = {**body, **{name: data[name] for name in fields if name in data}}
    return merged, applied


def _key_exchange(kems: tuple[str, ...]) -> Callable[[Any], str | None]:
    def check(name: Any) -> str | None:
        parts = name.split("+") if isinstance(name, str) else []
        if not 1 <= len(parts) <= 2 or len(set(parts)) != len(parts) or \
                any(part != "P-256" and part not in kems for part in parts):
            return (f"{name!r} is not a key exchange: P-256, one of {', '.join(kems)}, or a hybrid of two such as "
                    "P-256+ML-KEM-768")
        return None
    return check


def _one_of(known: tuple[Any, ...], what: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in known else f"{value!r} is not {what}; known: {', '.join(map(str, known))}"
    return check


def _mode_problem(text: Any) -> str | None:
    auth, _, cached = text.partition("/") if isinstance(text, str) else ("", "", "")
    if auth in AUTH_MODES and cached in CACHE_MODES:
        return None
    return f"{text!r} is not auth/cached with auth in {AUTH_MODES} and cached in {CACHE_MODES}"


@functools.cache
def _name_checks() -> dict[tuple[str, str], Callable[[Any], str | None]]:
    """(section, field) -> a check of one name; a tuple field is checked member by member. The registries are the
    domain modules' own, imported when the first document is checked (importing pqlab.params stays light)."""
    from pqlab.case import algorithms
    from pqlab.crypto import names as crypto

    signatures, kems = tuple(algorithms.SIGNATURES), tuple(algorithms.KEMS)  # the CASE size model's, in its order
    key_exchange = _key_exchange(kems)
    return {
        ("costs", "kem"): _one_of(crypto.KEMS, "a KEM of any pqlab backend"),
        ("costs", "signers"): _one_of(crypto.SIGNATURES, "a signature algorithm of any pqlab backend"),
        ("costs", "comparison_signer"): _one_of(crypto.SIGNATURES, "a signature algorithm of any pqlab backend"),
        ("case_sizes", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
        ("case_sizes", "resumption_key_exchanges"): key_exchange,
        ("case_sizes", "real_material"): _one_of(TABLE1_NAMES, "a Table I configuration"),
        ("design_space", "key_exchanges"): key_exchange,
        ("design_space", "noc"): _one_of(signatures, "a CASE signature algorithm"),
        ("design_space", "icac"): _one_of((None, *signatures), "null or a CASE signature algorithm"),
        ("design_space", "rcac"): _one_of(signatures, "a CASE signature algorithm"),
        ("design_space", "modes"): _mode_problem,
        ("design_space", "static_kem"): _one_of(kems, "a CASE KEM"),
        ("design_space", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
        ("extended_design_space", "add_key_exchanges"): key_exchange,
        ("extended_design_space", "add_noc"): _one_of(signatures, "a CASE signature algorithm"),
        ("extended_design_space", "add_icac"): _one_of(signatures, "a CASE signature algorithm"),
        ("extended_design_space", "add_rcac"): _one_of(signatures, "a CASE signature algorithm"),
        ("transport", "configurations"): _one_of(TABLE1_NAMES, "a Table I configuration"),
    }


def _problems(settings: StudyParams) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every name, duplicate and cross-field error pydantic's per-field checks cannot see, with its path."""
    for section in StudyParams.model_fields:
        model = getattr(settings, section)
        if not isinstance(model, BaseModel):
            continue
        for name in type(model).model_fields:
            value = getattr(model, name)
            check = _name_checks().get((section, name))
            if check is None and not isinstance(value, tuple):
                continue  # a single value no name check applies to: nothing to find
            members = value if isinstance(value, tuple) else (value,)
            for index, member in enumerate(members):
                problem = check(member) if check else None
                if problem is None and isinstance(value, tuple) and member in value[:index]:
                    problem = f"{member!r} is listed twice (first at [{value.index(member)}])"
                if problem:
                    yield (section, name, index) if isinstance(value, tuple) else (section, name), problem
    thread = settings.transport
    for role, name in thread.figure_configs.items():
        if role not in FIGURE_ROLES:
            yield ("transport", "figure_configs", role), f"unknown role; roles: {', '.join(FIGURE_ROLES)}"
        elif name not in TABLE1_NAMES:
            yield ("transport", "figure_configs", role), f"{name!r} is not a Table I configuration"


def _located(loc: tuple[Any, ...], applied: dict[str, Any], chosen: str) -> str:
    """``loc`` as a dotted path, pointing into ``<section>.profiles.<profile>`` when the profile set it."""
    if len(loc) >= 2 and _has_path(applied, loc[:2]):  # the bad value came from the profile's override
        loc = (loc[0], "profiles", chosen, *loc[1:])
    return dotted(loc)


def _validate(data: dict[str, Any], chosen: str, names: tuple[str, ...], source: str) -> StudyParams:
    merged, applied = _for_profile(data, chosen, names, source)
    merged["profile"] = chosen
    try:
        settings = StudyParams.model_validate(_yaml_lists_to_tuples(merged))
    except ValidationError as exc:
        problem = first_problem(exc)  # no path: a check across sections, whose message names the fields
        raise ParamsError(problem.line(_located(problem.loc, applied, chosen)), field=source) from None
    for loc, problem in _problems(settings):
        raise ParamsError(f"{_located(loc, applied, chosen)}: {problem}", field=source)
    return settings


def resolve(data: dict[str, Any], profile: str | None = None, *, source: str = "params") -> StudyParams:
    """Validate every profile of ``data`` and return the selected one (``profile`` overrides the file's)."""
    names = data.get("profiles", ("smoke", "quick", "paper"))
    if not isinstance(names, list | tuple) or not names or not all(isinstance(n, str) for n in names):
        raise ParamsError("must list the profile names", field=f"{source}: profiles")
    for index, name in enumerate(names):  # a name heads error lines and file names: no newline, no control byte
        problem = name_problem(name)
        if problem:
            raise ParamsError(problem, field=f"{source}: profiles[{index}]")
    names = tuple(names)
    for old_name, new_name in _RENAMED.items():  # before pydantic's "Extra inputs are not permitted"
        if old_name in data:
            raise ParamsError(f"unknown section; it is now `{new_name}:` (rename `{old_name}:`)",
                              field=f"{source}: {old_name}")
    chosen = profile if profile is not None else data.get("profile")
    if not isinstance(chosen, str):
        raise ParamsError(f"must be a profile name (got {chosen!r})", field=f"{source}: profile")
    if chosen not in names:
        raise ParamsError(f"unknown profile {chosen!r}; known: {', '.join(names)}", field=f"{source}: profile")
    for other in names:  # an error in a profile not selected today still stops the run
        if other != chosen:
            _validate(data, other, names, source)
    return _validate(data, chosen, names, source)


def load(path: str | Path, profile: str | None = None) -> StudyParams:
    """Load and validate a params file; ``profile`` overrides the file's own ``profile`` key."""
    return resolve(load_raw(path), profile, source=str(path))


def dump_all(settings: StudyParams) -> dict[str, Any]:
    """Every resolved field, the sections kept out of ``model_dump`` (provenance) included (``pqlab params``)."""
    dumped = settings.model_dump(mode="json")
    for name, info in StudyParams.model_fields.items():
        if info.exclude:
            dumped[name] = getattr(settings, name).model_dump(mode="json")
    return dumped

