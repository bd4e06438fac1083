"""The §V-H experiments with real processes and a real TPM: restart loss, the three recovery arms under restart and
rollback (Table IV), crash injection around the counter increment, and the cost of one reservation.

Every trial gets a fresh controller and a fresh prover directory; the prover is a child process killed with SIGKILL
at a point chosen by the trial (a seeded hook the controller never hears about). Every count comes from the protocol:
re-issued sequence numbers are reports the controller rejected as SEQ_DUPLICATE, lost evidence is what the
committed EPOCH_CLOSE entries say, and ERR_EVIDENCE_INCOMPLETE is what the cold auditor raised.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import EpochSecrets
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.identity import CertificateAuthority, PublicKey, SigningKey
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.amort.recovery.cases import ARMS, CRASH_CASES, SCENARIOS
from pqlab.amort.recovery.config import RecoveryParams
from pqlab.amort.recovery.prover import IDENTITY_FILE, STATE_FILE, Identity
from pqlab.amort.recovery.reservation import Reserver, TpmReserver
from pqlab.amort.recovery.resume import RecoveryController
from pqlab.amort.recovery.state import ProverState
from pqlab.amort.recovery.tpm import NvCounter, ensure_counter, remove_counter
from pqlab.experiments.recovery.driver import Link, ProverProcess, clock_ms

CONTROLLER_ID = b"CTRL-REC"
DEV_ID = b"PLC-R001"
Progress = Callable[[int], None]
Counter_ = dict[str, int]


def post_reports(config: RecoveryParams) -> int:
    """Reports after the restart: enough to run past every number a stale state could re-issue."""
    return (config.rollback_depth + 1) * config.window


@dataclass
class World:
    """Long-term keys shared by every trial of a run, the TPM endpoint, and the working directory."""

    config: RecoveryParams
    workdir: Path
    tcti: str | None
    ca: CertificateAuthority
    controller_key: SigningKey
    kem_seed: bytes
    cert: bytes
    counters: list[int] = field(default_factory=list)

    @property
    def deployment(self) -> Deployment:
        """The recovery study's deployment: the paper's design (§V-H measures it)."""
        return Deployment(CONTROLLER_ID, PublicKey.of(self.controller_key), self.ca.public, PAPER_PROFILE)

    @classmethod
    def create(cls, config: RecoveryParams, workdir: Path, tcti: str | None) -> World:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        ca = CertificateAuthority(SigningKey.generate("ML-DSA-65"))
        kem = mlkem.MLKEM768PrivateKey.generate()
        cert = ca.issue(DEV_ID, kem.public_key().public_bytes_raw(), profile=PAPER_PROFILE)
        workdir.mkdir(parents=True, exist_ok=True)
        return cls(config, workdir, tcti, ca, SigningKey.generate(config.checkpoint_signer), kem.private_bytes_raw(),
                   cert)

    def controller(self, trial_dir: Path, k: int | None = None) -> RecoveryController:
        cfg = ControllerConfig(k=k or self.config.k, max_restarts=self.config.max_restarts,
                               restart_window=self.config.restart_window_ms, epoch_lifetime=86_400_000)
        ctrl = RecoveryController(self.deployment, self.controller_key, DurableLog(trial_dir / "checkpoints.log"),
                                  cfg, clock=clock_ms)
        ctrl.register(self.cert)
        return ctrl

    def provision(self, trial_dir: Path, chain_length: int) -> Path:
        """A prover directory holding only the provisioned identity (no state yet)."""
        pdir = trial_dir / "prover"
        pdir.mkdir(parents=True)
        identity = Identity(DEV_ID, self.kem_seed, CONTROLLER_ID, self.controller_key.algorithm,
                            self.controller_key.public, PAPER_PROFILE.octet, chain_length)
        (pdir / IDENTITY_FILE).write_text(identity.to_json())
        return pdir

    def spawn(self, pdir: Path, arm: str, seed: str, life: int, hooks: tuple[str, ...] = ()) -> ProverProcess:
        return ProverProcess(pdir, arm, window=self.config.window, seed=seed, life=life,
                             tcti=self.tcti if arm == "tpm" else None, nv_index=self.config.nv_index, hooks=hooks)


@contextmanager
def _trial_dir(world: World, name: str) -> Iterator[Path]:
    path = world.workdir / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _replace_file(path: Path, data: bytes) -> None:
    """Put ``data`` in ``path`` the way a restored backup would: write, fsync, rename."""
    tmp = path.with_name(path.name + ".restore")
    tmp.write_bytes(data)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _audit(world: World, ctrl: RecoveryController) -> tuple[dict[int, tuple[int, int, bool]], Counter_]:
    """Feed every checkpoint to a cold auditor; per closed epoch: (last_committed, last_seen, flagged)."""
    auditor = ColdAuditor(world.deployment)
    auditor.ingest_certificate(world.cert)
    for epoch in ctrl.opened_epochs(DEV_ID):
        auditor.ingest_epoch_open(ctrl.epoch_open(DEV_ID, epoch))
    closes: dict[int, tuple[int, int, bool]] = {}
    errors: Counter_ = {}
    for data in ctrl.checkpoints:
        ckpt = ctrl.decode_checkpoint(data)
        old = auditor.last.tree_size if auditor.last else 0
        proof = ctrl.consistency(old, ckpt.tree_size) if old and ckpt.tree_size >= old else None
        flagged = False
        try:
            auditor.ingest_checkpoint(data, proof)
        except AmortError as exc:
            errors[exc.code] = errors.get(exc.code, 0) + 1
            flagged = exc.reason is Code.ERR_EVIDENCE_INCOMPLETE
        for entry in ckpt.closes:
            closes[entry.epoch] = (entry.last_committed, entry.last_seen,
                                   flagged and entry.last_seen != entry.last_committed)
    return closes, errors


# --- §V-H restart: fresh-epoch recovery, loss visible in EPOCH_CLOSE --------------------------------------------
def restart_trial(world: World, trial: int, seed: int) -> list[dict[str, Any]]:
    """SIGKILL the prover at ``interrupted_epochs`` seeded points, run one clean epoch, then restart once more
    (which the controller's restart-rate policy may refuse); one row per epoch from the audited checkpoint chain."""
    cfg = world.config
    rng = random.Random(f"recovery:restart:{seed}:{trial}")
    rows: list[dict[str, Any]] = []
    with _trial_dir(world, f"restart-{trial}") as tdir:
        ctrl = world.controller(tdir)
        pdir = world.provision(tdir, chain_length=cfg.restart_max_reports + cfg.clean_checkpoints * cfg.k + 1)
        kills: dict[int, dict[str, Any]] = {}
        life = 0
        try:
            for _ in range(cfg.interrupted_epochs):
                life += 1
                point = rng.randint(1, cfg.restart_max_reports)
                with world.spawn(pdir, "fresh", f"{seed}:{trial}", life, (f"report@{point}",)) as prover:
                    link = Link(prover, ctrl, DEV_ID, lambda name, count, seq: "kill")
                    link.ready()
                    # The new epoch's first report closes the old one (the controller installs an epoch when the
                    # device uses it); no checkpoint in between, so the old epoch's uncommitted reports are lost.
                    killed = not link.run(cfg.restart_max_reports + 1)
                kills[link.log.epoch] = {"kill_point": point, "killed": killed, "pid": prover.pid,
                                         "exit_status": link.log.exit_status}
            life += 1
            with world.spawn(pdir, "fresh", f"{seed}:{trial}", life) as prover:
                link = Link(prover, ctrl, DEV_ID)
                link.ready()
                link.run(cfg.clean_checkpoints * cfg.k)
                clean_epoch = link.log.epoch
            ctrl.retire(DEV_ID)
            ctrl.checkpoint()
            life += 1
            with world.spawn(pdir, "fresh", f"{seed}:{trial}", life) as prover:
                storm = Link(prover, ctrl, DEV_ID)
                storm.ready()
            closes, errors = _audit(world, ctrl)
        finally:
            ctrl.log.close()
    for epoch, (committed, seen, flagged) in sorted(closes.items()):
        kill = kills.get(epoch, {})
        rows.append({"trial": trial, "epoch": epoch, "interrupted": epoch != clean_epoch,
                     "kill_point": kill.get("kill_point"), "killed_by_sigkill": kill.get("exit_status") == -9,
                     "prover_pid": kill.get("pid"), "last_seen": seen, "last_committed": committed,
                     "lost": seen - committed, "err_evidence_incomplete": flagged,
                     "restart_rate_refused": storm.log.restart_rate_refused,
                     "auditor_errors": ",".join(f"{k}={v}" for k, v in sorted(errors.items()))})
    return rows


# --- §V-H rollback: Table IV ---------------------------------------------------------------------------------
def arm_trial(world: World, arm: str, scenario: str, trial: int, seed: int) -> dict[str, Any]:
    """One Table IV cell trial: run, snapshot the state file after the first durable write, SIGKILL at a seeded
    report inside reservation ``rollback_depth + 1``, optionally restore the snapshot, restart, report on."""
    if arm not in ARMS or scenario not in SCENARIOS:
        raise ValueError(f"unknown arm/scenario {arm}/{scenario}")
    cfg = world.config
    R = cfg.window
    rng = random.Random(f"recovery:arm:{seed}:{arm}:{scenario}:{trial}")
    point = rng.randint(cfg.rollback_depth * R + 1, (cfg.rollback_depth + 1) * R)
    with _trial_dir(world, f"{arm}-{scenario}-{trial}") as tdir:
        ctrl = world.controller(tdir, k=R)
        pdir = world.provision(tdir, chain_length=4 * (cfg.rollback_depth + 2) * R)
        state_path = pdir / STATE_FILE
        snapshot: dict[str, bytes] = {}

        def on_hook(name: str, count: int, seq: int) -> str:
            if name == "state_durable":
                snapshot["data"] = state_path.read_bytes()
                return "continue"
            return "kill"

        hooks = ("state_durable@1", f"report@{point}")
        with world.spawn(pdir, arm, f"{seed}:{arm}:{scenario}:{trial}", 1, hooks) as first:
            link1 = Link(first, ctrl, DEV_ID, on_hook)
            link1.ready()
            link1.run(point + R)
        true_state = ProverState.decode(state_path.read_bytes())
        if scenario == "rollback":
            _replace_file(state_path, snapshot["data"])
        found = ProverState.decode(state_path.read_bytes())
        with world.spawn(pdir, arm, f"{seed}:{arm}:{scenario}:{trial}", 2) as second:
            link2 = Link(second, ctrl, DEV_ID)
            link2.ready()
            link2.run(post_reports(cfg))
        ctrl.log.close()
    after = link2.log
    other = {k: v for k, v in after.outcomes.items() if k not in ("accepted", Code.SEQ_DUPLICATE.value)}
    return {"arm": arm, "scenario": scenario, "trial": trial, "window": R, "kill_point": point,
            "killed_by_sigkill": link1.log.exit_status == -9, "pid_before": first.pid, "pid_after": second.pid,
            "last_seen_before": link1.log.last_report_seq, "reserved_hi_true": true_state.reserved_hi,
            "reserved_hi_found": found.reserved_hi, "epoch_before": link1.log.epoch, "epoch_after": after.epoch,
            "new_epoch": after.new_epoch, "stale_detected": after.stale_detected, "mode": after.mode,
            "reason": after.reason, "resume_seq": after.resume_seq, "resume_rejected": after.resume_rejected,
            "reissued": after.outcomes.get(Code.SEQ_DUPLICATE.value, 0), "accepted_after": after.outcomes["accepted"],
            "other_rejections": ",".join(f"{k}={v}" for k, v in sorted(other.items())),
            "skipped": sum(s.hi - s.lo + 1 for s in ctrl.skips),
            "ready_ms": after.ready_ns / 1e6 if after.ready_ns is not None else None,
            "check_ms": after.check_ns / 1e6,
            "spawn_to_ready_ms": after.spawn_to_ready_ns / 1e6 if after.spawn_to_ready_ns is not None else None,
            "reservations_before": len(link1.log.reservations)}


# --- crash injection around the counter increment ------------------------------------------------------------------
def crash_trial(world: World, case: str, trial: int, seed: int) -> dict[str, Any]:
    """SIGKILL the TPM-arm prover at a named point of a seeded reservation (2nd or 3rd), restart, report on."""
    hook, expected = CRASH_CASES[case]
    cfg = world.config
    R = cfg.window
    rng = random.Random(f"recovery:crash:{seed}:{case}:{trial}")
    j = rng.randint(2, 3)
    nth = (j - 1) * R + rng.randint(1, R - 1) if hook == "report" else j
    with _trial_dir(world, f"crash-{case}-{trial}") as tdir:
        ctrl = world.controller(tdir, k=R)
        pdir = world.provision(tdir, chain_length=8 * R)
        with world.spawn(pdir, "tpm", f"{seed}:crash:{case}:{trial}", 1, (f"{hook}@{nth}",)) as first:
            link1 = Link(first, ctrl, DEV_ID, lambda name, count, seq: "kill")
            link1.ready()
            link1.run((j + 1) * R)
        with world.spawn(pdir, "tpm", f"{seed}:crash:{case}:{trial}", 2) as second:
            link2 = Link(second, ctrl, DEV_ID)
            link2.ready()
            link2.run(2 * R)
        ctrl.log.close()
    after = link2.log
    reissued = after.outcomes.get(Code.SEQ_DUPLICATE.value, 0)
    if reissued:
        outcome = "sequence_reuse"
    elif after.new_epoch and after.stale_detected:
        outcome = "failed_secure"
    elif after.mode == "resumed" and not after.resume_rejected:
        outcome = "resumed"
    else:
        outcome = "other"
    other = {k: v for k, v in after.outcomes.items() if k not in ("accepted", Code.SEQ_DUPLICATE.value)}
    return {"case": case, "hook": hook, "hook_count": nth, "trial": trial, "killed_at": link1.log.killed_at is not None,
            "killed_by_sigkill": link1.log.exit_status == -9, "last_seen_before": link1.log.last_report_seq,
            "mode": after.mode, "new_epoch": after.new_epoch, "stale_detected": after.stale_detected,
            "reason": after.reason, "resume_seq": after.resume_seq, "resume_rejected": after.resume_rejected,
            "reissued": reissued, "accepted_after": after.outcomes["accepted"],
            "other_rejections": ",".join(f"{k}={v}" for k, v in sorted(other.items())),
            "outcome": outcome, "expected": expected,
            "fails_secure_or_resumes": outcome in ("resumed", "failed_secure")}


# --- the cost of one reservation (in-process, no hooks) ------------------------------------------------------------
def reservation_costs(world: World, samples: int) -> pd.DataFrame:
    """Time ``samples`` complete reservations per arm (TPM: increment + read-back + state write + fsync + rename),
    and the TPM restart check (one NV read), against the same TPM the trials use."""
    secrets = EpochSecrets(1, bytes(range(32)), bytes(range(32, 64)), 64, 16, 1)
    rows: list[dict[str, Any]] = []
    with _trial_dir(world, "reservation-costs") as tdir:
        naive = Reserver(tdir / "naive.bin", world.config.window)
        for i in range(samples):
            r = naive.reserve(DEV_ID, secrets, i * world.config.window)
            rows.append({"arm": "naive", "sample": i, "increment_ms": 0.0, "read_ms": 0.0,
                         "write_ms": r.write_ns / 1e6, "total_ms": r.total_ns / 1e6})
        if world.tcti is not None:
            with NvCounter(world.tcti, world.config.nv_index) as counter:
                tpm = TpmReserver(tdir / "tpm.bin", world.config.window, counter)
                for i in range(samples):
                    r = tpm.reserve(DEV_ID, secrets, i * world.config.window)
                    rows.append({"arm": "tpm", "sample": i, "increment_ms": r.increment_ns / 1e6,
                                 "read_ms": r.read_ns / 1e6, "write_ms": r.write_ns / 1e6,
                                 "total_ms": r.total_ns / 1e6})
                for i in range(samples):
                    v = tpm.check(r.state)
                    rows.append({"arm": "tpm_check", "sample": i, "increment_ms": 0.0, "read_ms": v.check_ns / 1e6,
                                 "write_ms": 0.0, "total_ms": v.check_ns / 1e6})
    return pd.DataFrame(rows)


# --- a whole run -----------------------------------------------------------------------------------------------------
@dataclass
class RecoveryData:
    """Every trial of one run, as tables."""

    restart: pd.DataFrame
    arms: pd.DataFrame
    crashes: pd.DataFrame
    reservations: pd.DataFrame
    tcti: str | None


def plan(trials: int, restart_trials: int, crash_trials: int) -> list[tuple[str, tuple[Any, ...]]]:
    """The ordered list of trials of one run (interleaved by trial index, so a stopped run is balanced)."""
    jobs: list[tuple[str, tuple[Any, ...]]] = []
    for t in range(restart_trials):
        jobs.append(("restart", (t,)))
    for t in range(trials):
        for arm in ARMS:
            for scenario in SCENARIOS:
                jobs.append(("arm", (arm, scenario, t)))
    for t in range(crash_trials):
        for case in CRASH_CASES:
            jobs.append(("crash", (case, t)))
    return jobs


def run_trials(world: World, *, trials: int, restart_trials: int, crash_trials: int, reservation_samples: int,
               seed: int, progress: Progress | None = None) -> RecoveryData:
    """Run every experiment against ``world``'s TPM (the NV index is defined if missing and removed afterwards
    when this run defined it)."""
    defined = ensure_counter(world.tcti, world.config.nv_index) if world.tcti is not None else False
    restart_rows: list[dict[str, Any]] = []
    arm_rows: list[dict[str, Any]] = []
    crash_rows: list[dict[str, Any]] = []
    try:
        for kind, args in plan(trials, restart_trials, crash_trials):
            if kind == "restart":
                restart_rows.extend(restart_trial(world, *args, seed=seed))
            elif kind == "arm":
                arm_rows.append(arm_trial(world, *args, seed=seed))
            else:
                crash_rows.append(crash_trial(world, *args, seed=seed))
            if progress is not None:
                progress(1)
        reservations = reservation_costs(world, reservation_samples)
    finally:
        if defined:
            remove_counter(world.tcti, world.config.nv_index)
    return RecoveryData(pd.DataFrame(restart_rows), pd.DataFrame(arm_rows), pd.DataFrame(crash_rows), reservations,
                        world.tcti)
