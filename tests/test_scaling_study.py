"""The scaling stage on the smoke profile: Table III's bytes are len() of real encodings, one process per trial with
its RSS read from /proc, revocation counts, re-keying, partition replay, outputs and provenance."""

from __future__ import annotations

import os
import warnings

import pandas as pd
import pytest

from pqlab import io, params
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import Code
from pqlab.amort.fastpath.api import open_controller, resolve_controller_path, sign_and_commit
from pqlab.amort.identity import SigningKey
from pqlab.amort.messages import Checkpoint, Report
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.errors import ParamsError
from pqlab.experiments.amort_fleet import FIRST_TIME_MS, Fleet, batches, report_rounds
from pqlab.io import read_json  # checks and drops the file's pqlab_sha256
from pqlab.paths import ProjectPaths
from pqlab.studies import scaling as study


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("project")
    (root / "params").mkdir()
    for name in ("params.yaml", "paper_reference.yaml"):
        (root / "params" / name).write_text((REPO / "params" / name).read_text())
    settings = params.load(root / "params" / "params.yaml", "smoke")
    with warnings.catch_warnings():  # native requested but not built: the fallback warns (and is recorded)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = study.run(settings, ProjectPaths(root), progress=False)
    return settings, ProjectPaths(root), result


@pytest.mark.slow  # runs the whole study
def test_table3_byte_columns_equal_len_of_real_encodings(run, tmp_path):
    """Rebuild each row's checkpoint independently (fresh fleet, real reports, a real ML-DSA-65 signature) and
    compare every byte column with len() of the encodings."""
    settings, _, result = run
    cfg = settings.scaling
    table = result.tables["table3_scaling"].set_index("Identities")
    path = result.metrics["controller_path"]
    for n in cfg.identities:
        fleet = Fleet(n, settings.seed + 99, tag_len=cfg.tag_len)
        ctl = open_controller(path, fleet.deployment(), sig_alg=cfg.checkpoint_signer)
        fleet.register(ctl, not_before=FIRST_TIME_MS)
        reports = report_rounds(fleet, path, [cfg.disclosure_tag])[0]
        assert sum(ctl.ingest(chunk, now=FIRST_TIME_MS).n_accepted for chunk in batches(reports)) == n
        with DurableLog(tmp_path / f"log-{n}") as log:
            data = sign_and_commit(ctl, SigningKey.generate(cfg.checkpoint_signer), log)
        row = table.loc[n]
        record = Report.decode(reports[0]).record.encode()
        assert row["Checkpoint [B]"] == len(data)
        assert len(Checkpoint.decode(data).spans) == n
        assert row["Record [B]"] == len(record)
        assert row["Report [B]"] == len(reports[0]) == len(reports[-1])
        assert row["Tags [B]"] == len(reports[0]) - len(record)
        assert row["Checkpoint share [B]"] == pytest.approx(len(data) / n)
        assert row["B/report"] == pytest.approx(len(reports[0]) + len(data) / n)
        assert row["Checkpoint [KiB]"] == pytest.approx(len(data) / 1024)


@pytest.mark.slow  # runs the whole study
def test_each_trial_ran_in_its_own_process_with_rss_from_proc(run):
    settings, _, result = run
    cfg = settings.scaling
    trials = result.data["trials"]
    assert sorted(set(trials["identities"])) == list(cfg.identities)
    assert (trials.groupby("identities").size() == cfg.trials).all()
    # every trial's interpreter started fresh: its RSS before the fleet is far below the peak of a bigger count
    assert (trials["rss_before_fleet_kib"] > 0).all()
    assert (trials["rss_peak_kib"] >= trials["rss_end_kib"]).all()
    assert (trials["rss_peak_kib"] >= trials["rss_after_register_kib"]).all()
    rounds = result.data["rounds"]
    for (n, _trial), group in rounds.groupby(["identities", "trial"]):
        timed = group[~group["warmup"]]
        assert len(timed) >= cfg.rounds and len(timed) * n >= cfg.min_reports
        assert list(group["fsyncs"]) == list(range(1, len(group) + 1))  # one durable write per checkpoint
        assert (group["total_ns"] >= group["sign_ns"] + group["durable_ns"]).all()


