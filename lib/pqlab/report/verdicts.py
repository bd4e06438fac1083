"""Each reference row's verdict, judged the way its kind says (exact, claim, estimate, hardware), with its reasons.

Verdicts: **reproduced**, **differs**, **inconclusive** (the paper's value lies inside this run's interval, but the
interval is wider than ±25 % of it: too few samples to tell a difference), **measurement failed** (the study's own
sanity checks caught a contradiction in the numbers the row reads), **not judged** (a hardware figure with no
reference operation, or a ratio whose two sides are spent on different resources: shown, never counted either way),
**not run here** (the stage has not run, or the paper's library is absent on this machine) and **setting** (a
value this project configures: shown and checked, never counted). A row's value carries its sample size n, its
failures (runs that did not complete), the cells it spans and whether it is marked as the paper marks it; a row
over zero trials or fewer cells than the paper's differs, and the reason says which.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

from pqlab.errors import MetricsMismatchError
from pqlab.pipeline import registry
from pqlab.report.expressions import ExpressionError, evaluate
from pqlab.report.metrics import MISSING, MetricsTree, absence, describe_value, lookup, lookup_all, number, parent
from pqlab.report.schema import BINOMIAL_CONFIDENCE, HARDWARE_TOLERANCE, Printed, Quantity, Reference, resolve
from pqlab.stats import level

# Backends whose name differs from how the paper names its library but that are the same code.
_SAME_LIBRARY = {"hashlib": "OpenSSL (C)", "libcrypto": "OpenSSL (C)", "native": "OpenSSL (C)", "openssl": "openssl"}
_EPS = 1e-9
WIDE_INTERVAL = 0.5  # an estimate's interval wider than half the paper's value is called wide in its reason


class Verdict(StrEnum):
    REPRODUCED = "reproduced"
    DIFFERS = "differs"
    INCONCLUSIVE = "inconclusive"
    FAILED = "measurement failed"
    NOT_JUDGED = "not judged"
    NOT_RUN = "not run here"
    SETTING = "setting"


VERDICT_ORDER = (Verdict.REPRODUCED, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.FAILED, Verdict.NOT_JUDGED,
                 Verdict.NOT_RUN)
FINDINGS = ("exact", "claim", "estimate", "hardware")  # the kinds the headline counts; settings are apart
_FRACTION = re.compile(r"^\s*\d+\s*/\s*\d+\s*$")


@dataclass(frozen=True)
class Outcome:
    """A row's verdict, its reasons, and what it was judged on."""

    verdict: Verdict
    reasons: tuple[str, ...]
    here: Any = None                     # this run's value (a range's low end); a claim's primary datum
    here_high: float | None = None       # a range's high end
    interval: tuple[float, float] | None = None        # the interval of the value (or of the low end)
    interval_high: tuple[float, float] | None = None   # of a range's high end
    confidence: float | None = None                    # the intervals' level
    normalised: float | None = None      # hardware: (here / here's reference) / (paper / paper's reference)
    data: dict[str, Any] = field(default_factory=dict)  # what a claim or derived value was evaluated on
    n: float | None = None
    failure_rate: float | None = None
    cells: tuple[int, int] | None = None  # (here, paper)
    produced_by: str = ""
    setting_matches: bool | None = None   # a setting row: whether the configured value is the paper's


class _NotRun(Exception):
    """This run has no value for the row, for a reason that is not an error (stage not run, library absent)."""


def in_pipeline(stage: str) -> bool:
    """Whether ``stage`` is a stage of the pipeline (:mod:`pqlab.pipeline.registry`)."""
    return stage in registry.BY_NAME


def missing_file(stage: str | None, filename: str, pipeline: Callable[[str], bool] = in_pipeline) -> str:
    """Why a stage's metrics file is absent: the stage has not run, or it is not in the pipeline yet."""
    if stage is None:
        return f"{filename} missing"
    if pipeline(stage):
        return f"{filename} missing: stage `{stage}` has not run"
    return f"stage `{stage}` is not in this pipeline yet (open item; it will write {filename})"


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return str(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3g}"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return describe_value(value)


def _code(text: Any) -> str:
    """A protocol code or short phrase compared loosely: case, underscores and spacing do not matter."""
    return re.sub(r"\s+", " ", str(text).replace("_", " ").replace("-", " ")).strip().upper()


