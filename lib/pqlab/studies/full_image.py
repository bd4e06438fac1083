"""Stage ``full_image`` (AMORT-V1 §V-I): warm and cold full-image measurement vs one ML-DSA-65 signature (Table V)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from pqlab import machine
from pqlab.bench import image, image_runs, image_tree
from pqlab.errors import warn
from pqlab.figures.full_image import full_image_times
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.studies.outputs import OutputSet
from pqlab.studies.result import StudyResult
from pqlab.typed_metrics import MetricsNode, StageMetrics, validated

STAGE = "full_image"


class CacheState(MetricsNode):
    """Table V for one cache state: median time, throughput, ratio to one signature, measurements per second."""

    median_ms: float
    throughput_mb_s: float
    ratio_to_sign: float | None   # None when the cost study has not run
    measurements_per_s: float
    backend: str | None
    reliable: bool
    unreliable_because: list[str]


class ImageFacts(MetricsNode):
    files: int
    octets: int
    pages: int
    digest: str
    digest_stable: bool
    copy_digest_equal: bool | None


class Eviction(MetricsNode):
    method: str
    verified: bool
    files_still_resident: int
    resident_before_pages: int
    resident_after_pages: int
    resident_after_read_pages: int
    cold_over_warm_median: float


class SignatureReference(MetricsNode):
    """The cost study's signature median the ratios divide by (None, with why, when that stage has not run)."""

    file: str
    key: str
    median_us: float | None
    backend: str | None
    missing: str | None = None


class FullImageMetrics(StageMetrics):
    warm: CacheState
    cold: CacheState
    image: ImageFacts
    eviction: Eviction
    signature: SignatureReference
    image_source: str
    reliable: bool
    cpu_model: str | None
    loadavg_before: list[float]
    loadavg_after: list[float]


METRICS = FullImageMetrics


def image_root(settings: StudyParams, paths: ProjectPaths) -> Path:
    """The directory to measure: ``full_image.image_dir`` (an input: relative to the project the params file is in,
    not to ``--out-dir``), else the generated tree under the output folder."""
    named = settings.full_image.image_dir
    if named is not None:
        root = Path(named).expanduser()
        return root if root.is_absolute() else paths.project / root
    root = paths.raw / "image_tree"
    if not root.is_dir():
        raise image.ImageError("not generated yet: run `dvc repro image_tree` or `pqlab image-tree`",
                               field=str(root))
    return root


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Measure the image warm and cold ``repetitions`` times (and a copy once); write Table V and metrics."""
    cfg = settings.full_image
    # the cost study's signature median first: an edited or truncated costs_metrics.json stops the run at once
    reference = image_runs.signature_reference(paths.derived / "costs_metrics.json", cfg.reference_operation)
    if cfg.scratch_tree is None:
        image.refuse_special_files(image_root(settings, paths))
    paths.raw.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=paths.raw, prefix=".full_image-")))
        if cfg.scratch_tree is not None:
            root = scratch / "image"
            image_tree.generate(root, image_tree.TreeShape(**cfg.scratch_tree.model_dump()), settings.seed,
                                progress=progress)
        else:
            root = image_root(settings, paths)
        samples, evictions = image_runs.repeat(root, cfg.repetitions, cfg.chunk_octets, progress=progress)
        copy_digest = None
        if cfg.compare_copy:
            copy = scratch / "copy"
            shutil.copytree(root, copy, symlinks=True)
            copy_digest = image.measure(copy, cfg.chunk_octets).digest
    load_after = os.getloadavg()
    unreliable = image_runs.reliability(samples, copy_digest)
    table = image_runs.table5(samples, reference["median_us"], unreliable)
    headline = image_runs.metrics(samples, table, reference, copy_digest) | {
        "profile": settings.profile, "cpu_model": machine.cpu_model(),
        "image_source": "scratch tree" if cfg.scratch_tree else str(cfg.image_dir or "data/raw/image_tree"),
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in load_after]}
    headline = validated(FullImageMetrics, headline)
    metadata = machine.run_metadata(params=settings.model_dump(mode="json")) | {
        "study": "full_image", "image_root": str(root), "signature_reference": reference}
    figure = full_image_times(samples, reference["median_us"], machine.cpu_model())
    with OutputSet(paths, STAGE) as out:
        out.parquet(paths.raw / "full_image_samples.parquet", samples, metadata)
        out.parquet(paths.raw / "full_image_evictions.parquet", evictions, metadata)
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
