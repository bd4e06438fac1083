"""A full disk while writing outputs (issue 24, item 6): one OUTPUT_UNWRITABLE line saying how much space the set
needs and how much is free, exit 2, and the previous outputs intact.

The first test fills a real 1 MiB tmpfs (it needs root to mount one and skips, saying so, without); the second
injects ENOSPC into the writes of an output set, as the kernel returns it, and runs everywhere.
"""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from pqlab import cli
from pqlab.pipeline import outputs
from tests import faults


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in ("data", "paper_figs") for p in sorted((root / folder).rglob("*")) if p.is_file()}


def case_sizes(root: Path) -> int:
    return cli.main(faults.command("case_sizes", root))


def _assert_one_no_space_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("pqlab: error [OUTPUT_UNWRITABLE]: case_sizes outputs: no space left on the device while "
                           "writing "), line
    assert "this output set needs at least " in line and " is free" in line
    assert "the previous outputs are unchanged" in line
    return line


@pytest.fixture
def small_tmpfs(tmp_path):
    mount = tmp_path / "fs"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; test_injected_enospc covers the same path")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_tmpfs_is_one_line_and_the_previous_outputs_survive(small_tmpfs, capsys):
    root = faults.make_project(small_tmpfs / "project")
    assert case_sizes(root) == 0
    before = snapshot(root)
    assert before
    free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
    (small_tmpfs / "filler").write_bytes(b"\0" * (free - 40_000))  # less room than one output set needs
    capsys.readouterr()

    assert case_sizes(root) == 2
    line = _assert_one_no_space_line(capsys.readouterr().err)
    assert "0 B is free" in line or "kB is free" in line
    assert snapshot(root) == before
    assert not (root / outputs.STAGING).exists()  # the staged part of the set was removed

    (small_tmpfs / "filler").unlink()
    assert case_sizes(root) == 0 and snapshot(root) == before  # with room again, the same (byte-stable) set


def test_injected_enospc_is_one_line_and_the_previous_outputs_survive(tmp_path, capsys, monkeypatch):
    root = faults.make_project(tmp_path / "project")
    assert case_sizes(root) == 0
    before = snapshot(root)
    budget = [20_000]  # octets the "disk" still takes: a few files stage, then a write fails as a full disk does

    class FullDisk:
        def __init__(self, handle):
            self._handle = handle

        def write(self, data: bytes) -> int:
            if len(data) > budget[0]:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._handle.name)
            budget[0] -= len(data)
            return self._handle.write(data)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._handle.close()

    monkeypatch.setattr(outputs, "open", lambda path, mode: FullDisk(open(path, mode)), raising=False)
    capsys.readouterr()
    assert case_sizes(root) == 2
    line = _assert_one_no_space_line(capsys.readouterr().err)
    assert "staged before it" in line
    assert snapshot(root) == before and not (root / outputs.STAGING).exists()


def test_enospc_outside_an_output_set_is_one_line_too(tmp_path, capsys, monkeypatch):
    """A resume part written while the transport grid runs: not an output set, still one line."""
    import pqlab.cache

    root = faults.make_project(tmp_path / "project")

    def full(table, where, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))

    monkeypatch.setattr(pqlab.cache.pq, "write_table", full)
    assert cli.main(faults.command("transport", root)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pqlab: error [OUTPUT_UNWRITABLE]: ")
    assert ".transport-paper.parts" in lines[0] and "no space left on the device" in lines[0]
