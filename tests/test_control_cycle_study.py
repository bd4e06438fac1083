"""The control-cycle study end to end on the smoke profile (`pqlab control-cycle`): seven configurations, every
output, honest metadata."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from pqlab import io, params
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.report import collect, load_reference

# the whole control-cycle study (smoke), pinned to the real-time core: one at a time with the others that pin it
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rt_core")]


@pytest.fixture(scope="module")
def result(smoke):
    """The session's `pqlab control-cycle` smoke run (tests/smoke.py), read back from what it wrote."""
    from tests.conftest import REPO

    stage = smoke.run("control_cycle").ok()
    paths = ProjectPaths(stage.root, REPO / "params")
    samples = paths.raw / "control_cycle_samples.parquet"
    run = SimpleNamespace(files=stage.written, data={
        "summary": io.read_parquet(paths.derived / "control_cycle_summary.parquet"),
        "samples": io.read_parquet(samples), "runs": io.read_parquet_metadata(samples)["runs"]})
    return params.load(REPO / "params" / "params.yaml", "smoke"), paths, run


def test_every_configuration_ran_its_cycles(result):
    settings, _, run = result
    summary = run.data["summary"]
    assert list(summary["configuration"]) == list(settings.control_cycle.configurations)
    assert len(summary) == 7 and (summary["cycles"] == settings.control_cycle.cycles).all()
    every = summary.set_index("configuration")["evidence_cycles"]
    assert every["tag1_every"] == every["tag2_every"] == settings.control_cycle.cycles
    assert every["baseline"] == every["bg_ml_dsa"] == every["bg_slh_dsa"] == 0
    assert every["tag1_1hz"] == every["tag2_1hz"] == 1  # 40 cycles at 10 ms: the first cycle of the second


def test_metrics_count_misses_and_tails_per_configuration(result):
    settings, paths, run = result
    metrics = read_json(paths.derived / "control_cycle_metrics.json")
    samples = run.data["samples"]
    deadline = settings.control_cycle.period_us * 1000
    assert metrics["deadline_misses_total"] == int((samples["response_ns"] > deadline).sum())
    assert metrics["cycles_total"] == 7 * settings.control_cycle.cycles
    for name, entry in metrics["configurations"].items():
        assert entry["p50_us"] <= entry["p99_us"] <= entry["p999_us"] <= entry["max_us"], name
        responses = samples.loc[samples["configuration"] == name, "response_ns"]
        assert entry["deadline_misses"] == int((responses > deadline).sum()), name
    assert metrics["max_response_us"] == max(e["max_us"] for e in metrics["configurations"].values())
    assert "not a PLC" in metrics["host"]
    assert set(metrics["per_scan_cost_us"]) == {"scan", "one_tag", "two_tags_chain"}
    assert metrics["evidence_us"]["one_tag"] > 0 and metrics["evidence_us"]["two_tags_chain"] > 0


def test_scheduling_and_background_signers_are_recorded(result):
    _, _, run = result
    runs = {r["configuration"]: r for r in run.data["runs"]}
    for r in runs.values():
        assert r["affinity_is_target"] == 1 and r["off_target_cycles"] == 0
        assert r["realtime_obtained"] == (r["policy_name"] == "SCHED_FIFO")
        assert r["realtime_obtained"] or r["fifo_error"]
    for name in ("bg_ml_dsa", "bg_slh_dsa"):
        signer = runs[name]["signer"]
        assert signer["ready"]["affinity"] == [runs[name]["cpu_requested"]]
        assert signer["stopped"]["signatures"] >= 1
    assert runs["baseline"]["signer"] is None


def test_outputs_and_provenance(result):
    _, paths, run = result
    names = {p.name for p in run.files}
    assert {"fig6_scan.pdf", "fig6_scan.png", "fig6_scan_summary.csv", "fig6_scan_summary.md",
            "control_cycle_scan_cost.csv", "control_cycle_samples.parquet", "control_cycle_metrics.json"} <= names
    metadata = io.read_parquet_metadata(paths.raw / "control_cycle_samples.parquet")
    assert metadata["study"] == "control_cycle" and "not a PLC" in metadata["host_note"]
    assert len(metadata["runs"]) == 8 and metadata["params"]["control_cycle"]["cycles"] == 40  # + the rotation


def test_every_report_row_of_the_stage_finds_its_value(result):
    _, paths, _ = result
    reference = load_reference(paths.paper_reference)
    rows = collect(reference, paths.derived)
    mine = [q.metric.startswith("control_cycle_metrics.json:") for q in reference.quantities]
    assert sum(mine) >= 9
    assert rows[mine]["here"].notna().all(), rows[mine][rows[mine]["here"].isna()]


def test_the_response_is_split_into_wakeup_and_execution(result):
    import numpy as np

    _, paths, run = result
    metrics = read_json(paths.derived / "control_cycle_metrics.json")
    samples = run.data["samples"]
    for name, entry in metrics["configurations"].items():
        mine = samples[samples["configuration"] == name]
        for part, column in (("wakeup_us", "latency_ns"), ("execution_us", "execution_ns")):
            split = entry[part]
            assert split["p50"] <= split["p99"] <= split["p999"] <= split["max"]
            assert split["p50"] == pytest.approx(np.median(mine[column]) / 1000, abs=1e-3)
            assert split["max"] == pytest.approx(mine[column].max() / 1000, abs=1e-3)
    execution = [e["execution_us"]["p50"] for e in metrics["configurations"].values()]
    assert metrics["execution_median_range_us"] == {"low": min(execution), "high": max(execution)}
    added = metrics["added_execution_us"]
    assert set(added) == {"one_tag", "two_tags_chain", "second_tag_and_chain"}
    for what, entry in added.items():
        low, high = entry["ci"]
        assert low <= entry["median"] <= high, what
    # the added cost comes from the rotation run: its three variants alternate cycle by cycle
    rotation = samples[samples["configuration"] == "scan_cost"]
    base = rotation.loc[rotation["variant"] == 0, "execution_ns"].median() / 1000
    one = rotation.loc[rotation["variant"] == 1, "execution_ns"].median() / 1000
    assert added["one_tag"]["median"] == pytest.approx(one - base, abs=1e-3)
    assert metrics["per_scan_cost_us"]["one_tag"] == pytest.approx(one, abs=1e-3)
    assert metrics["sanity"]["checks"] == 3 + 3 * 7
    table = pd.read_csv(paths.amort_figs / "fig6_scan_summary.csv")
    assert {"Wake-up p99 [µs]", "Execution p99 [µs]", "Execution max [µs]"} <= set(table.columns)
