"""Resume caches: a damaged, truncated, unlisted or unreadable part is discarded with one warning line and its
work recomputed, so a kept part never changes a result; one run at a time holds a cache."""

from __future__ import annotations

import json
import multiprocessing
import os

import pandas as pd
import pyarrow as pa
import pytest

from pqlab.cache import LOCK, MANIFEST, PartStore
from pqlab.errors import BusyError
from pqlab.transport.config import TransportParams
from pqlab.transport.grid import grid_points, run_grid
from tests import faults

CONFIGS = {"small": (300, 700, 500, 20), "large": (1300, 5000, 2600, 20)}


def _params() -> TransportParams:
    return TransportParams(hops=(1, 3), runs=4)


def _grid(tmp_path, name: str, points=None) -> pd.DataFrame:
    p = _params()
    return run_grid(points or grid_points(CONFIGS, p), p, tmp_path / name, workers=1, chunk_size=4, progress=False)


def _flip(path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    data[offset + 1] ^= 0x01
    path.write_bytes(bytes(data))


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("pqlab: warning:")]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return _grid(tmp_path_factory.mktemp("clean"), "g.parts")


@pytest.mark.parametrize("damage", ["flip", "truncate", "unlisted", "empty", "garbage"])
def test_a_damaged_part_is_recomputed_and_the_result_is_identical(tmp_path, clean, capfd, damage):
    p = _params()
    points = grid_points(CONFIGS, p)
    run_grid(points[:12], p, tmp_path / "g.parts", workers=1, chunk_size=4, progress=False)  # an interrupted run
    parts = sorted((tmp_path / "g.parts").glob("part-*.parquet"))
    assert len(parts) == 3
    victim = parts[1]
    if damage == "flip":  # two flipped bytes in the middle of the data pages: parquet itself does not notice
        _flip(victim, victim.stat().st_size // 2)
    elif damage == "truncate":
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 3])
    elif damage == "unlisted":
        manifest = json.loads((tmp_path / "g.parts" / MANIFEST).read_text())
        del manifest["parts"][victim.name]
        (tmp_path / "g.parts" / MANIFEST).write_text(json.dumps(manifest))
    elif damage == "empty":
        victim.write_bytes(b"")
    else:
        victim.write_bytes(os.urandom(victim.stat().st_size))
    capfd.readouterr()
    resumed = _grid(tmp_path, "g.parts")
    pd.testing.assert_frame_equal(resumed, clean)
    lines = _warnings(capfd.readouterr().err)
    assert len(lines) == 1 and victim.name in lines[0] and "recomputed" in lines[0]
    faults.record("resume part damaged", damage, "correct result")


def test_flipped_bytes_are_invisible_to_parquet_but_not_to_the_manifest(tmp_path):
    """Why the hash is needed: the flipped part still reads, with a different value in it."""
    p = _params()
    run_grid(grid_points(CONFIGS, p)[:4], p, tmp_path / "g.parts", workers=1, progress=False)
    part = next((tmp_path / "g.parts").glob("part-*.parquet"))
    original = part.read_bytes()
    before = pd.read_parquet(part)
    row_group = pa.parquet.ParquetFile(part).metadata.row_group(0)
    chunk = next(row_group.column(i) for i in range(row_group.num_columns)
                 if row_group.column(i).path_in_schema == "time_s")
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    silent = None
    for offset in range(start, start + chunk.total_compressed_size - 1):  # two bytes of the time_s column
        _flip(part, offset)
        try:
            after = pd.read_parquet(part)
        except (OSError, ValueError, pa.ArrowException):
            after = None
        if after is not None and after.shape == before.shape and not after["time_s"].equals(before["time_s"]):
            silent = offset
            break
        part.write_bytes(original)
    assert silent is not None, "every flip was detected by parquet itself"
    with PartStore(tmp_path / "g.parts") as store:
        assert store.load() == {} and store.discarded == [part.name]


def test_a_corrupt_manifest_recomputes_everything_with_one_warning(tmp_path, clean, capfd):
    p = _params()
    run_grid(grid_points(CONFIGS, p)[:8], p, tmp_path / "g.parts", workers=1, chunk_size=4, progress=False)
    (tmp_path / "g.parts" / MANIFEST).write_text('{"version": 1, "parts": ')
    capfd.readouterr()
    pd.testing.assert_frame_equal(_grid(tmp_path, "g.parts"), clean)
    lines = _warnings(capfd.readouterr().err)
    assert any(MANIFEST in line for line in lines)


def test_stale_temporary_files_of_a_killed_run_are_removed(tmp_path):
    folder = tmp_path / "g.parts"
    folder.mkdir()
    (folder / ".part-abc.123.deadbeef.part").write_bytes(b"half a part")
    with PartStore(folder) as store:
        assert store.load() == {}
    assert sorted(p.name for p in folder.iterdir()) == [LOCK]


def test_parts_are_whole_and_listed_with_their_hash(tmp_path):
    p = _params()
    run_grid(grid_points(CONFIGS, p)[:8], p, tmp_path / "g.parts", workers=1, chunk_size=4, progress=False)
    manifest = json.loads((tmp_path / "g.parts" / MANIFEST).read_text())
    parts = sorted(path.name for path in (tmp_path / "g.parts").glob("part-*.parquet"))
    assert sorted(manifest["parts"]) == parts and len(parts) == 2
    assert all(len(entry["sha256"]) == 64 and entry["rows"] == 16 for entry in manifest["parts"].values())


def _hold(folder, ready, release):
    with PartStore(folder):
        ready.set()
        release.wait(30)


def test_a_second_run_on_the_same_cache_is_refused_in_one_line(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(tmp_path / "g.parts", ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(BusyError, match="another pqlab run") as caught:
            PartStore(tmp_path / "g.parts").open()
        assert "\n" not in str(caught.value)
        with pytest.raises(BusyError):  # the same process twice
            with PartStore(tmp_path / "other.parts"), PartStore(tmp_path / "other.parts"):
                pass
    finally:
        release.set()
        holder.join(30)
    with PartStore(tmp_path / "g.parts") as store:  # free again once the holder is gone
        assert len(store) == 0


def test_clear_removes_the_folder(tmp_path):
    with PartStore(tmp_path / "g.parts") as store:
        store.add("x", pa.table({"a": [1, 2]}))
        store.clear()
    assert not (tmp_path / "g.parts").exists()
