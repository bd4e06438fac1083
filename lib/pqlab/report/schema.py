"""The schema of ``params/paper_reference.yaml``: published values with bands, stages, coverage, differences."""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pqlab.errors import ParamsError
from pqlab.params import read_yaml


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PaperInfo(_Frozen):
    title: str
    source: str
    machine: str


class Band(_Frozen):
    """How close this run's value must come to the paper's to count as reproduced: exactly one rule.

    ``exact: true`` — equal (byte sizes, counts: exact by construction); ``ratio: [lo, hi]`` — here / paper within
    [lo, hi] (measurements on other hardware, simulated times); ``abs: x`` — |here − paper| ≤ x in the row's unit
    (values near zero, fractions, counts that vary with the seed, values the paper rounds).
    """

    name: str | None = None  # a named band of the file's ``bands:`` block (rows refer to it with a YAML alias)
    exact: Literal[True] | None = None
    ratio: tuple[float, float] | None = None
    abs: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    why: str | None = None  # why this tolerance: required for ratio and abs bands

    @model_validator(mode="after")
    def _one_rule(self) -> Band:
        rules = [name for name in ("exact", "ratio", "abs") if getattr(self, name) is not None]
        if len(rules) != 1:
            raise ValueError(f"a band has exactly one of exact, ratio, abs (got {rules or 'none'})")
        if not self.exact and not (self.why and self.why.strip()):
            raise ValueError("a ratio or abs band needs a why (the reason for its tolerance)")
        if self.ratio is not None:
            lo, hi = self.ratio
            if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo <= 1.0 <= hi):
                raise ValueError(f"ratio band must satisfy 0 < lo <= 1 <= hi (got [{lo}, {hi}])")
        return self

    def holds(self, paper: float, here: float) -> bool:
        """Whether ``here`` is within this band of ``paper``."""
        if self.exact:
            return here == paper
        if self.ratio is not None:
            lo, hi = self.ratio
            return lo <= here / paper <= hi
        assert self.abs is not None
        return abs(here - paper) <= self.abs + 1e-12 * max(1.0, abs(paper))

    def rule(self, unit: str = "") -> str:
        """The rule alone: "exact", "×0.8–1.25", "±0.3 s"."""
        if self.exact:
            return "exact"
        if self.ratio is not None:
            return f"×{self.ratio[0]:g}–{self.ratio[1]:g}"
        return f"±{self.abs:g} {unit}".rstrip()

    def describe(self, unit: str) -> str:
        """The band as REPORT.md's rows print it: the rule and, for a named band, its name."""
        rule = self.rule(unit)
        return f"{rule} ({self.name})" if self.name and self.name != rule else rule


class Quantity(_Frozen):
    """One published value, where this run's counterpart is stored, and the band it must fall in."""

    id: str = Field(min_length=1)
    paper: str
    where: str
    row: str
    column: str
    value: float = Field(allow_inf_nan=False)
    unit: str
    metric: str = Field(pattern=r"^[\w.-]+\.json:[^:\s]+$")
    band: Band
    paper_library: str | None = None
    # The model variant this row shows (e.g. "source_accurate"): a sensitivity, never a mismatch.
    sensitivity: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _band_fits(self) -> Quantity:
        if self.band.ratio is not None and self.value == 0:
            raise ValueError("a ratio band needs a non-zero paper value (use abs or exact)")
        return self

    @property
    def metrics_file(self) -> str:
        return self.metric.partition(":")[0]

    @property
    def key(self) -> str:
        return self.metric.partition(":")[2]


class Stage(_Frozen):
    """A DVC stage that feeds REPORT.md: its metrics file and how to read its sample sizes."""

    metrics: str = Field(pattern=r"^[\w.-]+\.json$")
    kind: Literal["measurement", "simulation", "model"]
    # label -> dotted key in the metrics file ("*" matches every key at one level): the sample sizes of the run
    samples: dict[str, str] = Field(default_factory=dict)


