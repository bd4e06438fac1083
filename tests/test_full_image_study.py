"""The image_tree and full_image stages end to end on a small tree: outputs, eviction evidence, Table V, REPORT rows."""

from __future__ import annotations

import pandas as pd
import pytest

from pqlab import io, params
from pqlab.experiments import image
from pqlab.experiments.image import ImageError
from pqlab.paths import ProjectPaths
from pqlab.report import collect, load_reference
from pqlab.studies import full_image, image_tree

SMALL_TREE = "image_tree:\n  files: 40\n  total_bytes: 1500000\n  size_sigma: 1.5\n  directories: 6\n"


@pytest.fixture
def project(tmp_path):
    """A project of its own for each test (with a small image_tree), so no test finds a tree another one made."""
    from tests.conftest import REPO

    root = tmp_path / "project"
    (root / "params").mkdir(parents=True)
    text = (REPO / "params" / "params.yaml").read_text()
    start = text.index("image_tree:")
    end = text.index("\n\n", start)
    (root / "params" / "params.yaml").write_text(text[:start] + SMALL_TREE.rstrip("\n") + text[end:])
    (root / "params" / "paper_reference.yaml").write_text((REPO / "params" / "paper_reference.yaml").read_text())
    return root


def _settings(root, profile="quick", **full_image_overrides):
    settings = params.load(root / "params" / "params.yaml", profile)
    section = settings.full_image.model_copy(update={"repetitions": 2} | full_image_overrides)
    return settings.model_copy(update={"full_image": section})


def test_full_image_without_a_generated_tree_says_how_to_make_one(project):
    with pytest.raises(ImageError, match="pqlab image-tree"):
        full_image.run(_settings(project), ProjectPaths(project), progress=False)


@pytest.mark.slow  # runs the whole study
def test_image_tree_stage_writes_the_tree_and_its_manifest(project):
    settings = params.load(project / "params" / "params.yaml", "quick")
    paths = ProjectPaths(project)
    result = image_tree.run(settings, paths, progress=False)
    tree = paths.raw / "image_tree"
    assert tree in result.files and (paths.raw / "image_tree_manifest.parquet") in result.files
    manifest = pd.read_parquet(paths.raw / "image_tree_manifest.parquet")
    assert len(manifest) == 40 and manifest["size"].sum() == 1_500_000
    assert sum(f.stat().st_size for f in tree.rglob("*") if f.is_file()) == 1_500_000
    meta = io.read_parquet_metadata(paths.raw / "image_tree_manifest.parquet")
    assert meta["distribution"]["kind"] == "lognormal" and meta["distribution"]["sigma"] == 1.5
    first = image.measure(tree).digest
    image_tree.run(settings, paths, progress=False)  # regenerating replaces the tree with the same one
    assert image.measure(tree).digest == first
    assert not any(p.name.startswith(".") for p in paths.raw.iterdir())


@pytest.mark.slow  # runs the whole study
def test_full_image_measures_the_generated_tree_warm_and_cold(project):
    paths = ProjectPaths(project)
    image_tree.run(params.load(project / "params" / "params.yaml", "quick"), paths, progress=False)
    paths.derived.mkdir(parents=True, exist_ok=True)
    io.write_json(paths.derived / "costs_metrics.json",  # with its digest, as the costs stage writes it
                  {"table1": {"sign_ML-DSA-65": {"median_us": 100.0, "backend": "openssl"}}})
    result = full_image.run(_settings(project), paths, progress=False)
    table = result.tables["table5_image"].set_index("Condition")
    assert list(table.index) == ["warm cache", "cold cache"] and (table["Repetitions"] == 2).all()
    warm_s = result.data["samples"].query("condition == 'warm'")["seconds"].median()
    assert table.loc["warm cache", "vs ML-DSA-65 sign [×]"] == pytest.approx(warm_s * 1e6 / 100.0)
    m = result.metrics
    assert m["signature"]["median_us"] == 100.0 and m["warm"]["backend"] == "openssl"
    assert m["image"]["files"] == 40 and m["image"]["digest_stable"] and m["image"]["copy_digest_equal"]
    assert m["image"]["digest"] == image.measure(paths.raw / "image_tree").digest
    assert m["eviction"]["verified"] and m["eviction"]["resident_after_pages"] == 0
    assert m["eviction"]["resident_before_pages"] > 0
    names = {p.name for p in result.files}
    assert {"table5_image.csv", "table5_image.md", "full_image_times.png", "full_image_metrics.json",
            "full_image_samples.parquet", "full_image_evictions.parquet"} <= names
    evictions = pd.read_parquet(paths.raw / "full_image_evictions.parquet")
    assert len(evictions) == 2 * 40 and (evictions["resident_after"] == 0).all()
    (paths.derived / "costs_metrics.json").unlink()  # the study's stand-in, not a costs metrics file for the report
    reference = load_reference(paths.paper_reference)
    rows = collect(reference, paths.derived)
    mine = [q.metric.startswith("full_image_metrics.json:") for q in reference.quantities]
    assert sum(mine) == 10 and rows[mine]["here"].notna().all()
    ratio_rows = rows[mine & rows["quantity"].str.contains("vs ML-DSA-65").to_numpy()]
    assert ratio_rows["why"].str.contains("library differs: paper liboqs, here openssl").all()


@pytest.mark.slow  # runs the whole study
def test_a_named_directory_is_measured_instead(project, tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.bin").write_bytes(b"a" * 5000)
    result = full_image.run(_settings(project, image_dir=str(tmp_path / "img"), compare_copy=False),
                            ProjectPaths(project), progress=False)
    assert result.metrics["image"]["files"] == 1 and result.metrics["image"]["octets"] == 5000
    assert result.metrics["image"]["copy_digest_equal"] is None
