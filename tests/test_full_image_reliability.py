"""Measurements that say when they are unreliable, and images pqlab cannot take (issue 24, items 5 and 6).

A full-image run whose digests differ between repetitions, or whose eviction mincore could not verify, still
writes Table V but marks the row "no: <why>" (column Reliable, metrics ``reliable``) and prints one warning
line; the console never says "eviction verified" when the metrics say it was not. A FIFO or a file name that is
not UTF-8 in ``--image-dir`` is one INPUT_INVALID line.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from pqlab import cli, io
from pqlab.errors import InputInvalidError
from pqlab.experiments import image, image_runs
from tests import faults


@pytest.fixture
def project(tmp_path) -> Path:
    return faults.make_project(tmp_path / "project")


def make_image(folder: Path) -> Path:
    (folder / "lib").mkdir(parents=True)
    (folder / "a.bin").write_bytes(os.urandom(200_000))
    (folder / "lib" / "b.so").write_bytes(os.urandom(50_000))
    return folder


def full_image(project: Path, image_dir: Path) -> int:
    return cli.main(["full-image", "--params", str(project / "params" / "params.yaml"), "--profile", "smoke",
                     "--quiet", "--image-dir", str(image_dir)])


def _warnings(err: str) -> list[str]:
    """The warning lines, but the one saying the ratio column is empty (no costs stage ran in these projects)."""
    return [line for line in err.splitlines() if line.startswith("pqlab: warning: ") and "ratio" not in line]


def test_a_stable_image_is_reliable_and_says_its_eviction_was_verified(project, tmp_path, capsys):
    assert full_image(project, make_image(tmp_path / "image")) == 0
    out, err = capsys.readouterr()
    metrics = io.read_json(project / "data" / "derived" / "full_image_metrics.json")
    assert metrics["eviction"]["verified"] and metrics["reliable"] and metrics["cold"]["reliable"]
    assert "eviction verified by mincore" in out and not _warnings(err)
    table = (project / "paper_figs" / "amort" / "table5_image.csv").read_text()
    assert table.splitlines()[0].endswith(",Reliable") and table.count(",yes\n") == 2


def test_an_image_that_changes_while_it_is_measured_is_marked_unreliable(project, tmp_path, capsys, monkeypatch):
    root = make_image(tmp_path / "image")
    measure = image.measure

    def measure_then_change(where, *args, **kwargs):  # the image changes between two measurements
        result = measure(where, *args, **kwargs)
        with open(root / "a.bin", "ab") as handle:
            handle.write(b"+")
        return result

    monkeypatch.setattr(image_runs.image, "measure", measure_then_change)
    assert full_image(project, root) == 0
    out, err = capsys.readouterr()
    warnings = _warnings(err)
    assert len(warnings) == 1 and "Table V is marked unreliable" in warnings[0]
    assert "warm and cold cache: the image digest differed between repetitions" in warnings[0]
    metrics = io.read_json(project / "data" / "derived" / "full_image_metrics.json")
    assert not metrics["image"]["digest_stable"] and not metrics["reliable"]
    assert not metrics["warm"]["reliable"]
    assert "changed while it was measured" in metrics["warm"]["unreliable_because"][0]
    rows = (project / "paper_figs" / "amort" / "table5_image.csv").read_text().splitlines()[1:]
    assert len(rows) == 2 and all(",no: the image digest differed" in row for row in rows)
    assert "no: the image digest differed" in out  # the printed Table V says so too


def test_an_eviction_that_cannot_be_verified_is_never_printed_as_verified(project, capsys):
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.statvfs(shm).f_blocks == 0:
        pytest.skip("no /dev/shm here: tmpfs pages cannot be evicted, which is what this test uses")
    root = make_image(shm / f"pqlab-test-image-{os.getpid()}")
    try:
        assert full_image(project, root) == 0
    finally:
        shutil.rmtree(root)
    out, err = capsys.readouterr()
    metrics = io.read_json(project / "data" / "derived" / "full_image_metrics.json")
    assert metrics["eviction"]["verified"] is False and metrics["cold"]["reliable"] is False
    assert metrics["warm"]["reliable"] is True  # the warm row does not depend on eviction
    assert "eviction verified" not in out and "eviction NOT verified by mincore" in out
    warnings = _warnings(err)
    assert len(warnings) == 1 and re.search(r"cold cache: eviction not verified in (\d+) of \1 repetitions",
                                            warnings[0])


def test_a_fifo_in_the_image_dir_is_one_input_invalid_line(project, tmp_path, capsys):
    root = make_image(tmp_path / "image")
    os.mkfifo(root / "lib" / "pipe")
    assert full_image(project, root) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pqlab: error [INPUT_INVALID]: {root / 'lib' / 'pipe'}: is a FIFO; an image holds regular files, "
                   "folders and symbolic links only: remove it or measure another folder"]
    assert not (project / "data" / "derived" / "full_image_metrics.json").exists()


def test_a_file_name_that_is_not_utf8_is_one_input_invalid_line(project, tmp_path, capsys):
    root = make_image(tmp_path / "image")
    try:
        (root / "lib" / os.fsdecode(b"bad\xff.bin")).write_bytes(b"x")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses file names that are not UTF-8")
    assert full_image(project, root) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pqlab: error [INPUT_INVALID]: ")
    assert f"{root / 'lib'}/bad\\xff.bin: a file name in the image is not valid UTF-8" in err[0]
    with pytest.raises(InputInvalidError):
        image.measure(root)  # the library says the same, not UnicodeEncodeError
