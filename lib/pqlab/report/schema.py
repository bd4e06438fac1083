"""The schema of ``params/paper_reference.yaml``: every published claim as a row of one of four kinds, the named
references that normalise hardware rows, the papers' own consistency checks, coverage and "what differs and why".

Kinds (``kind:``), each judged its own way by :mod:`pqlab.report.verdicts`:

* ``exact`` — bytes, counts, codes: equal to the paper at its printed precision; a fraction of trials by its
  exact binomial interval at :data:`BINOMIAL_CONFIDENCE`.
* ``claim`` — the paper's statement as a ``predicate`` over this run's ``data``; the report shows that data.
* ``estimate`` — a model or simulation quantity: the paper's value inside this run's interval (``ci``, from the
  run's own samples, at the ``confidence`` its stage's metrics record) widened by half a unit of the paper's last
  printed digit.
* ``hardware`` — a time, rate or memory figure of the paper's machine: never judged alone; with a ``reference``
  operation measured on both machines (or ``normalised: true`` for a ratio of two such figures) the normalised
  value is judged within :data:`HARDWARE_TOLERANCE` — only when the row and its reference spend their time on the
  same resource (``resource`` / ``over``: the CPU in compiled code, storage, a TPM, an interpreter, on which of
  the paper's machines), on both sides; a ratio that mixes resources is shown, not judged.
* ``setting`` — a value this project configures (a trial or cycle count, a generator's input, a vector count it
  was told): shown and checked against the paper, never counted as reproduced or as differing.

Every claim carries ``paper_data``, the paper's own values of the names its predicate reads: a test evaluates each
predicate on them (they must pass, unless ``paper_inconsistent`` names the consistency check that shows the paper
contradicting itself) and, for a claim with a number (``target``), at ±25 % off it (they must fail).

A row with ``sensitivity:`` is an extra row (a model variant or assumption set) shown in its own table beside its
``main`` row; it never changes a main verdict. No tolerance that can make a row "reproduced" exceeds
:data:`MAX_RELATIVE_TOLERANCE` of the paper's value (a test reads the file and checks it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pqlab.config import read_yaml
from pqlab.errors import ParamsError
from pqlab.pipeline.metrics.by_stage import stage_model
from pqlab.pipeline.typed_metrics import StageMetrics, declared
from pqlab.report.expressions import ExpressionError, names
from pqlab.validation import first_problem

HARDWARE_TOLERANCE = (0.8, 1.25)   # normalised here/paper of a hardware row: at most ±25 %
BINOMIAL_CONFIDENCE = 0.95         # the report's own interval of a fraction of trials ("150/150")
MAX_RELATIVE_TOLERANCE = 0.25
KINDS = ("exact", "claim", "estimate", "hardware", "setting")
# what a time is spent on, and where: cpu:C, storage:C, python, tpm:F
RESOURCE = r"^[a-z+]+(:[A-Za-z0-9?]+)?$"
_KEY = r"[\w.*+-]+"
# a printed number: plain, with thousands separators (1,576 / 19 200), scientific (3.4e-7), or a fraction k/n
_NUMBER = re.compile(r"[+-]?(\d+|\d{1,3}([,\u2009\u202f ]\d{3})+)(\.\d+)?([eE][+-]?\d+)?|\d+\s*/\s*\d+")
_REF = re.compile(rf"^(?:([\w.-]+\.json):)?({_KEY})$")


@dataclass(frozen=True)
class Printed:
    """A number as the paper prints it: its value, its text and half a unit of its last printed digit."""

    value: float
    text: str
    half_unit: float

    @classmethod
    def parse(cls, raw: Any) -> Printed | None:
        """``2.6`` → half unit 0.05; ``"0.130"`` → 0.0005; ``"19 200"`` / ``1,576`` → 0.5; ``"3.4e-7"`` → 5e-9;
        ``"150/150"`` → 1.0 with half a trial (1/300); None for text that is not a number (a code, a phrase)."""
        if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            return None
        text = raw if isinstance(raw, str) else repr(raw)
        if isinstance(raw, str) and not _NUMBER.fullmatch(raw.strip()):
            return None  # a phrase ("8, 12, 16", "640 records, 10 fsync"), not a number with thousands separators
        plain = text.replace(",", "").replace(" ", "").replace("\u2009", "").replace("\u202f", "")
        fraction = re.fullmatch(r"(\d+)/(\d+)", plain)
        if fraction and int(fraction.group(2)) > 0:  # "150/150": a fraction of trials, to one trial's precision
            whole = int(fraction.group(2))
            return cls(int(fraction.group(1)) / whole, text, 0.5 / whole)
        try:
            number = Decimal(plain)
        except InvalidOperation:
            return None
        if not number.is_finite():
            return None
        exponent = number.as_tuple().exponent
        assert isinstance(exponent, int)
        return cls(float(number), text, 0.5 * 10.0 ** exponent)


def printed(raw: Any) -> Printed | None:
    return Printed.parse(raw)


def _check_expression(text: str | None, known: set[str], what: str) -> None:
    """ValueError unless ``text`` is in the expression language and names only ``known`` values."""
    if not text:
        return
    try:
        free = names(text)
    except ExpressionError as exc:
        raise ValueError(str(exc)) from None
    if free - known:
        raise ValueError(f"{text!r} uses {', '.join(sorted(free - known))}, not in {what}")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PaperInfo(_Frozen):
    title: str
    source: str
    machine: str


class Stage(_Frozen):
    """A DVC stage that feeds REPORT.md: its metrics file and how to read its sample sizes."""

    metrics: str = Field(pattern=r"^[\w.-]+\.json$")
    kind: Literal["measurement", "simulation", "model"]
    # label -> dotted key in the metrics file ("*" matches every key at one level): the sample sizes of the run
    samples: dict[str, str] = Field(default_factory=dict)


class NormalisingReference(_Frozen):
    """An operation measured on the paper's machine and on this one: hardware rows are compared after dividing by
    it. ``metrics`` are summed (e.g. a signature plus a write)."""

    name: str
    paper: int | float | str
    metrics: tuple[str, ...] = Field(min_length=1)
    where: str
    resource: str = Field(pattern=RESOURCE)        # what its time is spent on in the paper (and where)
    resource_here: str | None = Field(default=None, pattern=RESOURCE)  # here, when it differs in kind

    @property
    def spent_here(self) -> str:
        return self.resource_here or _machine_free(self.resource)

    @model_validator(mode="after")
    def _number(self) -> NormalisingReference:
        value = printed(self.paper)
        if value is None or value.value <= 0:
            raise ValueError(f"paper: {self.paper!r} must be a positive number")
        return self


def _machine_free(resource: str) -> str:
    """``cpu:C`` -> ``cpu``: here every measured stage runs on one machine."""
    return resource.partition(":")[0]


class Cells(_Frozen):
    """How many cells (scenarios, settings, hop counts) a range or aggregate spans here, and in the paper;
    ``run``: the key of how many this run's grid ran (the rest had no completed run)."""

    metric: str
    paper: int = Field(ge=1)
    run: str | None = None