@pytest.mark.slow  # runs the whole study
def test_revoking_one_identity_leaves_every_other_attesting(run):
    settings, _, result = run
    iso = result.tables["isolation"].set_index("identities")
    assert list(iso.index) == list(settings.scaling.isolation_fleets)
    for n, row in iso.iterrows():
        assert row["revoked_next_report"] == Code.REVOKED.value
        assert row["others"] == n - 1 and row["others_attesting"] == n - 1
        assert row["rekeyed"] == min(n - 1, settings.scaling.rekey_limit or n)
        assert row["rekeyed_attesting"] == row["rekeyed"]
        assert row["not_rekeyed_attesting"] == n - 1 - row["rekeyed"]
        assert row["old_epoch_report_after_rekey"] == Code.EPOCH_STALE.value
        assert row["spans_after"] == n - 1 and row["epoch_closes_after"] == row["rekeyed"]
    counts = result.data["isolation"]
    assert not counts["revoked_in_spans_after"].any()
    assert (counts["revoke_again"] == Code.REVOKED.value).all()
    rekey = result.data["rekey"]
    assert (rekey["epoch"] == 2).all() and (rekey["rekey_us"] > 0).all()


@pytest.mark.slow  # runs the whole study
def test_partition_replay_remerges_every_buffered_record(run):
    settings, _, result = run
    replay = result.data["replay"]
    window = round(settings.scaling.replay_window_s * settings.scaling.replay_rate_hz)
    assert sorted(set(replay["backlog"])) == sorted(set(settings.scaling.replay_backlogs) | {window})
    assert (replay["accepted"] == replay["backlog"]).all()
    assert (replay["span_seq_lo"] == 2).all() and (replay["span_seq_hi"] == replay["backlog"] + 1).all()
    assert replay.loc[replay["one_window"], "backlog"].unique().tolist() == [window]


@pytest.mark.slow  # runs the whole study
def test_size_budget_crossing_is_straddled_by_real_encodings(run):
    settings, _, result = run
    budget = result.data["budget"]
    assert budget["budget_octets"] == settings.scaling.size_budget_octets
    assert budget["checkpoint_octets_at_limit"] <= budget["budget_octets"] < budget["checkpoint_octets_over_limit"]
    assert budget["first_identities_over_budget"] == budget["identities_within_budget"] + 1
    parts = result.data["decomposition"]
    assert parts.checkpoint(budget["identities_within_budget"]) == budget["checkpoint_octets_at_limit"]


@pytest.mark.slow  # runs the whole study
def test_outputs_exist_with_the_controller_path_recorded(run):
    settings, paths, result = run
    for relative in ("paper_figs/amort/table3_scaling.csv", "paper_figs/amort/table3_scaling.md",
                     "paper_figs/amort/isolation.csv", "paper_figs/amort/isolation.md",
                     "paper_figs/amort/partition_replay.csv", "paper_figs/amort/checkpoint_budget.csv",
                     "paper_figs/amort/fig_scaling.pdf", "paper_figs/amort/fig_scaling.png",
                     "data/derived/scaling_metrics.json"):
        assert (paths.root / relative).stat().st_size > 0, relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        resolved = resolve_controller_path(settings.amort.controller_path)
    for name in ("scaling_rounds", "scaling_trials", "scaling_rekey", "scaling_isolation", "scaling_replay"):
        meta = io.read_parquet_metadata(paths.raw / f"{name}.parquet")
        assert meta["controller_path"] == result.metrics["controller_path"]
        assert meta["controller_path_requested"] == settings.amort.controller_path
        assert meta["controller_path_reason"]
        assert set(pd.read_parquet(paths.raw / f"{name}.parquet")["controller_path"]) == {meta["controller_path"]}
    assert result.metrics["controller_path"] == resolved.path
    assert result.metrics["controller_path_reason"] == resolved.reason
    metrics = read_json(paths.derived / "scaling_metrics.json")
    assert set(metrics["table3"]) == {f"n{n}" for n in settings.scaling.identities}
    assert metrics["bytes"]["record"] == 83


def test_paper_profile_runs_all_counts_five_trials_each(repo_root):
    paper = params.load(repo_root / "params" / "params.yaml", "paper").scaling
    assert paper.identities == (10, 100, 1000, 4000, 10_000, 100_000)
    assert paper.trials == 5
    assert paper.isolation_fleets == (100, 1000, 10_000) and paper.rekey_limit is None
    assert paper.replay_backlogs == (64, 128, 256, 512, 1024, 2048, 4096)


