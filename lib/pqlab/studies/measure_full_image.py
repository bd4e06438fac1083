"""Stage ``measure_full_image`` (AMORT-V1 §V-I): measure the image warm and cold ``repetitions`` times (and a copy
once); writes only data/raw/full_image_samples.parquet and full_image_evictions.parquet."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from pqlab import machine
from pqlab.experiments import image, image_runs, image_tree
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline import raw_provenance, registry

RAW = registry.raw_spec("full_image")


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


def measure(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> list[Path]:
    """Measure the image (a scratch tree made for the run, the generated tree or ``image_dir``) and a copy of it."""
    cfg = settings.full_image
    if cfg.scratch_tree is None:
        image.refuse_special_files(image_root(settings, paths))
    paths.check_writable(paths.raw)
    load_before = raw_provenance.load_average()
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
    metadata = machine.run_metadata() | {
        "study": "full_image", "image_root": str(root), "copy_digest": copy_digest,
        "image_source": "scratch tree" if cfg.scratch_tree else str(cfg.image_dir or "data/raw/image_tree")}
    frames = {"full_image_samples.parquet": samples, "full_image_evictions.parquet": evictions}
    return raw_provenance.write(RAW, settings, paths, frames, metadata, load_before)