class Failures(_Frozen):
    """Runs that failed beside a value computed over the completed ones. ``paper``: the failure rate the paper
    reports for it (0: none, so any failure here makes the row differ)."""

    rate: str | None = None
    count: str | None = None
    runs: str | None = None
    failed_in: str | None = None
    paper: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _some(self) -> Failures:
        if self.rate is None and self.count is None:
            raise ValueError("failures: give rate or count (keys of this run's metrics)")
        return self


class Marked(_Frozen):
    """A cell the paper marks (an asterisk: success below ``threshold``): marked here when this run's observed
    success rate (one minus ``failure_rate``) is below it — an interval's low end is below 99.5 % after 100 clean
    runs, so it cannot decide a mark; a cell the paper does not mark must have a success interval reaching the
    threshold."""

    paper: bool
    success: tuple[str, str]
    failure_rate: str | None = None   # the key of this run's observed failure rate (success = 1 - it)
    threshold: float = Field(gt=0.0, le=1.0)

    @model_validator(mode="after")
    def _observed(self) -> Marked:
        if self.paper and self.failure_rate is None:
            raise ValueError("a marked cell needs failure_rate: the key of this run's observed failure rate")
        return self


# int before float: a whole number printed without decimals keeps its precision (half a unit is 0.5)
Value = int | float | str | tuple[int | float | str, int | float | str]


