"""Stage ``full_image`` (AMORT-V1 §V-I): Table V from ``measure_full_image``'s samples vs one ML-DSA-65 signature."""

from __future__ import annotations

import matplotlib.pyplot as plt

from pqlab.analysis import full_image as image_runs
from pqlab.errors import warn
from pqlab.figures.full_image import full_image_times
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_io, raw_provenance, registry
from pqlab.pipeline.metrics.full_image import FullImageMetrics
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult
from pqlab.pipeline.typed_metrics import validated
from pqlab.studies import measuring

STAGE = "full_image"
RAW = registry.raw_spec(STAGE)


def analyse(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Table V, its reliability and the figure from the raw samples and the cost study's signature median."""
    paths.check_writable(paths.derived, paths.amort_figs)
    # the cost study's signature median first: an edited or truncated costs_metrics.json stops the run at once
    reference = image_runs.signature_reference(paths.derived / "costs_metrics.json",
                                               settings.full_image.reference_operation, paths.root)
    upstream_edited = reference.pop("hand_edited", [])
    (samples, evictions), raw_metadata = raw_io.read_named(RAW, settings, paths, "samples", "evictions")
    copy_digest = raw_metadata["copy_digest"]
    unreliable = image_runs.reliability(samples, copy_digest)
    table = image_runs.table5(samples, reference["median_us"], unreliable)
    headline = image_runs.metrics(samples, table, reference, copy_digest) | {
        "profile": settings.profile, "cpu_model": raw_metadata["cpu_model"],
        "image_source": raw_metadata["image_source"],
        "raw_samples": raw_provenance.source(raw_metadata, upstream_edited),
        "repetitions": int(samples.groupby("condition").size().min()) if len(samples) else 0}
    headline = validated(FullImageMetrics, headline)
    figure = full_image_times(samples, reference["median_us"], raw_metadata["cpu_model"])
    with OutputSet(paths, STAGE) as out:
        out.table(table.round(3), paths.amort_figs / "table5_image")
        out.figure(figure, paths.amort_figs / "full_image_times")
        out.metrics(paths.derived / "full_image_metrics.json", headline, label="cold image measurement",
                    key="cold.median_ms", unit="ms")
    plt.close(figure)
    if reference["median_us"] is None:
        warn(f"Table V's ratio to one signature stays empty: {reference['missing']}")
    rows_by_reason: dict[str, list[str]] = {}
    for condition, whys in unreliable.items():
        for why in whys:
            rows_by_reason.setdefault(why, []).append(condition)
    if rows_by_reason:
        warn("Table V is marked unreliable (column Reliable, metrics 'reliable'): " + "; ".join(
            f"{' and '.join(rows)} cache: {why}" for why, rows in rows_by_reason.items()))
    return StudyResult(STAGE, figures={"full_image_times": figure}, tables={"table5_image": table}, metrics=headline,
                       files=out.written, data={"samples": samples, "evictions": evictions})


run = measuring.runner(STAGE, analyse)
