"""Atomic outputs: a failed write leaves nothing behind; parquet carries its metadata."""

from __future__ import annotations

import pandas as pd
import pytest

from pqlab import io
from pqlab.errors import OutputError


def test_failed_block_leaves_no_file(tmp_path):
    target = tmp_path / "table.csv"
    with pytest.raises(RuntimeError), io.atomic_path(target) as tmp:
        tmp.write_text("half a table")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_existing_output_survives_a_failed_rewrite(tmp_path):
    target = io.write_text(tmp_path / "t.md", "complete\n")
    with pytest.raises(RuntimeError), io.atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError
    assert target.read_text() == "complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.md"]


def test_parquet_round_trips_metadata(tmp_path):
    frame = pd.DataFrame({"ns": [1.0, 2.0], "op": ["a", "b"]})
    path = io.write_parquet(tmp_path / "raw.parquet", frame, {"cpu_model": "x", "params": {"reps": 2}})
    assert io.read_parquet_metadata(path) == {"cpu_model": "x", "params": {"reps": 2}}
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)


def test_unwritable_folder_is_an_output_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OutputError, match="a-file"):
        io.ensure_writable_dir(blocker / "sub")


def test_json_round_trips_what_a_study_reports(tmp_path):
    """A stage's metrics file reads back as the metrics it computed, as JSON sees them (tuples as lists, anything
    else JSON lacks as its str); the studies' own tests read the files their command line wrote (tests/smoke.py)."""
    import json

    import numpy as np

    metrics = {"profile": "smoke", "n": np.int64(7), "x": np.float64(0.25), "rows": ("a", "b"), "none": None,
               "nested": {"p99_us": 12.5, "ok": True}}
    io.write_json(tmp_path / "m.json", metrics)
    back = io.read_json(tmp_path / "m.json")
    assert back == json.loads(json.dumps(metrics, default=str))
    assert back["rows"] == ["a", "b"] and back["x"] == 0.25 and back["nested"] == {"p99_us": 12.5, "ok": True}