class Quantity(_Frozen):
    """One published claim: where it is, its kind, the paper's value, and where this run's counterpart is stored."""

    id: str = Field(min_length=1, pattern=r"^[\w.+-]+$")
    paper: str
    where: str
    row: str
    column: str
    kind: Literal["exact", "claim", "estimate", "hardware", "setting"]
    value: Value                          # a number (quote it to keep trailing zeros), a code or phrase, or [lo, hi]
    unit: str
    metric: str                           # "<file>:<dotted key>": this run's value (a range's low end)
    metric_high: str | None = None        # a range's high end (omitted: the metric holds [low, high])
    scale: float = Field(default=1.0, gt=0.0)   # here × scale is in the paper's unit (B -> kB: 0.001)
    expr: str | None = None               # this run's value derived from ``data`` (instead of ``metric`` alone)
    data: dict[str, str] = Field(default_factory=dict)   # name -> key: the data a predicate or expr reads
    predicate: str | None = None          # claim: the paper's statement over ``data``
    ci: tuple[str, str] | None = None     # estimate: keys of the interval (of the low end for a range)
    ci_high: tuple[str, str] | None = None   # estimate: interval of a range's high end
    bound: Literal["<", "<=", ">", ">="] | None = None   # the paper states a bound, not a point
    resolution: float | None = Field(default=None, ge=0.0)  # overrides half a unit of the last printed digit
    reference: str | None = None          # hardware: a name in ``references:``
    normalised: bool = False              # hardware: the value is already a ratio of two operations on one machine
    cells: Cells | None = None
    failures: Failures | None = None
    marked: Marked | None = None
    n: str | None = None                  # key of the sample size behind the value (runs, trials, cells)
    library: str | None = None            # key naming the library that produced the value (default: sibling backend)
    paper_library: str | None = None
    sensitivity: str | None = None        # the model variant or assumption set: an extra row, never a main verdict
    main: str | None = None               # a sensitivity row's main row
    note: str | None = None
    # what the value's time is spent on (``cpu:C``: compiled code on the paper's machine C; ``storage:C``,
    # ``cpu+storage:C``, ``tpm:F``, ``python``...), in the paper and here; ``over``: the same for a ratio's
    # denominator (normalised: true). A ratio is judged across machines only when both sides match.
    resource: str | None = Field(default=None, pattern=RESOURCE)
    resource_here: str | None = Field(default=None, pattern=RESOURCE)
    over: str | None = Field(default=None, pattern=RESOURCE)
    over_here: str | None = Field(default=None, pattern=RESOURCE)
    complement: str | None = None         # 100 % minus this row's share is that row's: judged once, there
    rounding: Literal["nearest", "truncate"] = "nearest"   # truncate: the paper drops digits instead of rounding
    paper_data: dict[str, Any] | None = None   # claim: the paper's own values of the predicate's names
    target: str | None = None             # claim: the name in paper_data carrying the statement's number
    target_scale: Literal["linear", "decades"] = "linear"  # "three orders of magnitude": judged in decades
    paper_inconsistent: str | None = None  # claim: the consistency check showing the paper's values fail it

    @property
    def spent_here(self) -> str | None:
        return self.resource_here or (_machine_free(self.resource) if self.resource else None)

    @property
    def over_spent_here(self) -> str | None:
        return self.over_here or (_machine_free(self.over) if self.over else None)

    @model_validator(mode="after")
    def _consistent(self) -> Quantity:
        is_range = isinstance(self.value, tuple)
        ends = self.value if is_range else (self.value,)
        numbers = [printed(v) for v in ends]
        if is_range and (None in numbers or numbers[0].value > numbers[1].value):  # type: ignore[union-attr]
            raise ValueError("a range is [low, high] of two numbers")
        if self.kind == "claim" and not self.predicate:
            raise ValueError("a claim needs a predicate over its data")
        if self.kind != "claim" and self.predicate:
            raise ValueError(f"a predicate belongs to a claim, not to a {self.kind} row")
        if self.kind == "estimate":
            if self.ci is None or (is_range and self.ci_high is None):
                raise ValueError("an estimate needs ci (and ci_high for a range): this run's interval")
            if None in numbers:
                raise ValueError("an estimate's value is a number")
        elif self.ci is not None or self.ci_high is not None:
            raise ValueError(f"ci belongs to an estimate, not to a {self.kind} row")
        if self.kind != "hardware" and (self.reference or self.normalised):
            raise ValueError("reference and normalised belong to hardware rows")
        if self.kind == "hardware" and (self.reference or self.normalised) and not self.resource:
            raise ValueError("a judged hardware row names its resource (what its time is spent on, and where)")
        if self.normalised and not self.over:
            raise ValueError("a normalised ratio names the resource of its denominator (over:)")
        if self.over and not self.resource:
            raise ValueError("over: needs resource: (a ratio's two sides)")
        if self.kind == "claim" and self.paper_data is None:
            raise ValueError("a claim carries paper_data: the paper's own values of the names its predicate reads")
        if self.kind != "claim" and (self.paper_data is not None or self.target or self.paper_inconsistent):
            raise ValueError("paper_data, target and paper_inconsistent belong to claims")
        if self.paper_data is not None and self.predicate:
            try:
                wanted = names(self.predicate)
            except ExpressionError as exc:
                raise ValueError(str(exc)) from None
            if set(self.paper_data) != wanted:
                raise ValueError(f"paper_data names {sorted(self.paper_data)}, the predicate reads {sorted(wanted)}")
        if self.target is not None and self.target not in (self.paper_data or {}):
            raise ValueError(f"target {self.target!r} is not a name in paper_data")
        if self.kind == "setting" and (self.ci or self.predicate or self.reference):
            raise ValueError("a setting is compared like an exact row: no interval, predicate or reference")
        if self.reference and self.normalised:
            raise ValueError("a hardware row is normalised by a reference or is itself a ratio, not both")
        if self.kind == "hardware" and None in numbers:
            raise ValueError("a hardware row's value is a number")
        if self.bound is not None and (is_range or self.kind in ("exact", "estimate")):
            raise ValueError("a bound is a claim (predicate) or a hardware row with one number")
        if self.expr is not None and not self.data:
            raise ValueError("expr needs data (the names it reads)")
        if self.sensitivity is not None and self.main is None:
            raise ValueError("a sensitivity row names its main row (main:)")
        if self.sensitivity is None and self.main is not None:
            raise ValueError("main: belongs to a sensitivity row")
        for text in (self.predicate, self.expr):
            _check_expression(text, set(self.data) | {"here"}, "data")
        return self

    @property
    def is_range(self) -> bool:
        return isinstance(self.value, tuple)

    @property
    def ends(self) -> tuple[Printed | None, ...]:
        """The paper's number (or a range's two ends) as printed; None for a code or phrase. ``resolution``, when
        given, replaces half a unit of the last printed digit (a parameter or a count the paper states exactly)."""
        values = self.value if isinstance(self.value, tuple) else (self.value,)
        ends = tuple(printed(v) for v in values)
        if self.resolution is None:
            return ends
        return tuple(Printed(e.value, e.text, self.resolution) if e is not None else None for e in ends)

    def relative_tolerance(self, integer_metric: bool) -> float | None:
        """The largest deviation from the paper's value, relative to it, that this row's rule can accept as
        reproduced (0 for a count compared for equality; None where the rule is not a typed tolerance: a claim's
        predicate, an estimate's own interval (its rounding widening is counted), a hardware row never judged).
        ``integer_metric``: this run's value is an int (a count), so equality is exact."""
        if self.kind in ("claim", "setting") or (self.kind == "hardware" and not (self.reference or self.normalised)):
            return None
        if self.kind == "hardware":
            lo, hi = HARDWARE_TOLERANCE
            return max(1.0 - lo, hi - 1.0)
        widest = 0.0
        for end in self.ends:
            if end is None:
                continue  # a code or phrase: equal or not
            if self.kind == "exact" and integer_metric and self.scale == 1.0 and not self.expr:
                continue  # a count: equal or not
            if end.value == 0:
                if end.half_unit > 0 and not re.fullmatch(r"\s*0\s*/\s*\d+\s*", end.text):
                    return math.inf  # "0" rounds anything below half a unit to it: no relative meaning
                continue  # 0/n: a fraction of trials at one trial's precision
            unit = 2 * end.half_unit if self.rounding == "truncate" else end.half_unit
            widest = max(widest, unit / abs(end.value))
        return widest

    @property
    def metrics_file(self) -> str:
        return self.metric.partition(":")[0]

    @property
    def key(self) -> str:
        return self.metric.partition(":")[2]

    def refs(self) -> list[tuple[str, str]]:
        """(what, reference) of every metrics key this row reads."""
        out = [("metric", self.metric)]
        out += [("metric_high", self.metric_high)] if self.metric_high else []
        for label, pair in (("ci", self.ci), ("ci_high", self.ci_high)):
            out += [(label, r) for r in pair or ()]
        out += [(f"data.{name}", r) for name, r in self.data.items()]
        if self.cells:
            out.append(("cells.metric", self.cells.metric))
            out += [("cells.run", self.cells.run)] if self.cells.run else []
        if self.failures:
            out += [(f"failures.{f}", getattr(self.failures, f)) for f in ("rate", "count", "runs", "failed_in")
                    if getattr(self.failures, f)]
        if self.marked:
            out += [("marked.success", r) for r in self.marked.success]
            out += [("marked.failure_rate", self.marked.failure_rate)] if self.marked.failure_rate else []
        out += [("n", self.n)] if self.n else []
        out += [("library", self.library)] if self.library else []
        return out