class _Reader:
    """This run's values for one row: a missing stage or library is ``_NotRun``; any other missing key an error."""

    def __init__(self, q: Quantity, reference: Reference, tree: MetricsTree,
                 pipeline: Callable[[str], bool]) -> None:
        self.q, self.reference, self.tree, self.pipeline = q, reference, tree, pipeline

    def get(self, ref: str) -> Any:
        filename, key = resolve(ref, self.q.metrics_file)
        document = self.tree.document(filename)
        if document is None:
            raise _NotRun(missing_file(self.reference.stage_of(filename), filename, self.pipeline))
        value = lookup(document, key)
        if value is not MISSING:
            return value
        gap = absence(document, key)
        node = lookup(document, gap.found) if gap.found else document
        if node is None:  # a parent holds null: the stage had nothing to report there
            return None
        library = self.q.paper_library
        if library and gap.missing == library:
            raise _NotRun(library_absent(self.tree, library, gap.present))
        present = f" (present: {', '.join(gap.present[:20])}{', …' if len(gap.present) > 20 else ''})" \
            if gap.present else ""
        under = f" under `{gap.found}`" if gap.found else ""
        if document.get("profile") == "smoke":
            raise _NotRun(f"the smoke profile's run has no `{gap.missing}`{under}{present}")
        raise MetricsMismatchError(
            f"row {self.q.id}: `{key}` has no `{gap.missing}`{under}{present}: this run left it out, or the key was "
            "renamed; rerun the stage with its default parameters or fix the row", field=filename)


def library_absent(tree: MetricsTree, library: str, present: tuple[str, ...] = ()) -> str:
    """"liboqs absent on this machine (why); timed here on openssl, pqcrypto"."""
    costs = tree.document("costs_metrics.json") if "costs_metrics.json" in tree.stages else None
    reason = ((costs or {}).get("backends_absent") or {}).get(library)
    timed = f"; timed here on {', '.join(present)}" if present else ""
    if isinstance(reason, str) and reason:
        return f"{library} absent on this machine ({reason}){timed}"
    return f"{library} did not run here{timed}"


def _absent_libraries(tree: MetricsTree) -> dict[str, str]:
    costs = tree.document("costs_metrics.json") if "costs_metrics.json" in tree.stages else None
    absent = (costs or {}).get("backends_absent") or {}
    return absent if isinstance(absent, dict) else {}


def _library_reason(tree: MetricsTree, wanted: str | None, backend: str | None) -> str | None:
    """Which library produced the row, against the paper's: says so whether they match or not."""
    if not wanted or not backend:
        return None
    if _SAME_LIBRARY.get(backend, backend) == wanted or backend == wanted:
        return f"produced by {backend}, the paper's library"
    absent = wanted in _absent_libraries(tree)
    return f"library differs: paper {wanted}, here {backend}" + (f" ({wanted} absent on this machine)"
                                                                  if absent else "")


def _failures(q: Quantity, reader: _Reader) -> tuple[float, str] | None:
    """(failure rate, description) of the runs behind the value, or None when the row has no failure record."""
    rate = count = runs = failed_in = None
    if q.failures is not None:
        f = q.failures
        rate = number(reader.get(f.rate)) if f.rate else None
        count = number(reader.get(f.count)) if f.count else None
        runs = number(reader.get(f.runs)) if f.runs else None
        failed_in = reader.get(f.failed_in) if f.failed_in else None
        if rate is None and count is not None and runs:
            rate = count / runs
        if count is None and rate is not None and runs:
            count = round(rate * runs)
    else:  # the transport stage's convention: <stem>_<unit> beside <stem>_failure_rate and <stem>_failed_in
        leaf = q.key.rsplit(".", 1)[-1]
        if "_" not in leaf:
            return None
        holder = parent(reader.tree.document(q.metrics_file), q.key)
        stem = leaf.rsplit("_", 1)[0]
        rate = number(holder.get(f"{stem}_failure_rate"))
        failed_in = holder.get(f"{stem}_failed_in")
        runs = number(holder.get(f"{stem}_runs"))
        count = round(rate * runs) if rate is not None and runs else None
    if rate is None:
        return None
    where = ""
    if isinstance(failed_in, str) and failed_in:
        where = f", in {failed_in}"
    elif isinstance(failed_in, (list, tuple)) and failed_in:
        where = f", in {', '.join(map(str, failed_in))}"
    elif isinstance(failed_in, dict) and failed_in:
        where = ", in " + ", ".join(f"{k} ({v})" for k, v in sorted(failed_in.items()))
    counted = f"{count:,.0f} of {runs:,.0f} runs failed ({rate:.1%})" if count is not None and runs else \
        f"{rate:.1%} of runs failed"
    return rate, counted + where


