"""The base of every stage's typed metrics model: strict, closed, and written and read through the same class.

Each stage's model (``<Stage>Metrics``) is in ``pqlab.pipeline.metrics.<stage>`` (by stage name:
:mod:`pqlab.pipeline.metrics.by_stage`). The study validates what it
computed through it before writing ``<stage>_metrics.json`` (a misspelt or unknown key fails the run), and the
report validates the file through it before reading a row's value (a missing or renamed key stops the report with
one line naming the row and the key). Names a JSON key cannot carry as a Python identifier (``1hop_none_s``) are
field aliases; mappings keyed by data (operations, configurations, scenarios) are ``dict[str, ...]`` fields.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, ValidationError

from pqlab.errors import MetricsMismatchError
from pqlab.validation import dotted, first_problem


class MetricsNode(BaseModel):
    """A part of a metrics file: strict types (an int is not a bool, a string is not a number), no unknown keys."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready mapping (JSON key names, not Python field names)."""
        return self.model_dump(by_alias=True)


class StageMetrics(MetricsNode):
    """One stage's whole metrics file: every stage records the profile it ran."""

    profile: str


class IntervalMetrics(StageMetrics):
    """The metrics file of a stage that computes intervals: ``confidence`` is the level of every one of them (the
    stage's ``confidence`` parameter), which REPORT.md states beside each interval it judges on."""

    confidence: float


class LoadAverage(MetricsNode):
    """The 1-, 5- and 15-minute load average before and after a measurement (``raw_provenance.load_average``): the
    one spelling every metrics file uses."""

    before: list[float]
    after: list[float]


class RawSource(MetricsNode):
    """Where a measuring stage's raw samples came from (their provenance block): REPORT.md names it per stage."""

    machine: str
    cpu_model: str
    measured_utc: str
    load_average: LoadAverage
    seed: int
    profile: str
    # raw files `pqlab raw import --edited` put in place, this stage's and its derived inputs' (absent: none)
    hand_edited: list[str] = []


class SanityFailure(MetricsNode):
    """A check of a study's own structure that its numbers failed: what was checked, why it failed (one line) and
    the metrics keys (dotted prefixes) the failure invalidates."""

    check: str
    cause: str
    keys: list[str]


class Sanity(MetricsNode):
    """A study's sanity checks (``sanity`` in its metrics file): how many ran and the ones that failed. REPORT.md
    reads a row whose value comes from an invalidated key as "measurement failed", with the cause."""

    checks: int
    failed: list[SanityFailure]


def validated(model: type[StageMetrics], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` checked against ``model`` and dumped back: what a study writes as its metrics file. A study whose
    numbers do not fit its own model is a MetricsMismatchError naming the first key (one line, not a traceback)."""
    try:
        return model.model_validate(data).dump()
    except ValidationError as exc:
        problem = first_problem(exc)
        more = f" (and {problem.count - 1} more)" if problem.count > 1 else ""
        raise MetricsMismatchError(f"`{dotted(problem.loc) or '(top level)'}`: {problem.message.lower()}{more}: the "
                                   f"study's metrics do not fit {model.__name__}; declare the key there",
                                   field=model.__name__) from None


# --- walking a model's declared keys ------------------------------------------------------------------------------

def _arms(annotation: Any) -> list[Any]:
    """The members of a union (``X | None``), or the annotation itself."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _children(annotation: Any, part: str) -> list[Any]:
    """What ``part`` leads to under ``annotation``: a field of a model, any entry of a mapping."""
    found = []
    for arm in _arms(annotation):
        if isinstance(arm, type) and issubclass(arm, BaseModel):
            for name, field in arm.model_fields.items():
                if part in (field.alias or name, name):
                    found.append(field.annotation)
        elif typing.get_origin(arm) is dict:
            found.append(typing.get_args(arm)[1])
    return found


def _keys(annotation: Any) -> list[str]:
    """The keys declared under ``annotation`` (fields of a model; ``*`` for a mapping keyed by data)."""
    names: list[str] = []
    for arm in _arms(annotation):
        if isinstance(arm, type) and issubclass(arm, BaseModel):
            names += [field.alias or name for name, field in arm.model_fields.items()]
        elif typing.get_origin(arm) is dict:
            names.append("<any name>")
    return names


def declared(model: type[BaseModel], dotted: str) -> str | None:
    """None when ``dotted`` names a key that ``model`` declares (a ``*`` part matches any entry of a mapping),
    else why not: the first part that is not declared and what is declared at that level."""
    current: list[Any] = [model]
    walked: list[str] = []
    for part in dotted.split("."):
        following = [child for node in current for child in
                     (_children(node, part) if part != "*" else
                      [typing.get_args(a)[1] for a in _arms(node) if typing.get_origin(a) is dict]
                      + [f.annotation for a in _arms(node) if isinstance(a, type) and issubclass(a, BaseModel)
                         for f in a.model_fields.values()])]
        if not following:
            where = f"under `{'.'.join(walked)}`" if walked else "at the top level"
            keys = sorted({k for node in current for k in _keys(node)})
            shown = ", ".join(keys[:25]) + (", …" if len(keys) > 25 else "")
            return f"`{part}` is not a key {where} of {model.__name__} (declared: {shown or 'nothing: a value'})"
        current = following
        walked.append(part)
    return None