class Consistency(_Frozen):
    """A check that uses only the paper's own numbers (``inputs``: name -> the printed number), or a model bound
    this project computes (``"<file>:<key>"``): ``result`` computed from the inputs and compared with the paper's
    ``printed`` value, or ``holds``, a condition the paper's numbers must satisfy together."""

    id: str = Field(min_length=1, pattern=r"^[\w.+-]+$")
    paper: str
    where: str
    check: str
    inputs: dict[str, int | float | str]
    result: str | None = None
    printed: int | float | str | None = None
    holds: str | None = None
    exact_inputs: bool = False   # the inputs are exact (bytes, counts): no rounding interval
    note: str | None = None
    # "paper": the published numbers alone; "model": a bound this project computes enters (an input "<file>:<key>"),
    # so a failure is the paper against this project's model, not an inconsistency of its numbers alone
    basis: Literal["paper", "model"] = "paper"

    @model_validator(mode="after")
    def _shape(self) -> Consistency:
        if (self.printed is None) == (self.holds is None):
            raise ValueError("a consistency check has exactly one of printed (with result) or holds")
        if self.printed is not None and (self.result is None or printed(self.printed) is None):
            raise ValueError("printed needs a result expression and must be a number")
        from_run = False
        for name, raw in self.inputs.items():
            if printed(raw) is None and not (isinstance(raw, str) and _REF.match(raw) and ":" in raw):
                raise ValueError(f"inputs.{name}: {raw!r} is neither a printed number nor a <file>:<key>")
            from_run = from_run or printed(raw) is None
        if from_run and self.basis != "model":
            raise ValueError("a check with an input from this run's metrics is a model bound (basis: model)")
        for text in (self.result, self.holds):
            _check_expression(text, set(self.inputs), "inputs")
        return self


