"""Full-image measurement: the generated tree's shape, the image digest, and verified page-cache eviction."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pqlab.experiments import image, image_tree, pagecache

SHAPE = image_tree.TreeShape(files=120, total_bytes=3_000_000, size_sigma=2.0, directories=15)


def _filesystem_type(path: Path) -> str:
    best, kind = "", "unknown"
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        mount = left.split()[4]
        if str(path).startswith(mount) and len(mount) > len(best):
            best, kind = mount, right.split()[0]
    return kind


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "image"
    image_tree.generate(root, SHAPE, seed=11, progress=False)
    return root


def test_plan_has_the_exact_count_and_total_and_is_seeded():
    layout = image_tree.plan(SHAPE, seed=5)
    assert len(layout) == 120 and int(layout["size"].sum()) == 3_000_000
    assert layout["path"].is_unique
    assert layout.equals(image_tree.plan(SHAPE, seed=5))
    assert not layout["size"].equals(image_tree.plan(SHAPE, seed=6)["size"])


def test_lognormal_mean_matches_count_and_total():
    shape = image_tree.TreeShape(files=6239, total_bytes=355_000_000, size_sigma=2.0, directories=400)
    mu = image_tree.lognormal_mu(shape)
    assert math.isclose(math.exp(mu + 2.0**2 / 2), 355_000_000 / 6239)
    sizes = image_tree.file_sizes(shape, np.random.default_rng(1))
    assert len(sizes) == 6239 and int(sizes.sum()) == 355_000_000 and (sizes >= 0).all()
    assert np.median(sizes) < sizes.mean()  # right-skewed, as a lognormal


def test_directories_form_one_tree_under_the_root():
    dirs = image_tree.directory_paths(50, np.random.default_rng(2))
    assert dirs[0] == "" and len(set(dirs)) == 50
    assert all(d.rsplit("/", 1)[0] in dirs for d in dirs[1:] if "/" in d)


def test_generated_files_have_the_planned_sizes(tree: Path):
    layout = image_tree.plan(SHAPE, seed=11)
    for path, size in zip(layout["path"], layout["size"], strict=True):
        assert (tree / path).stat().st_size == size
    with pytest.raises(FileExistsError):
        image_tree.generate(tree, SHAPE, seed=11, progress=False)


def test_digest_is_the_sorted_path_digest_list(tree: Path):
    lines = []
    for path in sorted((p for p in tree.rglob("*") if p.is_file()), key=lambda p: p.relative_to(tree).as_posix()):
        rel = path.relative_to(tree).as_posix()
        lines.append(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    expected = hashlib.sha256(b"".join(sorted(lines))).hexdigest()
    measured = image.measure(tree, chunk_octets=4096)
    assert measured.digest == expected
    assert measured.files == 120 and measured.octets == 3_000_000 and measured.seconds > 0


def test_digest_is_stable_across_repetitions_copies_and_regeneration(tree: Path, tmp_path: Path):
    first = image.measure(tree).digest
    assert image.measure(tree).digest == first
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    assert image.measure(copy).digest == first
    again = tmp_path / "again"
    image_tree.generate(again, SHAPE, seed=11, progress=False)
    assert image.measure(again).digest == first


def test_digest_changes_with_one_octet_or_one_name(tree: Path):
    first = image.measure(tree).digest
    victim = next(p for p in sorted(tree.rglob("*.bin")) if p.stat().st_size > 0)
    data = bytearray(victim.read_bytes())
    data[0] ^= 1
    victim.write_bytes(bytes(data))
    flipped = image.measure(tree).digest
    assert flipped != first
    victim.rename(victim.with_name("renamed.bin"))
    assert image.measure(tree).digest not in (first, flipped)


def test_symlinks_are_hashed_by_target_and_special_files_skipped(tmp_path: Path):
    root = tmp_path / "img"
    root.mkdir()
    (root / "a").write_bytes(b"x" * 10)
    os.symlink("a", root / "link")
    os.mkfifo(root / "pipe")
    measured = image.measure(root)
    assert (measured.files, measured.symlinks, measured.skipped, measured.octets) == (1, 1, 1, 10)
    os.remove(root / "link")
    os.symlink("elsewhere", root / "link")
    assert image.measure(root).digest != measured.digest


def test_missing_or_empty_image_is_an_image_error(tmp_path: Path):
    with pytest.raises(image.ImageError, match="not a directory"):
        image.measure(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(image.ImageError, match="no files"):
        image.measure(tmp_path / "empty")


def test_reading_makes_pages_resident(tree: Path):
    image.measure(tree)
    resident, total = image.residency(tree)
    assert total == sum(pagecache.pages((tree / p).stat().st_size) for p in image_tree.plan(SHAPE, 11)["path"])
    assert resident == total


def test_eviction_is_verified_by_mincore(tree: Path):
    if _filesystem_type(tree) in ("tmpfs", "ramfs"):
        pytest.skip(f"{tree} is on a memory filesystem: its pages cannot leave the page cache")
    image.measure(tree)
    evicted = image.evict(tree)
    totals = image.summary(evicted)
    assert totals["resident_before"] == totals["pages"] > 0
    assert totals["resident_after"] == 0 and totals["files_still_resident"] == 0
    assert image.residency(tree)[0] == 0
    image.measure(tree)
    assert image.residency(tree)[0] == totals["pages"]


def test_mapped_pages_survive_eviction_and_the_check_reports_them(tmp_path: Path):
    import mmap

    path = tmp_path / "mapped.bin"
    data = os.urandom(64 * pagecache.PAGE)
    path.write_bytes(data)
    if _filesystem_type(path) in ("tmpfs", "ramfs"):
        pytest.skip("memory filesystem")
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        touched = sum(mapped[i * pagecache.PAGE] for i in range(64))  # fault every page into this mapping
        result = pagecache.evict(path)
    assert touched == sum(data[i * pagecache.PAGE] for i in range(64))  # every page was read through the mapping
    assert result.total == 64 and result.after > 0  # still mapped: the kernel keeps them, and we see it
    assert pagecache.evict(path).after == 0         # unmapped: gone