class CoverageItem(_Frozen):
    """One table, figure, equation or group of text numbers of a paper and what reproduces it."""

    id: str = Field(min_length=1)
    paper: str
    item: str
    what: str
    stage: str | None = None
    # paths relative to the project root; without a suffix, any file ``stem.*`` counts (a table's .csv/.md)
    outputs: tuple[str, ...] = ()
    rows: tuple[str, ...] = ()  # id patterns (fnmatch: * and ?) of the quantities that check it
    kind: Literal["result", "model", "illustration", "cited"] = "result"
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CoverageItem:
        for output in self.outputs:
            pure = PurePosixPath(output)
            if pure.is_absolute() or ".." in pure.parts:
                raise ValueError(f"output {output!r} must be a path inside the project")
        if self.kind == "result" and self.stage is None and not self.note:
            raise ValueError("a result with no stage needs a note saying why it is not reproduced")
        if self.kind == "model" and self.stage is None:
            raise ValueError("a model item names the stage whose model implements it")
        if self.kind != "result" and not self.note:
            raise ValueError(f"a {self.kind} item needs a note")
        return self


class Difference(_Frozen):
    """One "what differs and why" entry; ``evidence`` names metrics ("file" or "file:dotted.key") shown beside."""

    topic: str
    paper: str
    here: str
    evidence: tuple[str, ...] = ()


class Reference(_Frozen):
    papers: dict[str, PaperInfo]
    stages: dict[str, Stage]
    bands: dict[str, Band] = Field(default_factory=dict)
    quantities: tuple[Quantity, ...]
    coverage: tuple[CoverageItem, ...] = ()
    differences: tuple[Difference, ...] = ()

    def stage_of(self, metrics_file: str) -> str | None:
        """The stage that writes ``metrics_file``."""
        return next((name for name, stage in self.stages.items() if stage.metrics == metrics_file), None)


def _locate(raw: Any, loc: tuple[Any, ...]) -> str:
    """A validation error's location, naming a quantity or coverage item by its id rather than its index."""
    parts: list[str] = []
    node = raw
    for i, part in enumerate(loc):
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            item = node[part]
            ident = item.get("id") if isinstance(item, dict) else None
            parts.append(f"[{part}]" + (f" (id {ident})" if ident else ""))
            node = item
            continue
        parts.append(("." if i else "") + str(part))
        node = node.get(part) if isinstance(node, dict) else None
    return "".join(parts)


def _check_references(reference: Reference) -> None:
    """Cross-field rules: papers, stages and metrics files named anywhere must exist; ids are unique."""
    files = {stage.metrics: name for name, stage in reference.stages.items()}
    if len(files) != len(reference.stages):
        raise ValueError("stages: two stages name the same metrics file")
    for key, band in reference.bands.items():
        if band.name != key:
            raise ValueError(f"bands.{key}.name: must be {key!r} (got {band.name!r})")
    seen: set[str] = set()
    for q in reference.quantities:
        if q.id in seen:
            raise ValueError(f"quantities (id {q.id}): duplicate id")
        seen.add(q.id)
        if q.paper not in reference.papers:
            raise ValueError(f"quantities (id {q.id}).paper: unknown paper {q.paper!r}")
        if q.metrics_file not in files:
            raise ValueError(f"quantities (id {q.id}).metric: {q.metrics_file} is written by no stage in stages:")
        if q.band.name is not None and reference.bands.get(q.band.name) != q.band:
            raise ValueError(f"quantities (id {q.id}).band: {q.band.name!r} is not the band of that name in bands:")
    items: set[str] = set()
    for c in reference.coverage:
        if c.id in items:
            raise ValueError(f"coverage (id {c.id}): duplicate id")
        items.add(c.id)
        if c.paper not in reference.papers:
            raise ValueError(f"coverage (id {c.id}).paper: unknown paper {c.paper!r}")
        if c.stage is not None and c.stage not in reference.stages:
            raise ValueError(f"coverage (id {c.id}).stage: unknown stage {c.stage!r}")
    for d in reference.differences:
        for evidence in d.evidence:
            if evidence.partition(":")[0] not in files:
                raise ValueError(f"differences ({d.topic}).evidence: {evidence} is in no stage's metrics file")


def load_reference(path: Path) -> Reference:
    """Read and strictly validate ``params/paper_reference.yaml`` (errors name the row id and the field)."""
    raw = read_yaml(path, "paper reference")  # UTF-8, no duplicate keys, bounded nesting: else one ParamsError
    try:
        reference = Reference.model_validate(raw)
        _check_references(reference)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ParamsError(f"{_locate(raw, tuple(first['loc']))}: {first['msg']}", field=str(path)) from exc
    except ValueError as exc:
        raise ParamsError(str(exc), field=str(path)) from exc
    return reference
