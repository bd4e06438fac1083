"""Stage ``image_tree`` (AMORT-V1 §V-I): generate the synthetic image with the paper's OpenPLC shape."""

from __future__ import annotations

from pqlab import machine
from pqlab.experiments import image_tree
from pqlab.params import StudyParams
from pqlab.paths import ProjectPaths
from pqlab.pipeline.outputs import OutputSet
from pqlab.pipeline.result import StudyResult

STAGE = "image_tree"


def run(settings: StudyParams, paths: ProjectPaths, *, progress: bool = True) -> StudyResult:
    """Write ``data/raw/image_tree/`` and its manifest (every path and size) as one output set."""
    shape = image_tree.TreeShape(**settings.image_tree.model_dump())
    paths.check_writable(paths.raw)
    distribution = {"kind": "lognormal", "sigma": shape.size_sigma, "mu": image_tree.lognormal_mu(shape),
                    "files": shape.files, "total_bytes": shape.total_bytes, "directories": shape.directories}
    metadata = machine.run_metadata(params=settings.model_dump(mode="json")) | {
        "study": STAGE, "distribution": distribution}
    with OutputSet(paths, STAGE) as out:
        # generated straight into the staging folder; the commit swaps the whole directory in
        with out.writing(paths.raw / "image_tree", shape.total_bytes):
            layout = image_tree.generate(out.path(paths.raw / "image_tree"), shape, settings.seed, progress=progress)
        out.parquet(paths.raw / "image_tree_manifest.parquet", layout, metadata)
    summary = {"files": len(layout), "total_bytes": int(layout["size"].sum()),
               "median_file_bytes": float(layout["size"].median()), "max_file_bytes": int(layout["size"].max()),
               "max_depth": int(layout["depth"].max()), "distribution": distribution}
    return StudyResult(STAGE, metrics=summary, files=out.written, data={"manifest": layout})
