"""Transport study end to end: the smoke run of `pqlab transport` (tests/smoke.py) and a run on synthetic
configurations from a --configs file: outputs written, headline metrics consistent."""

from __future__ import annotations

import pandas as pd
import pytest

from pqlab import params
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from tests.smoke import PARAMS

# synthetic sizes standing in for the CASE size model's configurations (role names from params)
CONFIGS = {"B": (300, 780, 560, 20), "D3": (1350, 9000, 5500, 26), "C5": (1200, 2000, 2400, 26),
           "C1": (975, 1026, 619, 26)}


@pytest.fixture(scope="module")
def smoke_transport(smoke):
    """`pqlab transport` on the smoke profile, defaults only: Table I configurations from the size model."""
    return smoke.run("transport").ok(), params.load(PARAMS, "smoke")


@pytest.mark.slow
def test_smoke_run_writes_every_output_from_the_table1_configurations(smoke_transport):
    run, settings = smoke_transport
    for name in ("fig2_transport.pdf", "fig2_transport.png", "table1_case_times.csv", "table1_case_times.md",
                 "sed_failures.csv", "radio_time.csv"):
        assert (run.root / "paper_figs" / "case" / name).stat().st_size > 0
    metrics = run.metrics
    assert set(metrics) == {"profile", "confidence", "model", "paper", "source_accurate", "raw_samples"}
    assert metrics["confidence"] == settings.transport.confidence
    assert metrics["profile"] == "smoke"
    paper = metrics["paper"]
    assert paper["drop_in_1hop_none_block_s"] > 0 and paper["radio_1hop_none_classical_ms"] > 0
    # a larger handshake keeps the radio on longer
    assert paper["radio_1hop_none_drop_in_ms"] > paper["radio_1hop_none_classical_ms"]
    grid = run.parquet("data/raw/transport_grid.parquet")
    thread = settings.transport
    # B and C1 fit one datagram per message (one transport); D3 and C5 run over IPv6, pull and block
    assert dict(grid.groupby("config")["transport"].nunique()) == {"B": 1, "C1": 1, "C5": 3, "D3": 3}
    assert len(grid) == (2 * 1 + 2 * 3) * len(thread.hops) * len(thread.scenarios) * 2 * thread.runs
    # the command's default: the Table I configurations the profile names, sizes from the CASE size model
    table = run.table("table1_case_times")
    assert sorted(table["config"]) == sorted(thread.configurations) and (table["time_1hop_none_s"] > 0).all()
    assert "time_1hop_none_s" in run.stdout
    assert not list((run.root / "data" / "derived").glob("*.parts")), "resume cache left after the stage"


@pytest.mark.slow
def test_smoke_run_records_both_channel_priorities(smoke_transport):
    run, _ = smoke_transport
    metrics = run.metrics
    for variant in ("paper", "source_accurate"):
        sensitivity = metrics[variant]["channel_priority"]
        assert sensitivity["configured"] == "node_arrival"
        for rule in ("node_arrival", "message_age"):
            assert set(sensitivity[rule]) >= {"drop_in_ratio_3to4hop_min", "drop_in_ratio_3to4hop_max"}
        assert sensitivity["node_arrival"]["drop_in_ratio_3to4hop_min"] == \
            metrics[variant]["drop_in_ratio_3to4hop_min"]
    # B fits: one datagram per message, so every handshake carries its 20 frames at one hop, loss-free
    grid = run.parquet("data/raw/transport_grid.parquet")
    one_hop = grid[(grid["config"] == "B") & (grid["hops"] == 1) & (grid["loss"] == "none") & ~grid["sleepy"]]
    assert len(one_hop) and (one_hop["frames"] == 20).all()


@pytest.mark.slow
def test_cli_transport_runs_from_a_configs_file(project):
    import subprocess
    import sys

    import yaml

    configs = project / "configs.yaml"
    configs.write_text(yaml.safe_dump({name: {"sizes": list(sizes), "device_compute_ms": [10, 5]}
                                       for name, sizes in CONFIGS.items()}))
    raw = yaml.safe_load((project / "params" / "params.yaml").read_text())
    raw["transport"]["hops"] = [1, 3, 4]
    (project / "params" / "params.yaml").write_text(yaml.safe_dump(raw))
    done = subprocess.run([sys.executable, "-m", "pqlab.cli", "transport", "--configs", str(configs), "--params",
                           str(project / "params" / "params.yaml"), "--profile", "smoke", "--workers", "1", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "time_1hop_none_s" in done.stdout
    assert read_json(project / "data" / "derived" / "transport_metrics.json")["profile"] == "smoke"
    table = pd.read_csv(project / "paper_figs" / "case" / "table1_case_times.csv")
    assert set(table["config"]) == set(CONFIGS)  # the file's configurations, not the Table I defaults
    runs = params.load(project / "params" / "params.yaml", "smoke").transport.runs
    grid = pd.read_parquet(project / "data" / "raw" / "transport_grid.parquet")
    assert len(grid) == (2 * 1 + 2 * 3) * 3 * 4 * 2 * runs  # B and C1 fit: one datagram; 3 hops, 4 losses
    assert dict(grid.groupby("config")["time_s"].size()) == {"B": 24 * runs, "C1": 24 * runs, "C5": 72 * runs,
                                                              "D3": 72 * runs}


def test_cli_transport_rejects_bad_configs_naming_the_entry(project, capsys):
    from pqlab import cli

    bad = project / "configs.yaml"
    bad.write_text("D3: {sizes: [1, 2, 3]}\n")
    code = cli.main(["transport", "--configs", str(bad), "--params", str(project / "params" / "params.yaml"),
                     "--profile", "smoke"])
    stderr = capsys.readouterr().err
    assert code == 2 and len(stderr.strip().splitlines()) == 1
    assert "PARAMS_INVALID" in stderr and "D3" in stderr and "sizes" in stderr