class CoverageItem(_Frozen):
    """One table, figure, equation or group of text numbers of a paper, what reproduces it and its main rows."""

    id: str = Field(min_length=1)
    paper: str
    item: str
    what: str
    stage: str | None = None
    # paths relative to the project root; without a suffix, any file ``stem.*`` counts (a table's .csv/.md)
    outputs: tuple[str, ...] = ()
    rows: tuple[str, ...] = Field(min_length=1)  # id patterns (fnmatch) of the main rows that check it
    kind: Literal["result", "model", "illustration"] = "result"
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CoverageItem:
        for output in self.outputs:
            pure = PurePosixPath(output)
            if pure.is_absolute() or ".." in pure.parts:
                raise ValueError(f"output {output!r} must be a path inside the project")
        if self.kind != "result" and not self.note:
            raise ValueError(f"a {self.kind} item needs a note")
        return self


class Cited(_Frozen):
    """A number a paper quotes from other work: listed, never a row."""

    paper: str
    where: str
    what: str


class Difference(_Frozen):
    """One "what differs and why" entry; ``evidence`` names metrics ("file" or "file:dotted.key") shown beside."""

    topic: str
    paper: str
    here: str
    evidence: tuple[str, ...] = ()


class CrossCheck(_Frozen):
    """A claim about this project's own tools checked against an independent implementation (kind "crosscheck":
    pqlab's Thread transport against ns-3). Judged apart from the papers' rows: the predicate over this run's data,
    never a paper's number; ``source`` says where a difference comes from, ``paper_side`` which of the two the
    paper's numbers sit closer to (both with the metrics that show it, in ``data``)."""

    id: str = Field(min_length=1, pattern=r"^[\w.+-]+$")
    claim: str
    data: dict[str, str] = Field(min_length=1)   # name -> "<file>:<dotted key>"
    predicate: str
    source: str
    paper_side: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _expression(self) -> CrossCheck:
        _check_expression(self.predicate, set(self.data), "data")
        return self


