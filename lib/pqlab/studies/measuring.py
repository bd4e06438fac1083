"""A measuring study's run: measure first when its raw samples are missing or do not match (its
``pqlab.studies.measure_<stage>`` module, imported only then), then analyse them.

A measuring study is two stages: ``measure_<stage>`` runs the harness and writes only ``data/raw/<file>.parquet``
(:mod:`pqlab.pipeline.raw_provenance`); ``<stage>`` reads those files (:mod:`pqlab.pipeline.raw_io`, checksums
checked) and computes every statistic, table, figure and metric."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io
from pqlab.pipeline.registry import raw_spec
from pqlab.pipeline.result import StudyResult


def prepare(stage: str, settings: StudyParams, paths: ProjectPaths, *, analyse_only: bool,
            progress: bool = True, **measure_options: Any) -> list[Path]:
    """Before an analysis: with ``analyse_only`` (the pipeline) only check the raw files exist; otherwise measure
    first when they are missing or do not match (``pqlab.studies.measure_<stage>``, imported only then, so the
    analysis stage's import closure holds no measurement code). Returns the raw files it wrote."""
    raw = raw_spec(stage)
    if analyse_only:
        for path in raw.raw_paths(paths):
            if not path.exists():
                raise raw_io.missing_error(raw, path)
        return []
    if raw_io.needs_measuring(raw, settings, paths) is None:
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
