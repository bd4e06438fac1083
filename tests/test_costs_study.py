"""The cost study end to end on the smoke profile: real timings, every output, honest metadata."""

from __future__ import annotations

from math import comb

import pandas as pd
import pytest

from pqlab import crypto, io, params
from pqlab.amort.fastpath import native
from pqlab.experiments import costs
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.studies import costs as costs_study


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("project")
    (root / "params").mkdir()
    (root / "params" / "params.yaml").write_text((REPO / "params" / "params.yaml").read_text())
    settings = params.load(root / "params" / "params.yaml", "smoke")
    return settings, ProjectPaths(root), costs_study.run(settings, ProjectPaths(root), progress=False)


@pytest.mark.slow  # runs the whole study
def test_table1_has_every_operation_in_paper_order(result):
    _, _, run = result
    assert list(run.tables['table1_costs']["Operation"]) == [
        "HMAC-SHA-256, 83-octet record", "Merkle leaf and interior hash", "ML-KEM-768 encapsulate",
        "ML-KEM-768 decapsulate", "ML-DSA-65 sign", "SLH-DSA-SHA2-128f sign", "4 KiB write+fsync"]
    frequencies = list(run.tables['table1_costs']["Frequency"])
    assert frequencies == ["per report"] * 2 + ["per epoch"] * 2 + ["per checkpoint"] * 3


@pytest.mark.slow  # runs the whole study
def test_sample_counts_follow_the_profile(result):
    settings, _, run = result
    cfg = settings.costs
    counts = run.data['raw'][run.data['raw']["in_table1"]].groupby("op_id").size()
    assert counts["hmac_sha256"] == cfg.trials * cfg.reps
    assert counts["sign_SLH-DSA-SHA2-128f"] == cfg.trials * cfg.reps_slow
    assert counts["write_fsync"] == cfg.trials * cfg.reps_slow
    assert set(run.data['raw']["trial"]) == set(range(cfg.trials))


@pytest.mark.slow  # runs the whole study
def test_the_native_fast_path_primitives_are_timed_beside_table1(result):
    settings, _, run = result
    ok, why = native.status()
    if not ok:
        pytest.skip(why)
    raw = run.data["raw"]
    native_raw = raw[raw["backend"] == costs.NATIVE_BACKEND]
    counts = native_raw.groupby("op_id").size()
    cfg = settings.costs
    assert dict(counts) == {op: cfg.trials * cfg.native_batches for op in costs.NATIVE_OPERATIONS}
    assert not native_raw["in_table1"].any() and (native_raw["net_ns"] > 0).all()
    assert set(run.metrics["native_per_report"]) == set(costs.NATIVE_OPERATIONS)
    assert run.data["metadata"]["native_primitives"].startswith("timed in C")


@pytest.mark.slow  # runs the whole study
def test_costs_are_ordered_as_the_protocol_expects(result):
    _, _, run = result
    median = run.data['stats'][run.data['stats']["in_table1"]].set_index("op_id")["median"]
    # Per-report hashing is orders of magnitude cheaper than any public-key operation.
    assert median["hmac_sha256"] * 5 < median["encaps_ML-KEM-768"]
    assert median["encaps_ML-KEM-768"] < median["sign_ML-DSA-65"] < median["sign_SLH-DSA-SHA2-128f"]
    stats = run.data['stats']
    assert (stats["median_lo"] <= stats["median"]).all() and (stats["median"] <= stats["median_hi"]).all()
    assert (stats["median"] <= stats["p95"]).all() and (stats["p95"] <= stats["p99"]).all()


@pytest.mark.slow  # runs the whole study
def test_every_backend_with_the_comparison_signer_is_compared(result):
    settings, _, run = result
    names = crypto.backends_offering(settings.costs.comparison_signer)
    timed = set(run.data['stats'][run.data['stats']["op_id"] == f"sign_{settings.costs.comparison_signer}"]["backend"])
    assert timed == set(names)
    assert len(run.tables['table1_backend_comparison']) == comb(len(names), 2)
    assert (run.tables['table1_backend_comparison']["ratio"] >= 1).all()