class Reference(_Frozen):
    papers: dict[str, PaperInfo]
    stages: dict[str, Stage]
    references: dict[str, NormalisingReference] = Field(default_factory=dict)
    quantities: tuple[Quantity, ...]
    consistency: tuple[Consistency, ...] = ()
    coverage: tuple[CoverageItem, ...] = ()
    cited: tuple[Cited, ...] = ()
    differences: tuple[Difference, ...] = ()
    crosschecks: tuple[CrossCheck, ...] = ()   # kind "crosscheck": this project's tools against independent ones

    def stage_of(self, metrics_file: str) -> str | None:
        """The stage that writes ``metrics_file``."""
        return next((name for name, stage in self.stages.items() if stage.metrics == metrics_file), None)

    def main_rows(self) -> tuple[Quantity, ...]:
        return tuple(q for q in self.quantities if q.sensitivity is None)

    def rows_of(self, item: CoverageItem) -> list[Quantity]:
        """The main rows a coverage item's patterns match."""
        return [q for q in self.main_rows() if any(fnmatchcase(q.id, p) for p in item.rows)]


def resolve(ref: str, default_file: str) -> tuple[str, str]:
    """(file, dotted key) of ``"<file>:<key>"`` or of a bare ``"<key>"`` in ``default_file``."""
    match = _REF.match(ref)
    if not match:
        raise ValueError(f"{ref!r} is not <file>:<dotted key> or <dotted key>")
    return match.group(1) or default_file, match.group(2)


def _locate(raw: Any, loc: tuple[Any, ...]) -> str:
    """A validation error's location, naming a row or coverage item by its id rather than its index."""
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


ModelLookup = Callable[[str], "type[StageMetrics] | None"]


def _check_key(reference: Reference, files: dict[str, str], where: str, ref: str, default_file: str,
               models: ModelLookup) -> None:
    try:
        filename, key = resolve(ref, default_file)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if filename not in files:
        raise ValueError(f"{where}: {filename} is written by no stage in stages:")
    model = models(files[filename])
    if model is not None:
        why = declared(model, key)
        if why is not None:
            raise ValueError(f"{where}: {filename}:{key}: {why}")


def _register(seen: set[str], where: str, ident: str, paper: str, papers: Any) -> None:
    """Add ``ident`` to ``seen``; ValueError naming ``where`` for a duplicate id or a paper not in ``papers``."""
    if ident in seen:
        raise ValueError(f"{where}: duplicate id")
    seen.add(ident)
    if paper not in papers:
        raise ValueError(f"{where}.paper: unknown paper {paper!r}")