def _interval(reader: _Reader, keys: tuple[str, str] | None, scale: float) -> tuple[float, float] | None:
    """The interval at two keys, or at one key named twice that holds [low, high]."""
    if keys is None:
        return None
    if keys[0] == keys[1]:
        pair = reader.get(keys[0])
        lo, hi = (number(v) for v in pair) if isinstance(pair, list) and len(pair) == 2 else (None, None)
    else:
        lo, hi = (number(reader.get(k)) for k in keys)
    if lo is None or hi is None:
        return None
    return lo * scale, hi * scale


def _inside(value: float, interval: tuple[float, float], widen: float) -> bool:
    lo, hi = interval
    return lo - widen - _EPS * max(1.0, abs(value)) <= value <= hi + widen + _EPS * max(1.0, abs(value))


def _exact(q: Quantity, here: Any, end: Printed | None, raw_value: Any) -> tuple[bool, str]:
    if end is None:  # a code or phrase
        ok = _code(here) == _code(raw_value)
        return ok, "" if ok else f"here {here!r}, the paper {raw_value!r}"
    value = number(here)
    if value is None:
        return False, f"here {here!r} is not a number"
    if isinstance(here, int) and not isinstance(here, bool) and q.scale == 1.0 and not q.expr:
        ok = value == end.value  # a count: equal or not
        return ok, "" if ok else f"here {here:,}, the paper {end.text}: a count is equal or not"
    slack = _EPS * max(1.0, abs(end.value))
    if q.rounding == "truncate":  # the paper drops the digits after its last one: [printed, printed + a unit)
        ok = end.value - slack <= value < end.value + 2 * end.half_unit + slack
        return ok, "" if ok else (f"here {_fmt(value)} does not truncate to {end.text} (the paper drops digits "
                                  "here instead of rounding)")
    ok = abs(value - end.value) <= end.half_unit + slack
    return ok, "" if ok else (f"here {_fmt(value)} is not {end.text} at the paper's precision "
                              f"(±{end.half_unit:g})")


def _portability(q: Quantity, reader: _Reader) -> str | None:
    """Why the row's ratio cannot be carried between machines (its two sides spend their time on different
    resources, in the paper or here), or None when it can. A claim or ratio without ``resource`` is not a
    cross-machine ratio."""
    if q.reference:
        ref = reader.reference.references[q.reference]
        sides = ((q.resource, ref.resource), (q.spent_here, ref.spent_here), f"its reference ({ref.name})")
    elif q.over:
        sides = ((q.resource, q.over), (q.spent_here, q.over_spent_here), "its denominator")
    else:
        return None
    (paper_top, paper_bottom), (here_top, here_bottom), what = sides
    if paper_top == paper_bottom and here_top == here_bottom:
        return None
    mismatch = []
    if paper_top != paper_bottom:
        mismatch.append(f"in the paper {paper_top} against {what} on {paper_bottom}")
    if here_top != here_bottom:
        mismatch.append(f"here {here_top} against {here_bottom}")
    return ("not portable: the value is spent " + " and ".join(mismatch) + ", so the ratio depends on how fast one "
            "resource is against the other on each machine")