@pytest.mark.slow  # runs the whole study
def test_outputs_exist_with_metadata(result):
    settings, paths, run = result
    for relative in ("data/raw/costs.parquet", "data/derived/costs_stats.parquet",
                     "paper_figs/amort/table1_costs.csv", "paper_figs/amort/table1_costs.md",
                     "paper_figs/amort/fig2_costs.pdf", "paper_figs/amort/fig2_costs.png",
                     "data/derived/costs_metrics.json"):
        assert (paths.root / relative).stat().st_size > 0, relative
    meta = io.read_parquet_metadata(paths.raw / "costs.parquet")
    for key in ("cpu_model", "frequency_governor", "git_commit", "timestamp_utc", "libraries", "backends"):
        assert key in meta
    assert meta["params"]["costs"]["reps"] == settings.costs.reps
    assert "cryptography" in meta["libraries"]
    raw = pd.read_parquet(paths.raw / "costs.parquet")
    assert len(raw) == len(run.data['raw'])
    metrics = read_json(paths.derived / "costs_metrics.json")
    assert metrics["table1"]["sign_ML-DSA-65"]["median_us"] > 0
    assert not list(paths.raw.glob(".fsync-probe-*")), "storage probe file left behind"
    assert not list(paths.root.rglob("*.part")), "temporary output left behind"


def test_slow_operations_are_the_papers_two():
    cfg = params.resolve(
        {"profile": "smoke", "profiles": ["smoke"], "seed": 1, "costs": {"profiles": {"smoke": {
            "trials": 1, "reps": 1, "reps_slow": 1, "warmup": 0, "bootstrap_resamples": 100}}}}).costs
    slow = {op.op_id for op in costs.table1_operations(cfg) if op.slow}
    assert slow == {"sign_SLH-DSA-SHA2-128f", "write_fsync"}


def test_table1_symmetric_rows_are_timed_in_c_with_python_beside_them(result):
    from pqlab.experiments import symmetric_timing

    settings, paths, run = result
    ok, why = symmetric_timing.status()
    if not ok:
        pytest.skip(why)
    stats = run.data["stats"]
    table = run.tables["table1_costs"].set_index("Operation")
    symmetric = ["HMAC-SHA-256, 83-octet record", "Merkle leaf and interior hash"]
    assert set(table.loc[symmetric, "Backend"]) == {costs.C_LOOP_BACKEND}
    python = stats[stats["backend"] == costs.PYTHON_BACKEND].set_index("op_id")
    for label, op_id in zip(symmetric, ("hmac_sha256", "merkle_leaf_interior"), strict=True):
        assert table.loc[label, "Python-timed median [µs]"] == python.loc[op_id, "median"]
        assert not python.loc[op_id, "in_table1"]
    assert table.drop(index=symmetric)["Python-timed median [µs]"].isna().all()
    raw = run.data["raw"]
    c_rows = raw[raw["backend"] == costs.C_LOOP_BACKEND]
    assert set(c_rows["op_id"]) == set(costs.C_LOOP_OPERATIONS)
    assert (c_rows.groupby("op_id").size() == settings.costs.trials * settings.costs.reps).all()
    # the loop's own cost is one value per trial, measured beside the operations
    assert (c_rows.groupby("trial")["overhead_ns"].nunique() == 1).all()
    metrics = read_json(paths.derived / "costs_metrics.json")
    for op_id in ("hmac_sha256", "merkle_leaf_interior"):
        assert metrics["table1"][op_id]["backend"] == costs.C_LOOP_BACKEND
        assert metrics["table1_python"][op_id]["backend"] == costs.PYTHON_BACKEND
        reference = metrics["reference_operations"][op_id]
        assert reference["median_lo_us"] <= reference["median_us"] <= reference["median_hi_us"]
        assert reference["p99_us"] >= reference["median_us"] and "C loop" in reference["method"]
    assert set(metrics["symmetric_c_variants"]) == {"hmac_sha256_keyed", "hmac_sha256_oneshot"}


def test_every_table1_signer_is_timed_on_every_backend_with_the_library_dependent_claim(result):
    settings, paths, _ = result
    metrics = read_json(paths.derived / "costs_metrics.json")
    dependent = metrics["library_dependent"]
    for algorithm in settings.costs.signers:
        assert set(dependent["signers"][algorithm]) == set(crypto.backends_offering(algorithm))
        main = crypto.resolve_backend(algorithm, settings.costs.backend)
        assert dependent["main_backend"][algorithm] == main
        for backend, row in dependent["signers"][algorithm].items():
            assert row["main"] == (backend == main)
            assert row["write_over_sign"] == pytest.approx(dependent["write_fsync_median_us"] / row["median_us"],
                                                           rel=1e-3, abs=1e-4)
            assert row["dominant_with_log"] == ("durable write" if row["write_over_sign"] > 1 else "signature")
        pairs = comb(len(crypto.backends_offering(algorithm)), 2)
        assert len(metrics["backend_comparison_by_algorithm"].get(algorithm, {})) == pairs