def _check_references(reference: Reference, models: ModelLookup) -> None:
    """Cross-field rules: papers, stages, metrics files and keys named anywhere must exist (each key declared by its
    stage's typed metrics model); ids are unique; every sensitivity row has a main row; every coverage item has
    main rows."""
    files = {stage.metrics: name for name, stage in reference.stages.items()}
    if len(files) != len(reference.stages):
        raise ValueError("stages: two stages name the same metrics file")
    for name, ref in reference.references.items():
        for metric in ref.metrics:
            _check_key(reference, files, f"references.{name}.metrics", metric, "", models)
    seen: set[str] = set()
    main_ids = {q.id for q in reference.quantities if q.sensitivity is None}
    for q in reference.quantities:
        where = f"quantities (id {q.id})"
        _register(seen, where, q.id, q.paper, reference.papers)
        if ":" not in q.metric:
            raise ValueError(f"{where}.metric: {q.metric!r} must be <file>:<dotted key>")
        for label, ref in q.refs():
            _check_key(reference, files, f"{where}.{label}", ref, q.metrics_file, models)
        if q.reference is not None and q.reference not in reference.references:
            raise ValueError(f"{where}.reference: {q.reference!r} is not in references:")
        if q.main is not None and q.main not in main_ids:
            raise ValueError(f"{where}.main: {q.main!r} is not the id of a main (non-sensitivity) row")
    _check_judgement(reference, main_ids)
    for x in reference.crosschecks:
        if x.id in seen:
            raise ValueError(f"crosschecks (id {x.id}): duplicate id")
        seen.add(x.id)
        for name, ref in x.data.items():
            if ":" not in ref:
                raise ValueError(f"crosschecks (id {x.id}).data.{name}: {ref!r} must be <file>:<dotted key>")
            _check_key(reference, files, f"crosschecks (id {x.id}).data.{name}", ref, "", models)
    for c in reference.consistency:
        _register(seen, f"consistency (id {c.id})", c.id, c.paper, reference.papers)
        for name, raw in c.inputs.items():
            if printed(raw) is None:
                _check_key(reference, files, f"consistency (id {c.id}).inputs.{name}", str(raw), "", models)
    items: set[str] = set()
    for c in reference.coverage:
        _register(items, f"coverage (id {c.id})", c.id, c.paper, reference.papers)
        if c.stage is not None and c.stage not in reference.stages:
            raise ValueError(f"coverage (id {c.id}).stage: unknown stage {c.stage!r}")
        if not reference.rows_of(c):
            raise ValueError(f"coverage (id {c.id}): no main row matches {', '.join(c.rows)} "
                             "(every item is checked by at least one main row)")
    for d in reference.differences:
        for evidence in d.evidence:
            if evidence.partition(":")[0] not in files:
                raise ValueError(f"differences ({d.topic}).evidence: {evidence} is in no stage's metrics file")


SHARE_UNIT = "%"


def _check_judgement(reference: Reference, main_ids: set[str]) -> None:
    """Rules on how rows are judged: no two rows are each other's references (one comparison counted twice); a
    share whose ×1.25 passes 100 % is judged as its complement (a share near 100 % cannot fail the band); a
    complement names a main row; every measuring or simulating stage says where its sample sizes are (each row
    carries n)."""
    by_metric: dict[str, Quantity] = {q.metric: q for q in reference.main_rows()}
    for q in reference.main_rows():
        where = f"quantities (id {q.id})"
        if q.reference:
            for metric in reference.references[q.reference].metrics:
                other = by_metric.get(metric)
                if other is not None and other.reference and \
                        q.metric in reference.references[other.reference].metrics:
                    raise ValueError(f"{where}.reference: {q.id} and {other.id} are each other's reference: one "
                                     "comparison counted twice (judge one, let the other be the reference)")
        if q.complement is not None and q.complement not in main_ids:
            raise ValueError(f"{where}.complement: {q.complement!r} is not the id of a main row")
        judged = q.kind == "estimate" or (q.kind == "hardware" and (q.reference or q.normalised))
        first = q.ends[0]
        if judged and q.unit == SHARE_UNIT and first is not None and first.value * HARDWARE_TOLERANCE[1] > 100 \
                and q.complement is None:
            raise ValueError(f"{where}: a share of {first.text} % cannot fail a ×{HARDWARE_TOLERANCE[0]:g}–"
                             f"{HARDWARE_TOLERANCE[1]:g} band (it cannot pass 100 %): judge its complement "
                             "(complement: the row of 100 % minus it)")
    for name, stage in reference.stages.items():
        if stage.kind != "model" and not stage.samples:
            raise ValueError(f"stages.{name}.samples: a {stage.kind} stage says where its sample sizes are (every "
                             "row carries n)")


def load_reference(path: Path, models: ModelLookup = stage_model) -> Reference:
    """Read and strictly validate ``params/paper_reference.yaml`` (errors name the row id and the field); every
    metrics key a row reads must be declared by its stage's typed metrics model (``models``)."""
    raw = read_yaml(path, "paper reference")  # UTF-8, no duplicate keys, bounded nesting: else one ParamsError
    try:
        reference = Reference.model_validate(raw)
        _check_references(reference, models)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ParamsError(f"{_locate(raw, problem.loc)}: {problem.message}", field=str(path)) from exc
    except ValueError as exc:
        raise ParamsError(str(exc), field=str(path)) from exc
    return reference
