"""Transport study end to end on synthetic configurations: outputs written, headline metrics consistent."""

from __future__ import annotations

import pandas as pd

from pqlab import params
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.studies import transport

# synthetic sizes standing in for the CASE size model's configurations (role names from params)
CONFIGS = {"B": (300, 780, 560, 20), "D3": (1350, 9000, 5500, 26), "C5": (1200, 2000, 2400, 26),
           "C1": (975, 1026, 619, 26)}


def test_study_writes_every_output(project):
    settings = params.load(project / "params" / "params.yaml", "smoke")
    result = transport.run(settings, ProjectPaths(project), configs=CONFIGS, workers=1, progress=False)
    for name in ("fig2_transport.pdf", "fig2_transport.png", "table1_case_times.csv", "table1_case_times.md",
                 "sed_failures.csv", "radio_time.csv"):
        assert (project / "paper_figs" / "case" / name).stat().st_size > 0
    metrics = read_json(project / "data" / "derived" / "thread_metrics.json")
    assert set(metrics) == {"profile", "model", "paper", "source_accurate"}
    paper = metrics["paper"]
    assert paper["drop_in_1hop_none_block_s"] > 0 and paper["radio_1hop_none_classical_ms"] > 0
    # a larger handshake keeps the radio on longer
    assert paper["radio_1hop_none_drop_in_ms"] > paper["radio_1hop_none_classical_ms"]
    grid = pd.read_parquet(project / "data" / "derived" / "thread_grid.parquet")
    assert len(grid) == (2 * 1 + 2 * 3) * 4 * 4 * 2 * settings.thread.runs  # B and C1 fit: one datagram
    assert set(result.tables["table1_case_times"]["config"]) == set(CONFIGS)


def test_cli_transport_runs_from_a_configs_file(project):
    import subprocess
    import sys

    import yaml

    configs = project / "configs.yaml"
    configs.write_text(yaml.safe_dump({name: {"sizes": list(sizes), "device_compute_ms": [10, 5]}
                                       for name, sizes in CONFIGS.items()}))
    raw = yaml.safe_load((project / "params" / "params.yaml").read_text())
    raw["thread"]["hops"] = [1, 3, 4]
    (project / "params" / "params.yaml").write_text(yaml.safe_dump(raw))
    done = subprocess.run([sys.executable, "-m", "pqlab.cli", "transport", "--configs", str(configs), "--params",
                           str(project / "params" / "params.yaml"), "--profile", "smoke", "--workers", "1", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "time_1hop_none_s" in done.stdout
    assert (project / "data" / "derived" / "thread_metrics.json").exists()


def test_cli_transport_rejects_bad_configs_naming_the_entry(project):
    import subprocess
    import sys

    bad = project / "configs.yaml"
    bad.write_text("D3: {sizes: [1, 2, 3]}\n")
    done = subprocess.run([sys.executable, "-m", "pqlab.cli", "transport", "--configs", str(bad), "--params",
                           str(project / "params" / "params.yaml"), "--profile", "smoke"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "PARAMS_INVALID" in done.stderr and "D3" in done.stderr and "sizes" in done.stderr