@pytest.mark.parametrize(("override", "field"), [
    ({"identities": [100, 10]}, "scaling"), ({"size_budget_octets": 0}, "scaling.size_budget_octets"),
    ({"bogus": 1}, "scaling.bogus"),
    ({"isolation_fleets": [1]}, "scaling"),
])
def test_bad_scaling_params_name_the_field(repo_root, override, field):
    import yaml

    data = yaml.safe_load((repo_root / "params" / "params.yaml").read_text())
    data["scaling"].update(override)
    with pytest.raises(ParamsError, match=field.replace(".", r"\.")):
        params.resolve(data, "smoke")


def test_worker_reads_its_own_memory_and_fails_with_a_coded_error(tmp_path):
    from pqlab.errors import MeasurementError
    from pqlab.experiments import controller_worker, scaling

    memory = controller_worker.memory_kib()
    assert memory["VmHWM"] >= memory["VmRSS"] > 0
    job = {"n": 3, "seed": 1, "trial": 0, "tag_len": 16, "path": "reference", "signer": "ML-DSA-65",
           "backend": "auto", "reports": str(tmp_path / "missing.bin"), "report_len": 101, "rounds": 1,
           "warmup_rounds": 0, "verify_reps": 1, "log": str(tmp_path / "log")}
    with pytest.raises(MeasurementError, match="worker exited"):
        scaling.run_worker(job)


def test_the_worker_runs_in_its_own_session(monkeypatch):
    """So a Ctrl-C in a notebook reaches the study only, which kills the worker (subprocess.run) and stops."""
    from pqlab.experiments import scaling

    monkeypatch.setattr(scaling, "WORKER", "tests.session_probe")  # the same launch, a child that reports its ids
    child = scaling.run_worker({"n": 1})
    assert child["sid"] == child["pid"] == child["pgid"] != os.getsid(0)


def test_rekeying_is_decomposed_into_its_parts(run):
    from pqlab.analysis import rekey_parts

    _, paths, result = run
    rows = result.data["rekey"]
    columns = [column for column, _, _ in rekey_parts.PARTS.values()]
    assert (rows[columns] > 0).all().all()
    summed = rekey_parts.with_sums(rows)
    assert (summed["exchange_us"] == summed[columns].sum(axis=1)).all()
    assert (summed["symmetric_us"] == summed[["hkdf_us", "confirm_mac_us", "policy_update_us"]].sum(axis=1)).all()
    metrics = read_json(paths.derived / "scaling_metrics.json")["rekey_parts"]
    assert set(metrics["parts_us"]) == set(rekey_parts.PARTS) and set(metrics["sums_us"]) == set(rekey_parts.SUMS)
    sums = metrics["sums_us"]
    assert sums["symmetric_us"] < sums["controller_without_signature_us"] < sums["controller_us"] \
        < sums["exchange_us"]
    assert metrics["identities"] == len(rows)
    table = pd.read_csv(paths.root / "paper_figs" / "amort" / "rekey_parts.csv")
    assert list(table["part"]) == [*rekey_parts.PARTS, *rekey_parts.SUMS, "end_to_end_controller"]


def test_rekey_parts_time_the_real_exchange_messages():
    from pqlab.amort.controller import Controller, ControllerConfig
    from pqlab.amort.device import Device
    from pqlab.amort.identity import KEM_ALGORITHM, CertificateAuthority, PublicKey, new_kem_keypair
    from pqlab.crypto import get_kem
    from pqlab.experiments import rekey_parts

    ca = CertificateAuthority(SigningKey.generate("ML-DSA-65"))
    key = SigningKey.generate("ML-DSA-65")
    deployment = Deployment(b"CTRL-001", PublicKey.of(key), ca.public, PAPER_PROFILE)
    controller = Controller(deployment, key, None, ControllerConfig())
    pair, dev_id = new_kem_keypair(), b"PLC-0001"
    controller.register(ca.issue(dev_id, pair.public, profile=PAPER_PROFILE))
    device = Device(deployment, dev_id, pair, __import__("random").Random(1).randbytes, chain_length=4)
    request = controller.open_epoch(dev_id, 1000)
    confirm = device.respond(request)
    opened = controller.confirm(confirm, 1000)
    parts = rekey_parts.time_parts(get_kem(KEM_ALGORITHM), pair, request, confirm, opened, key, dev_id, 1,
                                   PAPER_PROFILE)
    assert set(parts) == {"encaps_us", "decaps_us", "hkdf_us", "confirm_mac_us", "epoch_open_sign_us"}
    assert all(value > 0 for value in parts.values())