def _hardware(q: Quantity, reader: _Reader, here: float, here_high: float | None,
              ) -> tuple[Verdict, list[str], float | None]:
    lo_tol, hi_tol = HARDWARE_TOLERANCE
    ends = q.ends
    plain = here / ends[0].value if ends[0] and ends[0].value else None  # type: ignore[union-attr]
    shown = f"here/paper = {plain:.3g}" if plain is not None else "no ratio"
    if here <= 0:
        return Verdict.DIFFERS, [f"here {_fmt(here)}: no measurement (a time or rate of zero is a run that measured "
                                 "nothing)"], None
    unportable = _portability(q, reader)
    if unportable:
        return Verdict.NOT_JUDGED, [f"{unportable}: shown, not judged ({shown})"], None
    if q.normalised:
        ratio = here / ends[0].value  # type: ignore[union-attr]
        basis = f"a ratio of two operations on one machine, both on {q.resource}, compared directly"
    elif q.reference:
        ref = reader.reference.references[q.reference]
        paper_ref = Printed.parse(ref.paper)
        assert paper_ref is not None
        try:
            values = [number(reader.get(m)) for m in ref.metrics]
        except _NotRun as exc:
            return Verdict.NOT_JUDGED, [f"a figure of the paper's machine; its reference ({ref.name}) is not "
                                        f"measured here: {exc}"], None
        if any(v is None or v <= 0 for v in values):
            return Verdict.NOT_JUDGED, [f"its reference ({ref.name}) has no value here"], None
        here_ref = sum(values)  # type: ignore[arg-type]
        ratio = (here / here_ref) / (ends[0].value / paper_ref.value)  # type: ignore[union-attr]
        by = ", ".join(sorted({b for m in ref.metrics if (b := _sibling_backend(reader, m))}))
        basis = (f"normalised by {ref.name}: here {_fmt(here)} / {_fmt(here_ref)}"
                 f"{f' ({by})' if by else ''} against the paper's {ends[0].text} / {paper_ref.text}")
    else:
        return Verdict.NOT_JUDGED, [f"a figure of the paper's machine and library, with no reference operation "
                                    f"measured on both: shown, not judged ({shown})"], None
    if q.bound in ("<", "<="):
        ok = ratio <= hi_tol
        test = f"≤ {hi_tol:g} × the paper's bound"
    elif q.bound in (">", ">="):
        ok = ratio >= lo_tol
        test = f"≥ {lo_tol:g} × the paper's bound"
    else:
        ok = lo_tol <= ratio <= hi_tol
        test = f"within ×{lo_tol:g}–{hi_tol:g}"
    if here_high is not None and not q.normalised and q.reference:
        high_ratio = ratio * (here_high / here) / (ends[1].value / ends[0].value)  # type: ignore[union-attr]
        ok = ok and lo_tol <= high_ratio <= hi_tol
        basis += f"; high end {high_ratio:.3g}"
    text = f"{basis}: normalised {ratio:.3g} " + ("is " if ok else "is not ") + test
    return (Verdict.REPRODUCED if ok else Verdict.DIFFERS), [text], ratio


def _sibling_backend(reader: _Reader, ref: str) -> str | None:
    """The ``backend`` recorded beside a metric (the library that produced it), if any."""
    filename, key = resolve(ref, reader.q.metrics_file)
    backend = parent(reader.tree.document(filename), key).get("backend")
    return backend if isinstance(backend, str) else None


def _backend(q: Quantity, reader: _Reader) -> str | None:
    if q.library:
        value = reader.get(q.library)
        return value if isinstance(value, str) else None
    return _sibling_backend(reader, q.metric)


def judge(q: Quantity, reference: Reference, tree: MetricsTree,
          pipeline: Callable[[str], bool] = in_pipeline) -> Outcome:
    """The verdict of one row against this run's metrics."""
    stage = reference.stage_of(q.metrics_file) or q.metrics_file
    note = (q.note,) if q.note else ()
    reader = _Reader(q, reference, tree, pipeline)
    try:
        return _judge(q, reader, stage, note)
    except _NotRun as exc:
        library = q.paper_library if q.paper_library and str(exc).startswith(q.paper_library) else None
        return Outcome(Verdict.NOT_RUN, (str(exc), *note),
                       produced_by=f"{stage} (no {library})" if library else stage)


def _read_refs(q: Quantity, reference: Reference) -> list[str]:
    """Every "<file>:<key>" the row's verdict depends on, its reference operation's included."""
    out = [f"{f}:{k}" for f, k in (resolve(r, q.metrics_file) for _, r in q.refs())]
    if q.reference:
        out += [f"{f}:{k}" for f, k in (resolve(m, "") for m in reference.references[q.reference].metrics)]
    return out


def _sanity_failure(q: Quantity, reader: _Reader) -> str | None:
    """The cause of a failed sanity check of a study whose invalidated keys the row reads, if any."""
    for ref in _read_refs(q, reader.reference):
        filename, _, key = ref.partition(":")
        document = reader.tree.document(filename)
        sanity = document.get("sanity") if isinstance(document, dict) else None
        if not isinstance(sanity, dict):
            continue
        for failure in sanity.get("failed") or ():
            if any(key == k or key.startswith(k + ".") for k in failure.get("keys", ())):
                stage = reader.reference.stage_of(filename) or filename
                return f"measurement failed: stage `{stage}`'s sanity check \"{failure['check']}\": {failure['cause']}"
    return None


def _sample_size(q: Quantity, reader: _Reader) -> float | None:
    """n: the row's own sample-size key, else the smallest of its stage's declared sample sizes (None for a model
    stage: exact by construction)."""
    if q.n:
        return number(reader.get(q.n))
    stage = reader.reference.stage_of(q.metrics_file)
    spec = reader.reference.stages.get(stage) if stage else None
    if spec is None or not spec.samples:
        return None
    document = reader.tree.document(spec.metrics)
    sizes = [number(v) for key in spec.samples.values() for v in lookup_all(document, key)]
    sizes = [s for s in sizes if s is not None]
    return min(sizes) if sizes else None


