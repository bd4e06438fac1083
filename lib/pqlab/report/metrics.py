"""Reading a run's metrics files through each stage's typed model: dotted-key lookups, wildcards, why a value is not
there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pqlab.errors import InputError, MetricsMismatchError
from pqlab.io import read_json
from pqlab.pipeline.metrics.by_stage import stage_model
from pqlab.pipeline.typed_metrics import StageMetrics
from pqlab.validation import dotted, first_problem

MISSING = object()


def _lookup(document: dict[str, Any] | None, dotted: str) -> Any:
    """The value at ``dotted`` (None when any part is absent)."""
    value = lookup(document, dotted)
    return None if value is MISSING else value


def lookup(document: dict[str, Any] | None, dotted: str) -> Any:
    """The value at ``dotted`` in ``document``, or ``MISSING`` when a part of the path is absent."""
    node: Any = document
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def lookup_all(document: dict[str, Any] | None, dotted: str) -> list[Any]:
    """Every value matching ``dotted``, where a part ``*`` matches each key at that level (sorted by key)."""
    nodes: list[Any] = [document]
    for part in dotted.split("."):
        following: list[Any] = []
        for node in nodes:
            if not isinstance(node, dict):
                continue
            if part == "*":
                following.extend(node[k] for k in sorted(node))
            elif part in node:
                following.append(node[part])
        nodes = following
    return nodes


@dataclass(frozen=True)
class Absence:
    """Where a dotted path stops: the deepest part found, the part that is missing and its siblings."""

    found: str
    missing: str
    present: tuple[str, ...]
    null: bool  # the key exists but holds null
    depth: int  # index of the missing part


def absence(document: dict[str, Any], dotted: str) -> Absence:
    """Why ``dotted`` has no value in ``document``."""
    node: Any = document
    found: list[str] = []
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            present = tuple(sorted(node)) if isinstance(node, dict) else ()
            return Absence(".".join(found), part, present, null=False, depth=i)
        node = node[part]
        found.append(part)
    return Absence(".".join(found[:-1]), parts[-1], (), null=node is None, depth=len(parts) - 1)


def parent(document: dict[str, Any] | None, dotted: str) -> dict[str, Any]:
    """The mapping that holds the last part of ``dotted`` (empty when absent)."""
    if "." not in dotted:
        return document or {}
    node = lookup(document, dotted.rsplit(".", 1)[0])
    return node if isinstance(node, dict) else {}


def number(value: Any) -> float | None:
    """A metric value as a float (None for anything that is not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


class MetricsTree:
    """The metrics files of one run under ``data/derived``, each read once and validated through the typed model
    of the stage that writes it (``stages``: metrics file -> stage; ``models``: stage -> its model)."""

    def __init__(self, derived: Path, stages: dict[str, str] | None = None,
                 models: Callable[[str], type[StageMetrics] | None] = stage_model) -> None:
        self.derived = derived
        self.stages = stages or {}
        self.models = models
        self._documents: dict[str, dict[str, Any] | None] = {}

    def model(self, filename: str) -> type[StageMetrics] | None:
        stage = self.stages.get(filename)
        return self.models(stage) if stage else None

    def document(self, filename: str) -> dict[str, Any] | None:
        """The parsed, validated file, or None when this run has not written it. A file that does not match its
        stage's model stops the report (MetricsMismatchError naming the file and the first key)."""
        if filename not in self._documents:
            path = self.derived / filename
            if not path.exists():
                self._documents[filename] = None
            else:
                loaded = read_json(path, "metrics file")  # InputError naming the file; checks its SHA-256
                if not isinstance(loaded, dict):
                    raise InputError("a metrics file must hold a JSON object; rerun the stage that writes it",
                                     field=str(path))
                model = self.model(filename)
                if model is not None:
                    try:
                        loaded = model.model_validate(loaded).dump()
                    except ValidationError as exc:
                        problem = first_problem(exc)
                        raise MetricsMismatchError(
                            f"`{dotted(problem.loc) or '(top level)'}`: {problem.message.lower()} ({model.__name__}); "
                            f"rerun stage `{self.stages[filename]}` (the file was written by another version of its "
                            "study)",
                            field=filename) from None
                self._documents[filename] = loaded
        return self._documents[filename]

    def evidence(self, ref: str, missing: Callable[[str], str] | None = None) -> str:
        """A metrics reference ("file" or "file:key", "*" allowed) as REPORT.md shows it; ``missing`` says why a
        file is absent."""
        filename, _, key = ref.partition(":")
        document = self.document(filename)
        if document is None:
            return f"`{filename}`: not run yet" + (f" ({missing(filename)})" if missing else "")
        if not key:
            profile = document.get("profile")
            return f"`{filename}`: present" + (f" (profile {profile})" if profile else "") + \
                f"; keys: {', '.join(sorted(document))}"
        values = lookup_all(document, key)
        if not values:
            return f"`{ref}`: no such key in this run's metrics"
        return f"`{ref}` = {describe_value(values if '*' in key else values[0])}"


def describe_value(value: Any) -> str:
    """A metric value in one short phrase (mappings by their keys, lists by their distinct members)."""
    if isinstance(value, dict):
        if value and all(not isinstance(v, (dict, list)) for v in value.values()):
            return "; ".join(f"{k} = {describe_value(value[k])}" for k in sorted(value))
        return ", ".join(sorted(map(str, value))) or "none"
    if isinstance(value, list):
        distinct = sorted({describe_value(v) for v in value})
        return ", ".join(distinct) or "none"
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
