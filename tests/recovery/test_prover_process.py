"""Real prover processes, real SIGKILLs, a real TPM: Table IV's behaviour, crash injection and restart loss."""

from __future__ import annotations

import pytest

from pqlab.experiments.recovery import trials

pytestmark = pytest.mark.xdist_group("tpm")  # one worker: one session swtpm and key set for all of them

R = 64


def _cell(world, arm, scenario, trial=0):
    row = trials.arm_trial(world, arm, scenario, trial, seed=7)
    assert row["killed_by_sigkill"] and row["pid_before"] != row["pid_after"]
    assert row["other_rejections"] == ""
    return row


def test_fresh_epoch_recovery_always_opens_a_new_epoch_and_reuses_nothing(keyless_world):
    for scenario in trials.SCENARIOS:
        row = _cell(keyless_world, "fresh", scenario)
        assert row["new_epoch"] and row["epoch_after"] == row["epoch_before"] + 1
        assert row["reissued"] == 0 and row["accepted_after"] == trials.post_reports(keyless_world.config)


def test_unanchored_restart_resumes_after_the_window_without_reuse(keyless_world):
    row = _cell(keyless_world, "naive", "restart")
    assert not row["new_epoch"] and row["resume_seq"] == row["reserved_hi_true"] + 1
    assert row["reissued"] == 0 and row["skipped"] == row["reserved_hi_true"] - row["last_seen_before"]


def test_unanchored_rollback_re_issues_every_number_between_the_stale_window_and_the_last_seen(keyless_world):
    row = _cell(keyless_world, "naive", "rollback")
    assert row["reserved_hi_found"] == R < row["reserved_hi_true"]
    assert not row["new_epoch"] and not row["stale_detected"]
    assert row["reissued"] == row["last_seen_before"] - row["reserved_hi_found"] > 0
    assert row["resume_rejected"] == "SEQ_DUPLICATE"  # the controller saw it; the device never learns


def test_tpm_backed_restart_resumes_the_epoch(world):
    row = _cell(world, "tpm", "restart")
    assert not row["new_epoch"] and not row["stale_detected"] and row["reissued"] == 0
    assert row["resume_seq"] == row["reserved_hi_true"] + 1 and row["ready_ms"] > 0


def test_tpm_backed_rollback_is_detected_and_fails_secure_without_reuse(world):
    row = _cell(world, "tpm", "rollback")
    assert row["reserved_hi_found"] == R < row["reserved_hi_true"]
    assert row["stale_detected"] and row["new_epoch"] and row["reissued"] == 0
    assert "stale state" in row["reason"]


@pytest.mark.parametrize("case", sorted(trials.CRASH_CASES))
def test_every_crash_around_the_counter_increment_fails_secure_or_resumes_without_reuse(world, case):
    row = trials.crash_trial(world, case, 0, seed=7)
    assert row["killed_at"] and row["killed_by_sigkill"]
    assert row["reissued"] == 0 and row["other_rejections"] == ""
    assert row["outcome"] == row["expected"]


def test_restart_loss_is_visible_in_epoch_close_and_bounded_by_k(keyless_world):
    rows = trials.restart_trial(keyless_world, 0, seed=7)
    k = keyless_world.config.k
    interrupted = [r for r in rows if r["interrupted"]]
    clean = [r for r in rows if not r["interrupted"]]
    assert len(interrupted) == keyless_world.config.interrupted_epochs and len(clean) == 1
    for r in interrupted:
        assert r["killed_by_sigkill"]
        assert r["lost"] == r["kill_point"] % k < k  # what the auditor's EPOCH_CLOSE shows
        assert r["err_evidence_incomplete"] == (r["lost"] > 0)
    assert clean[0]["lost"] == 0 and not clean[0]["err_evidence_incomplete"]
    assert all(r["restart_rate_refused"] for r in rows)  # the extra restart hits ERR_RESTART_RATE


def test_reservation_costs_are_measured_against_the_tpm(world):
    costs = trials.reservation_costs(world, 5)
    assert set(costs["arm"]) == {"naive", "tpm", "tpm_check"}
    tpm = costs[costs["arm"] == "tpm"]
    assert (tpm["increment_ms"] > 0).all() and (tpm["total_ms"] >= tpm["increment_ms"] + tpm["write_ms"]).all()


def test_an_interrupt_mid_trial_leaves_no_prover_running(keyless_world, tmp_path):
    import os

    from pqlab.experiments.recovery.driver import Link

    world = keyless_world
    trial_dir = tmp_path / "interrupted"
    trial_dir.mkdir()
    ctrl = world.controller(trial_dir)
    pdir = world.provision(trial_dir, chain_length=256)

    def interrupt(name, count, seq):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), world.spawn(pdir, "naive", "7", 1, ("report@5",)) as prover:
        pid = prover.pid
        link = Link(prover, ctrl, trials.DEV_ID, interrupt)
        link.ready()
        link.run(100)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped
    ctrl.log.close()