def _binomial(successes: int, trials: int) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a fraction of trials at :data:`BINOMIAL_CONFIDENCE` (scipy)."""
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=BINOMIAL_CONFIDENCE, method="exact")
    return float(ci.low), float(ci.high)


def _confidence(q: Quantity, reader: _Reader) -> float:
    """The level of the intervals in the row's metrics file (``confidence``, its stage's parameter)."""
    document = reader.tree.document(q.metrics_file)
    value = document.get("confidence") if isinstance(document, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetricsMismatchError(f"row {q.id}: an estimate's metrics file records no `confidence` (the level of "
                                   "its intervals); rerun its stage", field=q.metrics_file)
    return float(value)


def _band(paper: float, fraction: bool) -> tuple[float, float] | None:
    """The ±25 % band (×0.8–1.25) around a paper value an interval must fit in to tell a difference; a fraction
    of zero mirrors one (the interval's top at most 0.2); None where a relative band has no meaning (zero)."""
    lo_tol, hi_tol = HARDWARE_TOLERANCE
    if paper > 0:
        return lo_tol * paper, hi_tol * paper
    if paper < 0:
        return hi_tol * paper, lo_tol * paper
    return (0.0, 1.0 - lo_tol) if fraction else None


def _too_wide(end: Printed, interval: tuple[float, float], fraction: bool = False) -> bool:
    band = _band(end.value, fraction)
    if band is None:
        return False
    return interval[0] < band[0] - end.half_unit - _EPS or interval[1] > band[1] + end.half_unit + _EPS


def _estimate(q: Quantity, reader: _Reader, ends: tuple[Printed | None, ...]
              ) -> tuple[Verdict, list[str], tuple | None, tuple | None, float]:
    interval = _interval(reader, q.ci, q.scale)
    confidence = _confidence(q, reader)
    interval_high = _interval(reader, q.ci_high, q.scale) if q.is_range else None
    checks = [(ends[0], interval, "")] + ([(ends[1], interval_high, "high end ")] if q.is_range else [])
    verdict, reasons = Verdict.REPRODUCED, []
    for end, iv, label in checks:
        assert end is not None
        fraction = bool(_FRACTION.match(end.text))
        if iv is None:
            verdict = Verdict.DIFFERS
            reasons.append(f"{label}no interval: this run's samples give none")
        elif not _inside(end.value, iv, end.half_unit):
            verdict = Verdict.DIFFERS
            reasons.append(f"{label}paper {end.text} outside this run's {level(confidence)} interval "
                           f"{_fmt(iv[0])}–{_fmt(iv[1])} (widened by ±{end.half_unit:g} for its rounding)")
        elif _too_wide(end, iv, fraction):
            if verdict is Verdict.REPRODUCED:
                verdict = Verdict.INCONCLUSIVE
            reasons.append(f"{label}paper {end.text} inside this run's {level(confidence)} interval "
                           f"{_fmt(iv[0])}–{_fmt(iv[1])}, "
                           "which is wider than ±25 % of it: too few samples to tell a difference (the paper "
                           "profile's runs narrow it)")
    return verdict, reasons, interval, interval_high, confidence


def _fraction(q: Quantity, end: Printed, here: float, n: float | None) -> tuple[Verdict, list[str], tuple | None]:
    """A fraction of trials ("150/150"): the paper's inside this run's binomial interval for the n it has."""
    if n is None or n < 1:
        return Verdict.DIFFERS, [f"a fraction over {0 if n is None else int(n)} trials: nothing to judge"], None
    trials = round(n)
    successes = round(here * trials)
    interval = _binomial(successes, trials)
    if not _inside(end.value, interval, end.half_unit):
        return Verdict.DIFFERS, [f"{successes}/{trials} here: the paper's {end.text} is outside its "
                                 f"{level(BINOMIAL_CONFIDENCE)} binomial interval "
                                 f"{interval[0]:.3g}–{interval[1]:.3g}"], interval
    if _too_wide(end, interval, fraction=True):
        return Verdict.INCONCLUSIVE, [f"{successes}/{trials} here: the paper's {end.text} is inside its "
                                      f"{level(BINOMIAL_CONFIDENCE)} binomial interval "
                                      f"{interval[0]:.3g}–{interval[1]:.3g}, which is wider than ±25 %: "
                                      "too few trials to tell"], interval
    return Verdict.REPRODUCED, [f"{successes}/{trials} here, {level(BINOMIAL_CONFIDENCE)} binomial interval "
                                f"{interval[0]:.3g}–{interval[1]:.3g}"], interval


def _setting(q: Quantity, here: Any, reader: _Reader) -> tuple[bool, str]:
    ends = q.ends
    ok, why = _exact(q, here, ends[0], q.value if not q.is_range else q.value[0])
    document = reader.tree.document(q.metrics_file) or {}
    profile = document.get("profile")
    if ok:
        return True, "a configured value: it is the paper's (shown, not counted)"
    return False, (f"a configured value: {why or 'not the paper’s'}; the {profile or 'current'} profile sets it "
                   "(a profile note, not a finding; shown, not counted)")


def _judge(q: Quantity, reader: _Reader, stage: str, note: tuple[str, ...]) -> Outcome:
    tree = reader.tree
    raw = reader.get(q.metric)
    data = {name: reader.get(ref) for name, ref in q.data.items()}
    here: Any = raw
    if q.expr:
        if any(v is None for v in data.values()):
            here = None
        else:
            try:
                here = evaluate(q.expr, data)
            except (ExpressionError, ArithmeticError, TypeError, ValueError) as exc:
                raise MetricsMismatchError(f"row {q.id}: expr {q.expr!r} failed on this run's data: {exc}",
                                           field=q.metrics_file) from None
    here_high = number(reader.get(q.metric_high)) if q.metric_high else None
    if q.is_range and q.metric_high is None and q.kind != "claim" and isinstance(here, list) and len(here) == 2:
        here, here_high = number(here[0]), number(here[1])  # the metric holds [low, high]
    if number(here) is not None and q.scale != 1.0:
        here = number(here) * q.scale  # type: ignore[operator]
    if here_high is not None:
        here_high *= q.scale
    backend = _backend(q, reader)
    produced_by = f"{stage} ({backend})" if backend else stage
    failed = _failures(q, reader)
    n = _sample_size(q, reader)
    cells = None
    grid = None
    if q.cells is not None:
        spanned = number(reader.get(q.cells.metric))
        cells = (int(spanned or 0), q.cells.paper)
        grid = number(reader.get(q.cells.run)) if q.cells.run else None
    base = {"here": here, "here_high": here_high, "data": data, "n": n, "cells": cells,
            "failure_rate": failed[0] if failed else None, "produced_by": produced_by}
    if q.kind == "setting":
        matches, why = _setting(q, here, reader)
        return Outcome(Verdict.SETTING, (why, *note), setting_matches=matches, **base)
    insane = _sanity_failure(q, reader)
    if insane:
        return Outcome(Verdict.FAILED, (insane, *note), **base)
    if q.complement is not None:
        return Outcome(Verdict.NOT_JUDGED, (f"the complement of {q.complement} (100 % minus it): a share and its "
                                            "complement are one finding, judged once there", *note), **base)
    reasons: list[str] = []
    interval = interval_high = normalised = confidence = None
    if n is not None and n <= 0:
        return Outcome(Verdict.DIFFERS, ("over zero trials: a value computed from no sample (a sum over nothing is "
                                         "0, an all() over nothing true) is no result", *note), **base)
    if cells is not None and cells[0] == 0:
        return Outcome(Verdict.DIFFERS, (f"over 0 of the paper's {cells[1]} cells: no input to judge", *note),
                       **base)
    missing = q.kind != "claim" and (here is None or (q.is_range and here_high is None))
    if q.kind == "claim" and any(v is None for v in data.values()):
        missing = True
    if missing:
        nulls = [k for k, v in data.items() if v is None] if q.kind == "claim" else []
        what = f"no value for {', '.join(nulls)}" if nulls else "no value"
        if failed is not None and failed[0] > 0:
            reasons.append(f"{what}: {failed[1]}")
        else:
            reasons.append(f"the stage ran but wrote {what} (`{q.key}` or its data is null)")
        return Outcome(Verdict.DIFFERS, (*reasons, *note), **base)
    ends = q.ends
    if q.kind == "exact" and ends[0] is not None and not q.is_range and _FRACTION.match(ends[0].text) and q.n:
        verdict, why, interval = _fraction(q, ends[0], float(number(here) or 0.0), n)
        confidence = BINOMIAL_CONFIDENCE
        reasons += why
    elif q.kind == "exact":
        ok, why = _exact(q, here, ends[0], q.value if not q.is_range else q.value[0])
        if q.is_range:
            ok_high, why_high = _exact(q, here_high, ends[1], q.value[1])  # type: ignore[index]
            ok, why = ok and ok_high, "; ".join(w for w in (why, why_high) if w)
        verdict = Verdict.REPRODUCED if ok else Verdict.DIFFERS
        reasons += [f"exact: {why}"] if why else []
        if ok and q.rounding == "truncate":
            reasons.append("exact after truncation: the paper drops digits here (consistency table)")
    elif q.kind == "estimate":
        verdict, why, interval, interval_high, confidence = _estimate(q, reader, ends)
        reasons += why
    elif q.kind == "claim":
        try:
            held = evaluate(q.predicate or "", {**data, "here": here})
        except (ExpressionError, ArithmeticError, TypeError, ValueError, KeyError, IndexError) as exc:
            raise MetricsMismatchError(f"row {q.id}: predicate {q.predicate!r} failed on this run's data: {exc}",
                                       field=q.metrics_file) from None
        verdict = Verdict.REPRODUCED if held is True else Verdict.DIFFERS
        if held is not True:
            reasons.append(f"the paper's statement does not hold here: `{q.predicate}` is false")
        unportable = _portability(q, reader)
        if unportable:
            verdict = Verdict.NOT_JUDGED
            reasons = [f"{unportable}: the statement {'holds' if held is True else 'does not hold'} here "
                       f"(`{q.predicate}`), shown, not judged"]
    else:
        value = number(here)
        if value is None:
            return Outcome(Verdict.DIFFERS, (f"here {here!r} is not a number", *note), **base)
        verdict, why, normalised = _hardware(q, reader, value, here_high)
        reasons += why
    counted = verdict not in (Verdict.NOT_RUN, Verdict.NOT_JUDGED)
    if counted and failed is not None and failed[0] > (q.failures.paper if q.failures else 0):
        paper_rate = q.failures.paper if q.failures else 0.0
        if verdict in (Verdict.REPRODUCED, Verdict.INCONCLUSIVE):
            verdict = Verdict.DIFFERS
        reasons.append(f"{failed[1]}; the value is over the completed runs, and the paper reports "
                       + ("none" if paper_rate == 0 else f"{paper_rate:.1%}"))
    if cells is not None and cells[0] < cells[1]:
        if verdict in (Verdict.REPRODUCED, Verdict.INCONCLUSIVE, Verdict.NOT_JUDGED):
            verdict = Verdict.DIFFERS
        detail = ""
        if grid is not None:
            missing, failed_cells = cells[1] - int(grid), int(grid) - cells[0]
            detail = (f": {missing} not in this run's grid ({int(grid)} run)" if missing > 0 else "") + \
                      (f"{'; ' if missing > 0 else ': '}{failed_cells} where no run completed" if failed_cells > 0
                       else "")
        reasons.append(f"spans {cells[0]} of the paper's {cells[1]} cells{detail}")
    if q.marked is not None:
        verdict = _mark(q, reader, verdict, reasons)
    library = _library_reason(tree, q.paper_library, backend)
    reasons += [library] if library else []
    return Outcome(verdict, (*reasons, *note), interval=interval, interval_high=interval_high,
                   confidence=confidence, normalised=normalised, **base)


def _mark(q: Quantity, reader: _Reader, verdict: Verdict, reasons: list[str]) -> Verdict:
    """A cell the paper marks (success below the threshold) or not: marked here when this run's observed success
    rate is below it; an unmarked cell must not be surely below it (its interval reaches the threshold)."""
    assert q.marked is not None
    success = _interval(reader, q.marked.success, 1.0)
    failed = number(reader.get(q.marked.failure_rate)) if q.marked.failure_rate else None
    observed = None if failed is None else 1.0 - failed
    if success is None or (q.marked.paper and observed is None):
        reasons.append("no success rate to place the paper's mark")
        return Verdict.DIFFERS
    if q.marked.paper:
        fits = observed < q.marked.threshold  # type: ignore[operator]
        shown = f"here {observed:.1%} of runs succeeded (interval {success[0]:.1%}–{success[1]:.1%})"
    else:
        fits = success[1] >= q.marked.threshold
        shown = f"here success is {success[0]:.1%}–{success[1]:.1%}"
    if not fits:
        reasons.append(f"the paper {'marks' if q.marked.paper else 'does not mark'} this cell (success below "
                       f"{q.marked.threshold:.1%}); {shown}")
        return Verdict.DIFFERS if verdict in (Verdict.REPRODUCED, Verdict.INCONCLUSIVE) else verdict
    return verdict


COLUMNS = ["id", "paper_id", "where", "claim", "quantity", "source", "kind", "unit", "paper", "paper_value",
           "paper_low", "paper_high", "here", "here_high", "here_text", "ci_low", "ci_high", "ci_high_low",
           "ci_high_high", "confidence", "normalised", "ratio", "data", "n", "failure_rate", "cells_here",
           "cells_paper", "verdict", "why", "produced_by", "table", "sensitivity", "main", "setting_matches"]


def _paper_text(q: Quantity) -> str:
    prefix = {"<": "< ", "<=": "≤ ", ">": "> ", ">=": "≥ "}.get(q.bound or "", "")
    if isinstance(q.value, tuple):
        return f"{q.value[0]}–{q.value[1]}"
    return prefix + str(q.value)


def _here_text(q: Quantity, o: Outcome) -> str:
    if o.verdict is Verdict.NOT_RUN:
        return "not run"
    if o.here is None and q.kind != "claim":
        return "no value"
    if q.is_range and o.here_high is not None:
        return f"{_fmt(o.here)}–{_fmt(o.here_high)}"
    return _fmt(o.here)


def _as_printed(end: Printed | None) -> float | int | None:
    """A printed number as a value: whole when the paper prints it whole."""
    if end is None:
        return None
    return int(end.value) if end.half_unit >= 0.5 and float(end.value).is_integer() else end.value


def hand_edited(tree: MetricsTree, metrics_file: str) -> list[str]:
    """The raw files imported as edited by hand behind a stage's metrics (``hand_edited``: raw_provenance.source)."""
    document = tree.document(metrics_file) if metrics_file in tree.stages else None
    block = document.get("raw_samples") if isinstance(document, dict) else None
    edited = block.get("hand_edited") if isinstance(block, dict) else None
    return [str(name) for name in edited] if isinstance(edited, list) else []


def collect(reference: Reference, tree: MetricsTree | Path,
            pipeline: Callable[[str], bool] = in_pipeline) -> pd.DataFrame:
    """One row per reference row: the paper's value, this run's, the interval or data it was judged on, verdict
    and reasons (``tree``: the run's metrics, or the folder holding them)."""
    if not isinstance(tree, MetricsTree):
        tree = MetricsTree(tree, {s.metrics: name for name, s in reference.stages.items()})
    rows = []
    for q in reference.quantities:
        o = judge(q, reference, tree, pipeline)
        edited = hand_edited(tree, q.metrics_file)
        if edited:  # every row a hand-edited raw file feeds says so (pqlab raw import --edited)
            o = replace(o, reasons=(f"computed from raw samples EDITED BY HAND ({', '.join(edited)})", *o.reasons),
                        produced_by=f"{o.produced_by} (hand-edited input)")
        ends = q.ends
        point = _as_printed(ends[0]) if not q.is_range and ends[0] is not None else None
        here_number = o.here if isinstance(o.here, int) and not isinstance(o.here, bool) else number(o.here)
        rows.append({
            "id": q.id, "paper_id": q.paper, "where": q.where, "claim": f"{q.row} — {q.column}",
            "quantity": f"{q.row} — {q.column}", "source": q.where, "kind": q.kind, "unit": q.unit,
            "paper": _paper_text(q),
            "paper_value": point if point is not None else (None if q.is_range else str(q.value)),
            "paper_low": _as_printed(ends[0]) if q.is_range else None,
            "paper_high": _as_printed(ends[1]) if q.is_range else None,
            "here": here_number, "here_high": o.here_high, "here_text": _here_text(q, o),
            "ci_low": o.interval[0] if o.interval else None, "ci_high": o.interval[1] if o.interval else None,
            "ci_high_low": o.interval_high[0] if o.interval_high else None,
            "ci_high_high": o.interval_high[1] if o.interval_high else None,
            "confidence": o.confidence if o.interval or o.interval_high else None,
            "normalised": o.normalised,
            "ratio": here_number / point if here_number is not None and point else None,
            "data": "; ".join(f"{k} = {_fmt(v)}" for k, v in o.data.items()),
            "n": o.n, "failure_rate": o.failure_rate,
            "cells_here": o.cells[0] if o.cells else None, "cells_paper": o.cells[1] if o.cells else None,
            "verdict": o.verdict.value, "why": "; ".join(o.reasons), "produced_by": o.produced_by,
            "table": "sensitivity" if q.sensitivity else "main", "sensitivity": q.sensitivity, "main": q.main,
            "setting_matches": o.setting_matches,
        })
    # object columns: a count stays an int (5000, not 5000.0) beside floats, text and blanks
    return pd.DataFrame({column: pd.Series([r[column] for r in rows], dtype=object) for column in COLUMNS})
