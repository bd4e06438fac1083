"""The amortisation study: sweep structure on both controller paths, detection trials, and the stage end to end."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from pqlab import io, params
from pqlab.amort.fastpath import api
from pqlab.amort.fastpath.api import native_status, open_controller
from pqlab.analysis import amortisation as amortisation_analysis
from pqlab.experiments import detection_trials, interval_sweep
from pqlab.experiments.amort_lab import KeySet
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.raw_labels import PHASES
from pqlab.studies import amortisation, costs

PATHS = ["reference"] + (["native"] if native_status()[0] else [])


def test_reports_per_point_covers_reports_and_checkpoints():
    assert interval_sweep.reports_per_point(1, 16, 2) == (16, 16)
    assert interval_sweep.reports_per_point(4, 16, 2) == (16, 4)
    assert interval_sweep.reports_per_point(64, 16, 2) == (128, 2)
    with pytest.raises(ValueError):
        interval_sweep.reports_per_point(0, 16, 2)


@pytest.mark.parametrize("path", PATHS)
def test_sweep_rows_follow_the_plan(path, tmp_path):
    baselines = [interval_sweep.Baseline("nolog", "no log", "ML-DSA-65", "auto", False),
                 interval_sweep.Baseline("log", "log", "ML-DSA-65", "auto", True, "tmp", tmp_path)]
    ks = [1, 3, 8]
    raw = interval_sweep.sweep(path, baselines, ks, 2, seed=5, n_devices=3, min_reports=6, min_checkpoints=2,
                      progress=False)
    for k in ks:
        _, checkpoints = interval_sweep.reports_per_point(k, 6, 2)
        rows = raw[raw["k"] == k]
        assert len(rows) == checkpoints * 2 * len(baselines)      # one row per timed checkpoint and trial
        assert (rows["reports"] == k).all()
    assert (raw[raw["scheme"] == "nolog"]["write_ns"] < raw[raw["scheme"] == "log"]["write_ns"].min()).all()
    assert (raw[list(PHASES)].to_numpy() >= 0).all() and (raw["path"] == path).all()
    assert list(tmp_path.iterdir()) == []                           # the scratch log is gone
    per_trial = amortisation_analysis.per_trial(raw)
    assert len(per_trial) == len(ks) * 2 * len(baselines)
    total = per_trial["total_ns"] / per_trial["reports"] / 1000
    np.testing.assert_allclose(per_trial["amortised_us"], total)
    stats = amortisation_analysis.summarise_trials(per_trial, 200, 0.95, seed=1)
    assert len(stats) == len(ks) * len(baselines)
    assert ((stats["measured_lo"] <= stats["measured_us"]) & (stats["measured_us"] <= stats["measured_hi"])).all()


def test_a_rejected_report_stops_the_sweep(tmp_path):
    keys = interval_sweep.epoch_keys(2)
    reports = interval_sweep.ReportSource("reference", keys, 4, np.random.default_rng(1)).take(4)
    ctl = open_controller("reference", interval_sweep.DEPLOYMENT)
    for dev, k_evid in keys.items():
        ctl.register_epoch(dev, 1, k_evid, not_before=0)
    verdicts = ctl.ingest([reports[0], reports[0]], now=interval_sweep.ReportSource.stamp(3))  # a replay
    with pytest.raises(Exception, match="SEQ_DUPLICATE"):
        interval_sweep._check(verdicts)


@pytest.fixture(scope="module")
def keys():
    return KeySet.generate(3, "ML-DSA-65")


@pytest.mark.parametrize("k", [1, 5, 12])
def test_declared_omission_is_caught_by_range_width_at_the_next_checkpoint(keys, tmp_path, k):
    rows = detection_trials.omission_trials(keys, [k], 4, seed=11, workdir=tmp_path, strategies=("declared",),
                                            n_devices=3, progress=False)
    for row in rows:
        assert row["exposed"] and row["checkpoints_until_exposed"] == 1
        assert row["code"] == "SEQ_GAP" and row["check"] == detection_trials.WIDTH
        assert row["delay_records"] == k - row["position"] + 1 <= k


def test_trimmed_omission_of_a_device_s_last_record_surfaces_later(keys, tmp_path):
    # k = 6 over 3 devices: position 6 is device 3's last record of the batch; position 1 is device 1's first.
    last = detection_trials.omission_trial(keys, 6, 3, tmp_path, strategy="trimmed", n_devices=3, position=6)
    assert last["last_of_device_in_batch"] and last["exposed"]
    assert last["checkpoints_until_exposed"] == 2 and last["check"] == detection_trials.CONTINUITY
    assert last["delay_records"] == 1 + 6
    first = detection_trials.omission_trial(keys, 6, 3, tmp_path, strategy="trimmed", n_devices=3, position=1)
    assert first["checkpoints_until_exposed"] == 1 and first["check"] == detection_trials.CONTINUITY
    middle = detection_trials.omission_trial(keys, 9, 3, tmp_path, strategy="trimmed", n_devices=3, position=4)
    assert middle["checkpoints_until_exposed"] == 1 and middle["check"] == detection_trials.WIDTH


def test_every_equivocation_is_exposed_by_comparing_views(keys, tmp_path):
    rows = detection_trials.equivocation_trials(keys, 8, 6, seed=2, workdir=tmp_path, n_devices=3, progress=False)
    assert len(rows) == 6
    for row in rows:
        assert row["views_differ"] and row["view_a_valid_alone"] and row["view_b_valid_alone"]
        assert row["exposed"] and row["code"] == "CKPT_FORK" and row["exposed_by_gossip"]
    assert {row["variant"] for row in rows} <= set(detection_trials.VARIANTS)


def test_trials_are_a_function_of_the_seed(keys, tmp_path):
    a = detection_trials.omission_trials(keys, [7], 3, seed=9, workdir=tmp_path, strategies=("trimmed",), n_devices=3,
                                         progress=False)
    b = detection_trials.omission_trials(keys, [7], 3, seed=9, workdir=tmp_path, strategies=("trimmed",), n_devices=3,
                                         progress=False)
    assert [r["position"] for r in a] == [r["position"] for r in b]
    assert [r["delay_records"] for r in a] == [r["delay_records"] for r in b]


# --- the stage end to end (smoke) ------------------------------------------------------------------------------------

# the stage's smoke run below feeds every end-to-end test: they share one worker, which runs it once per session
SHARES_THE_RUN = pytest.mark.xdist_group("amortisation_study_run")


@pytest.fixture(scope="session")
def project(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("amortisation")
    shutil.copytree(repo_root / "params", root / "params")
    settings = params.load(root / "params" / "params.yaml", "smoke")
    paths = ProjectPaths(root)
    costs.run(settings, paths, progress=False)                      # the cost study's medians feed Eq. 1
    return settings, paths, amortisation.run(settings, paths, progress=False)


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_eq1_reads_table1_from_the_cost_study_medians_and_means(project):
    settings, paths, result = project
    stats = pd.read_parquet(paths.derived / "costs_stats.parquet")
    table1 = stats[stats["in_table1"]].set_index("op_id")
    for statistic, inputs in (("median", result.data["model_inputs"]), ("mean", result.data["model_inputs_means"])):
        for scheme, base in settings.amortisation.baselines.items():
            values = inputs[scheme]
            assert values.c_mac == table1.loc["hmac_sha256", statistic]
            assert values.c_leaf == table1.loc["merkle_leaf_interior", statistic]
            assert values.c_sign == table1.loc[f"sign_{base.signer}", statistic]
            assert values.c_fsync == (table1.loc["write_fsync", statistic] if base.durable_log else 0.0)
    assert result.metrics["inputs"]["source"] == "data/derived/costs_stats.parquet"
    assert result.metrics["eq1_inputs"]["statistic"] == "mean"


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_the_path_terms_come_from_the_probes_not_from_the_sweep(project):
    settings, _, result = project
    cfg = settings.amortisation
    terms, means = result.data["path_terms"], result.data["model_inputs_means"]
    probe, fsync = result.data["path_probe"], result.data["fsync_probe"]
    for scheme, base in cfg.baselines.items():
        mine = probe[probe["signer"] == base.signer]
        small = mine.loc[mine["k"] == min(cfg.intervals), "path_ns"].mean() / 1000
        large = mine.loc[mine["k"] == max(cfg.intervals), "path_ns"].mean() / 1000
        slope = (large - small) / (max(cfg.intervals) - min(cfg.intervals))
        assert terms[scheme].per_report_us == pytest.approx(slope)
        assert terms[scheme].per_checkpoint_us == pytest.approx(small - slope * min(cfg.intervals))
        # the signature from the checkpoint probe in the sweep's rounds; the cost study's mean kept beside it
        signed = result.data["sign_probe"]
        signed = signed[signed["signer"] == base.signer]
        assert (signed["trial"] == 0).sum() == cfg.sign_probe_reps  # the pilot
        assert terms[scheme].c_sign_us == pytest.approx(signed["ns"].mean() / 1000.0)
        assert terms[scheme].c_sign_cost_study_us == means[scheme].c_sign
        if base.durable_log:  # C_fsync: the append right after a signature; the back-to-back probe beside it
            touched = sorted({min(k, cfg.devices) for k in cfg.intervals})
            assert sorted(terms[scheme].fsync_us) == sorted(terms[scheme].fsync_back_to_back_us) == touched
            assert terms[scheme].fsync_us[touched[-1]] == pytest.approx(
                signed.loc[signed["touched"] == touched[-1], "append_ns"].mean() / 1000)
            mine = fsync[fsync["signer"] == base.signer]
            assert terms[scheme].fsync_back_to_back_us[touched[-1]] == pytest.approx(
                mine.loc[mine["touched"] == touched[-1], "ns"].mean() / 1000)
        else:
            assert terms[scheme].fsync_us == {} == terms[scheme].fsync_back_to_back_us
        # the probe appends what the sweep writes: checkpoints of the sizes the sweep produced
        sweep_sizes = set(result.data["sweep"].query("scheme == @scheme")["checkpoint_octets"])
        assert sweep_sizes <= set(terms[scheme].octets.values())


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_stage_outputs_and_metadata(project):
    settings, paths, _ = project
    for relative in ("data/raw/amortisation_sweep.parquet", "data/raw/amortisation_omission.parquet",
                     "data/raw/amortisation_path_probe.parquet", "data/raw/amortisation_fsync_probe.parquet",
                     "data/raw/amortisation_sweep_plan.parquet", "paper_figs/amort/amortisation_by_backend.csv",
                     "data/raw/amortisation_equivocation.parquet", "data/derived/amortisation_stats.parquet",
                     "data/derived/amortisation_curve.csv", "data/derived/amortisation_metrics.json",
                     "paper_figs/amort/table2_amortised.csv", "paper_figs/amort/table2_amortised.md",
                     "paper_figs/amort/fig3_amortisation.pdf", "paper_figs/amort/fig3_amortisation.png",
                     "paper_figs/amort/fig4_tradeoff.pdf", "paper_figs/amort/fig4_tradeoff.png",
                     "paper_figs/amort/amortisation_sensitivity.pdf", "paper_figs/amort/amortisation_sensitivity.png"):
        assert (paths.root / relative).stat().st_size > 0, relative
    meta = io.read_parquet_metadata(paths.raw / "amortisation_sweep.parquet")
    assert meta["controller_path"]["requested"] == settings.amort.controller_path
    assert meta["controller_path"]["used"] in api.PATHS and meta["controller_path"]["reason"]
    assert len(meta["raw_samples"]["load_average"]["before"]) == 3 and meta["params"]["amortisation"]["trials"] == 1
    raw = pd.read_parquet(paths.raw / "amortisation_sweep.parquet")
    assert set(raw["path"]) == {meta["controller_path"]["used"]}
    assert set(raw["k"]) == set(settings.amortisation.intervals)


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_every_point_runs_in_every_trial_in_a_shuffled_order(project):
    settings, _, result = project
    raw, plan = result.data["sweep"], result.data["plan"]
    cfg = settings.amortisation
    assert set(plan["trial"]) == set(range(cfg.trials))
    assert (plan.groupby(["scheme", "k"])["trial"].nunique() == cfg.trials).all()
    for (scheme, k, trial), group in raw.groupby(["scheme", "k", "trial"]):
        planned = plan[(plan["scheme"] == scheme) & (plan["k"] == k) & (plan["trial"] == trial)]["checkpoints"]
        assert len(group) == int(planned.iloc[0]) >= cfg.min_checkpoints
    stats = result.data["all_stats"]
    assert ((stats["measured_lo"] <= stats["measured_us"]) & (stats["measured_us"] <= stats["measured_hi"])).all()
    amortised = raw["total_ns"] / raw["reports"] / 1000
    means = amortised.groupby([raw["scheme"], raw["k"]]).mean()
    for row in stats.itertuples():
        assert row.measured_us == pytest.approx(means[(row.scheme, row.k)])
        assert row.half_width_pct == pytest.approx(100 * max(row.measured_us - row.measured_lo,
                                                             row.measured_hi - row.measured_us) / row.measured_us)


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_table2_has_one_row_per_baseline_with_both_endpoints(project):
    settings, _, result = project
    table = result.tables["table2_amortised"]
    cfg = settings.amortisation
    assert len(table) == len(cfg.baselines)
    first, last = cfg.intervals[0], cfg.intervals[-1]
    np.testing.assert_allclose(table["Reduction measured"],
                               table[f"k = {first} measured [µs]"] / table[f"k = {last} measured [µs]"])
    assert (table["Reduction Eq. 1"] > 1).all()
    assert (table[f"k = {first} ± [%]"] >= 0).all() and table["Median relative error (path terms)"].notna().all()


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_metrics_hold_every_report_row(project, repo_root):
    _, paths, result = project
    metrics = read_json(paths.derived / "amortisation_metrics.json")
    assert metrics == json.loads(json.dumps(result.metrics, default=str))
    for scheme in ("mldsa_nolog", "mldsa_log", "slhdsa_log"):
        measured = metrics["measured"][scheme]
        for suffix in ("", "_path_terms"):
            low, high = measured[f"median_relative_error_ci_pct{suffix}"]
            assert 0 <= low <= high and measured[f"median_relative_error_pct{suffix}"] >= 0
        assert set(measured["points"]) == {f"k{k}" for k in metrics["intervals"]}
        assert all(p["checkpoints"] >= 1 and p["half_width_pct"] >= 0 for p in measured["points"].values())
        assert metrics["model"][scheme]["k_star"] > 0
        assert metrics["model"][scheme]["share_signature_pct"] + metrics["model"][scheme]["share_write_pct"] == \
            pytest.approx(100)
    declared = metrics["omission"]["declared"]
    assert declared["all_exposed"] and declared["all_by_next_checkpoint"] and declared["max_delay_over_k"] <= 1
    assert metrics["equivocation"]["exposed"] == metrics["equivocation"]["trials"]
    assert "dominates" in metrics["dominant"]["sentence"]
    reference = yaml.safe_load((repo_root / "params" / "paper_reference.yaml").read_text())
    keys = [q["metric"].split(":", 1)[1] for q in reference["quantities"]
            if q["metric"].startswith("amortisation_metrics.json:") and "k4096" not in q["metric"]
            and "expr" not in q]  # a derived row's metric names the mapping it counts
    for key in keys:  # every REPORT row finds its value (k = 4096 is outside the smoke intervals)
        node = metrics
        for part in key.split("."):
            node = node[part]
        assert isinstance(node, (int, float)), key


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_library_dependent_claims_cover_every_backend_offering_each_signer(project):
    from pqlab import crypto

    settings, _, result = project
    metrics = result.metrics["library_dependent"]
    claims = result.tables["amortisation_by_backend"]
    for scheme, base in settings.amortisation.baselines.items():
        backends = crypto.backends_offering(base.signer)
        main = crypto.resolve_backend(base.signer, settings.amortisation.backend)
        assert metrics["main_backend"][scheme] == main and set(metrics["baselines"][scheme]) == set(backends)
        for backend, row in metrics["baselines"][scheme].items():
            assert row["main"] == (backend == main)
            assert row["reduction_measured"] == pytest.approx(row["cost_first_us"] / row["cost_last_us"], rel=1e-3)
            assert row["dominant"] in ("signature", "durable write") and row["k_star"] > 0
            assert row["share_signature_pct"] + row["share_write_pct"] == pytest.approx(100)
        assert len(claims[claims["baseline"] == scheme]) == len(backends)
    # the main backend's measured reduction is Table II's
    table = result.metrics["measured"]
    for scheme in settings.amortisation.baselines:
        main = metrics["main_backend"][scheme]
        assert metrics["baselines"][scheme][main]["reduction_measured"] == pytest.approx(table[scheme]["reduction"],
                                                                                        rel=1e-2)


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_sensitivity_covers_every_backend_and_storage_target(project):
    from pqlab import crypto

    settings, _, result = project
    sensitivity = result.data["sensitivity"]
    signers = {b.signer for b in settings.amortisation.baselines.values()}
    expected = {(s, b, t) for s in signers for b in crypto.backends_offering(s) for t in settings.amortisation.storage}
    assert set(zip(sensitivity["signer"], sensitivity["backend"], sensitivity["storage"], strict=True)) == expected
    assert len(set(sensitivity["storage"])) >= 2
    assert set(result.data["sensitivity_points"]["combo"]) == set(sensitivity["combo"])


@pytest.mark.slow  # runs the whole study
@SHARES_THE_RUN
def test_the_dvc_plot_columns_exist_in_the_curve(project, repo_root):
    _, paths, _ = project
    curve = pd.read_csv(paths.derived / "amortisation_curve.csv")
    plot = yaml.safe_load((repo_root / "dvc.yaml").read_text())["plots"]
    spec = next(p["amortisation_curve"] for p in plot if "amortisation_curve" in p)
    assert spec["x"] in curve.columns
    assert set(spec["y"]["data/derived/amortisation_curve.csv"]) <= set(curve.columns)
    for scheme in ("mldsa_nolog", "mldsa_log", "slhdsa_log"):  # each point's interval and its samples
        assert (curve[f"{scheme}_measured_lo_us"] <= curve[f"{scheme}_measured_us"]).all()
        assert (curve[f"{scheme}_measured_us"] <= curve[f"{scheme}_measured_hi_us"]).all()
        assert (curve[f"{scheme}_checkpoints"] >= 1).all() and (curve[f"{scheme}_model_path_us"] > 0).all()


@pytest.mark.slow  # runs the whole study
def test_without_the_cost_stage_the_inputs_are_measured_and_say_so(tmp_path, repo_root):
    shutil.copytree(repo_root / "params", tmp_path / "params")
    settings = params.load(tmp_path / "params" / "params.yaml", "smoke")
    stats, provenance = amortisation.cost_medians(settings, ProjectPaths(tmp_path), progress=False)
    assert "measured in this run" in provenance["source"]
    assert {"hmac_sha256", "merkle_leaf_interior", "write_fsync"} <= set(stats["op_id"])
    assert not (tmp_path / "data" / "derived" / "costs_stats.parquet").exists()
