"""Every field of the params models, and for each a valid non-default value written into params.yaml the way a user
writes it (tests/test_dvc_params.py sets them one at a time).

A field is a leaf of :class:`pqlab.params.StudyParams`: a model's field that is not itself a model; the fields of a
model inside a mapping or a tuple (``transport.scenarios.<name>``, ``sensitivity.segments.scenarios[i]``) are walked in
their first entry. The value is found by trying candidates until ``pqlab.params.resolve`` accepts one that changes
the resolved settings there; a field no candidate fits is named by :func:`fields_without_value`, so a new field with
unusual constraints fails the test until it gets a candidate in ``CANDIDATES``.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from pqlab import params
from pqlab.errors import ParamsError
from pqlab.params import StudyParams

TOP_LEVEL = ("profile", "seed", "profiles", "execution_timeout_s")
INJECTED = {("transport", "framing"), ("transport", "seed")}  # copied from the top level: never set in `transport`
SHARED = ("inputs", "framing")  # sections without profiles (pqlab.params.loader)

# values for fields whose constraints the generic candidates miss (a path as written in params.yaml's terms)
CANDIDATES: dict[tuple[Any, ...], list[Any]] = {
    ("profile",): ["paper", "smoke"],
    ("profiles",): [["quick", "smoke", "paper"]],  # a new name would need every section's block for it
    ("full_image", "image_dir"): ["/"],
    ("recovery", "tpm"): ["device:/dev/tpmrm0"],
    ("sensitivity", "segments", "reference_payload"): [1024],  # one of segment_payload
    ("full_image", "scratch_tree"): [{"files": 10, "total_bytes": 10000, "size_sigma": 1.0, "directories": 2}],
}

Path = tuple[Any, ...]


@dataclass(frozen=True)
class FieldValue:
    """A field, the document that sets it to ``value``, and the settings that document resolves to."""

    path: Path
    value: Any
    document: dict[str, Any]
    settings: StudyParams


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class an annotation holds directly (``Model`` or ``Model | None``), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        return models[0] if len(models) == 1 else None
    return None


def _walk(model: BaseModel, prefix: Path) -> Iterator[tuple[Path, Any]]:
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        path = (*prefix, name)
        if isinstance(value, BaseModel):
            yield from _walk(value, path)
        elif isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
            first = next(iter(value))
            yield from _walk(value[first], (*path, first))
        elif isinstance(value, tuple) and value and all(isinstance(v, BaseModel) for v in value):
            yield from _walk(value[0], (*path, 0))
        else:
            yield path, info.annotation


def fields(settings: StudyParams) -> list[tuple[Path, Any]]:
    """Every leaf field of the resolved settings (path, annotation), the injected copies left out."""
    found = [((name,), StudyParams.model_fields[name].annotation) for name in TOP_LEVEL]
    for section in StudyParams.model_fields:
        value = getattr(settings, section)
        if isinstance(value, BaseModel):
            found += [(path, annotation) for path, annotation in _walk(value, (section,))
                      if path[:2] not in INJECTED]
    return found


def _strings(node: Any) -> set[str]:
    if isinstance(node, dict):
        return {s for v in node.values() for s in _strings(v)} | {k for k in node if isinstance(k, str)}
    if isinstance(node, list):
        return {s for v in node for s in _strings(v)}
    return {node} if isinstance(node, str) else set()


def _candidates(path: Path, annotation: Any, current: Any, pool: list[str]) -> list[Any]:
    """Values to try, most plausible first; the caller keeps the first one the model accepts."""
    if path in CANDIDATES:
        return CANDIDATES[path]
    literal = [a for a in _literal_args(annotation) if a != current]
    if isinstance(current, bool):
        return [not current]
    if isinstance(current, int):
        return [*literal, current + 1, current - 1, current * 2, 1, 2]
    if isinstance(current, float):
        return [current * 1.1, current + 0.5, current / 2, current * 0.9, 0.1, 1.0, 2.0]
    if isinstance(current, str):
        return [*literal, *(s for s in pool if s != current)]
    if current is None:
        return [*literal, 1, 2, 10, 0.5, "ML-DSA-44", *pool[:20]]
    if isinstance(current, list):
        options = [current[:-1], current[1:], current[::-1]] if len(current) > 1 else []
        if current and isinstance(current[-1], int | float) and not isinstance(current[-1], bool):
            options.append([*current, current[-1] * 2])
        return options + [[*current, extra] for extra in pool]
    if isinstance(current, dict):
        options = []
        for key, value in current.items():
            options += [{**current, key: other} for other in current.values() if other != value]
            if len(current) > 1:
                options.append({k: v for k, v in current.items() if k != key})
        return options
    return literal


def _literal_args(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for arg in typing.get_args(annotation) for a in _literal_args(arg)]
    return []


def _get(node: Any, path: Path) -> Any:
    for part in path:
        node = node[part]
    return node


def _set(node: Any, path: Path, value: Any) -> None:
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def with_value(document: dict[str, Any], base: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    """``document`` with ``path`` set to ``value`` as a user writes it: a top-level key at the top, a section's field
    in the selected profile's block (which wins over the section's own keys), a field inside a mapping or a tuple
    of models as the whole mapping or tuple (the loader replaces those, it does not merge them)."""
    doc = copy.deepcopy(document)
    if len(path) == 1:
        doc[path[0]] = value
        return doc
    section, field = path[0], path[1]
    whole = copy.deepcopy(base[section][field])
    if len(path) == 2:
        whole = value
    else:
        _set(whole, path[2:], value)
    body = doc.setdefault(section, {})
    if section in SHARED:  # no profiles there: the section's own key
        body[field] = whole
    else:
        body.setdefault("profiles", {}).setdefault(doc["profile"], {})[field] = whole
    return doc


def single_valued(annotation: Any) -> bool:
    """A field the model allows one value for (``Literal["ML-DSA-65"]``): there is no other value to set."""
    return len(_literal_args(annotation)) == 1


def value_for(document: dict[str, Any], path: Path, annotation: Any) -> FieldValue | None:
    """A valid non-default value of one field, set in ``document`` (None: no candidate fits)."""
    settings = params.resolve(document)
    base = params.dump_all(settings)
    current = _get(base, path)
    pool = sorted(_strings(base))
    for candidate in _candidates(path, annotation, current, pool):
        edited = with_value(document, base, path, candidate)
        try:
            changed = params.resolve(edited)
        except ParamsError:
            continue
        if _get(params.dump_all(changed), path) != current:
            return FieldValue(path, candidate, edited, changed)
    return None


def dotted(path: Path) -> str:
    return ".".join(str(p) for p in path)
