"""AMORT-V1 §V-H: revocation isolation by counts, re-keying cost (a real ML-KEM epoch), partition replay."""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.amort.controller import Controller, ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import Device
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError
from pqlab.amort.fastpath.api import NO_EXPIRY, BatchController, checkpoint_context, open_controller, sign_and_commit
from pqlab.amort.identity import KEM_ALGORITHM, CertificateAuthority, PublicKey, SigningKey, new_kem_keypair
from pqlab.amort.messages import Checkpoint
from pqlab.amort.profile import DEFAULT_MAX_REPORT_AGE_MS
from pqlab.crypto import get_kem
from pqlab.experiments import rekey_parts
from pqlab.experiments.amort_fleet import FIRST_TIME_MS, PERIOD_MS, Fleet, batches, report_rounds, round_time
from pqlab.params import StudyParams

CONTROLLER_ID = b"CTRL-001"
REKEY_CHAIN_LENGTH = 8  # the re-keyed device's new chain (only its first report is sent here)


def _ingest(ctl: BatchController, reports: list[bytes], now: int) -> Counter:
    """Verdict codes of ``reports`` (None = accepted) at the controller's time ``now``, in MAX_BATCH calls."""
    codes: Counter = Counter()
    for chunk in batches(reports):
        codes.update(v.code for v in ctl.ingest(chunk, now=now))
    return codes


def _commit(ctl: BatchController, key: SigningKey, log: DurableLog) -> Checkpoint:
    return Checkpoint.decode(sign_and_commit(ctl, key, log))


def isolation_trial(settings: StudyParams, n: int, path: str, scratch: Path, trial: int = 0, *,
                    progress: bool = False) -> tuple[dict, list]:
    """Revoke one of ``n`` identities and re-key up to ``rekey_limit`` others with a full ML-KEM-768 epoch; count
    who keeps attesting in the next round. Returns (the counts, one timing row per re-keyed identity)."""
    cfg = settings.scaling
    rng = np.random.default_rng([settings.seed, n, trial])
    fleet = Fleet(n, settings.seed, trial, tag_len=cfg.tag_len)
    key = SigningKey.generate(cfg.checkpoint_signer, cfg.backend)
    ctl = open_controller(path, fleet.deployment(), sig_alg=cfg.checkpoint_signer)
    fleet.register(ctl, not_before=FIRST_TIME_MS)
    rounds = report_rounds(fleet, path, [False, False])
    victim = int(rng.integers(n))
    others = [i for i in range(n) if i != victim]
    rekeyed = sorted(int(i) for i in rng.choice(others, size=min(len(others), cfg.rekey_limit or len(others)),
                                                replace=False))
    with DurableLog(scratch / f"isolation-{n}-{trial}.log") as log:
        before = _ingest(ctl, rounds[0], round_time(0))
        first = _commit(ctl, key, log)
        ctl.revoke(fleet.dev_id(victim))
        try:
            ctl.revoke(fleet.dev_id(victim))
            second_revoke = None
        except AmortError as exc:
            second_revoke = exc.reason
        timings, fresh = rekey(settings, fleet, ctl, rekeyed, trial, progress=progress)
        rekeyed_set = set(rekeyed)
        # the next round: every identity reports once; re-keyed ones in their new epoch, the others in epoch 1
        reports = [fresh[i] if i in rekeyed_set else rounds[1][i] for i in range(n)]
        verdicts = []
        for chunk in batches(reports):
            verdicts.extend(ctl.ingest(chunk, now=round_time(1)))
        # a re-keyed identity's report under its old epoch key is refused: the old epoch is closed
        stale = ctl.ingest([rounds[1][rekeyed[0]]], now=round_time(1))[0] if rekeyed else None
        second = _commit(ctl, key, log)
    accepted = [v.accepted for v in verdicts]
    counts = {
        "identities": n, "trial": trial, "revoked_dev": fleet.dev_id(victim).hex(),
        "accepted_before_revocation": before[None], "spans_before": len(first.spans),
        "revoked_next_report": verdicts[victim].code.value if verdicts[victim].code else "accepted",
        "revoke_again": second_revoke.value if second_revoke else "accepted",
        "others": n - 1, "others_attesting": sum(accepted[i] for i in others),
        "rekeyed": len(rekeyed), "rekeyed_attesting": sum(accepted[i] for i in rekeyed),
        "not_rekeyed_attesting": sum(accepted[i] for i in others if i not in rekeyed_set),
        "old_epoch_report_after_rekey": ("none re-keyed" if stale is None else
                                         stale.code.value if stale.code else "accepted"),
        "spans_after": len(second.spans), "epoch_closes_after": len(second.closes),
        "revoked_in_spans_after": any(s.dev_id == fleet.dev_id(victim) for s in second.spans),
        "rejections_after": {str(code): count for code, count in Counter(v.code for v in verdicts).items()
                             if code is not None},
    }
    return counts, timings


def rekey(settings: StudyParams, fleet: Fleet, batch: BatchController, members: list[int], trial: int, *,
          progress: bool = False) -> tuple[list[dict[str, Any]], dict[int, bytes]]:
    """Re-key ``members``: the reference controller opens epoch 2 with a real ML-KEM-768 exchange (encapsulation,
    EPOCH_CONFIRM check, key derivation, signed EPOCH_OPEN); the device decapsulates and accepts; the new K_evid
    goes to the batch controller. Only the controller's two steps are timed. The exchange happens between the
    fleet's first two rounds; the new epoch's first report carries the second round's time. Returns (timings,
    each member's first report in the new epoch). Each identity's parts (:mod:`pqlab.experiments.rekey_parts`) are
    timed after its exchange on the same messages and keys, and the batch controller's register_epoch is timed as the
    policy-state update."""
    cfg = settings.scaling
    clock = time.perf_counter_ns
    ca = CertificateAuthority(SigningKey.generate("ML-DSA-65", cfg.backend))
    controller_key = SigningKey.generate(cfg.checkpoint_signer, cfg.backend)
    deployment = Deployment(CONTROLLER_ID, PublicKey.of(controller_key), ca.public, fleet.profile)
    reference = Controller(deployment, controller_key, None,
                           ControllerConfig(tag_len=fleet.tag_len, policy_id=fleet.policy_id))
    now = round_time(1) - PERIOD_MS // 2
    kem_impl = get_kem(KEM_ALGORITHM)
    kem_backend = kem_impl.backend
    timings, fresh = [], {}
    for i in tqdm(members, desc=f"re-keying {fleet.n:,}", disable=not progress or len(members) < 500, leave=False):
        dev_id = fleet.dev_id(i)
        kem = new_kem_keypair()
        reference.register(ca.issue(dev_id, kem.public, profile=fleet.profile))
        reference.install_epoch(dev_id, fleet.epoch, fleet.k_evid(i), tag_len=fleet.tag_len,
                                policy_id=fleet.policy_id, expiry=NO_EXPIRY)
        entropy = random.Random(f"rekey:{settings.seed}:{fleet.n}:{trial}:{i}").randbytes
        device = Device(deployment, dev_id, kem, entropy, chain_length=REKEY_CHAIN_LENGTH)
        device.epoch_number = fleet.epoch  # its durable state: it runs epoch 1 (on the fast path)
        t0 = clock()
        request = reference.open_epoch(dev_id, now)
        t1 = clock()
        confirm = device.respond(request)
        t2 = clock()
        opened = reference.confirm(confirm, now)
        t3 = clock()
        device.accept_open(opened)
        k_evid, tag_len = reference.evidence_key(dev_id)
        epoch = device.epoch_number
        t4 = clock()
        batch.register_epoch(dev_id, epoch, k_evid, not_before=now, tag_len=tag_len, policy_id=fleet.policy_id,
                             expiry=NO_EXPIRY)
        t5 = clock()
        parts = rekey_parts.time_parts(kem_impl, kem, request, confirm, opened, controller_key, dev_id, epoch,
                                       fleet.profile)
        fresh[i] = device.report(fleet.digest(i, 1 << 32), round_time(1))
        timings.append({"identities": fleet.n, "trial": trial, "member": i, "epoch": epoch,
                        "open_epoch_us": (t1 - t0) / 1000.0, "confirm_us": (t3 - t2) / 1000.0,
                        "rekey_us": (t1 - t0 + t3 - t2) / 1000.0, "device_us": (t2 - t1) / 1000.0,
                        **parts, "policy_update_us": (t5 - t4) / 1000.0,
                        "kem_backend": kem_backend, "signature_backend": controller_key.signer.backend})
    return timings, fresh


def measure_isolation(settings: StudyParams, path: str, scratch: Path, *,
                      progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every isolation fleet: (one row of counts per fleet, one re-keying row per re-keyed identity)."""
    rows, timings = [], []
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".isolation-") as tmp:
        for n in tqdm(settings.scaling.isolation_fleets, desc="isolation and re-keying", disable=not progress):
            counts, rekeyed = isolation_trial(settings, n, path, Path(tmp), progress=progress)
            rows.append(counts)
            timings.extend(rekeyed)
    return pd.DataFrame(rows), pd.DataFrame(timings)


def replay_trial(settings: StudyParams, backlog: int, path: str, scratch: Path, trial: int) -> dict[str, Any]:
    """A device partitioned after one committed report buffers ``backlog`` reports; on reconnection the controller
    (beside ``replay_fleet`` other identities) re-merges them: ingest in order, tree append, one signed checkpoint."""
    cfg = settings.scaling
    clock = time.perf_counter_ns
    fleet = Fleet(cfg.replay_fleet + 1, settings.seed, 1000 + trial, tag_len=cfg.tag_len)
    key = SigningKey.generate(cfg.checkpoint_signer, cfg.backend)
    period = round(1000 / cfg.replay_rate_hz)
    reconnect = round_time(0, period_ms=period) + backlog * period  # the controller's clock when it re-merges
    # the controller of a deployment that tolerates partitions accepts evidence as old as its longest backlog
    deployment = fleet.deployment(max_report_age=max(backlog * period, DEFAULT_MAX_REPORT_AGE_MS))
    ctl = open_controller(path, deployment, sig_alg=cfg.checkpoint_signer)
    fleet.register(ctl, not_before=FIRST_TIME_MS)
    first = report_rounds(fleet, path, [cfg.disclosure_tag])[0]
    device = fleet.device(path, 0, chain_length=backlog + 1)
    own = [device.report(fleet.digest(0, s), round_time(s - 1, period_ms=period), disclosure_tag=cfg.disclosure_tag)
           for s in range(1, backlog + 2)]
    first[0] = own[0]
    buffered = list(batches(own[1:]))
    with DurableLog(scratch / f"replay-{backlog}-{trial}.log") as log:
        if _ingest(ctl, first, round_time(0))[None] != fleet.n:
            raise RuntimeError("the pre-partition round was not accepted")
        sign_and_commit(ctl, key, log)
        t0 = clock()
        accepted = sum(ctl.ingest(chunk, now=reconnect).n_accepted for chunk in buffered)
        t1 = clock()
        body = ctl.checkpoint_body()
        t2 = clock()
        data = ctl.commit(key.signer.sign(key.secret, body, checkpoint_context(fleet.profile)))
        log.append(data)
        t3 = clock()
    if accepted != backlog:
        raise RuntimeError(f"{accepted} of {backlog} buffered reports re-merged")
    span = Checkpoint.decode(data).spans
    return {"backlog": backlog, "trial": trial, "fleet": fleet.n, "accepted": accepted,
            "span_seq_lo": span[0].seq_lo, "span_seq_hi": span[0].seq_hi, "ingest_ns": t1 - t0,
            "merge_ns": t2 - t0, "checkpoint_ns": t3 - t2, "total_ns": t3 - t0,
            "merge_us_per_record": (t2 - t0) / backlog / 1000.0,
            "total_us_per_record": (t3 - t0) / backlog / 1000.0, "checkpoint_octets": len(data)}


def replay_backlogs(settings: StudyParams) -> list[int]:
    """The configured backlogs plus the one-window backlog (window × rate records), in increasing order."""
    cfg = settings.scaling
    window = max(1, round(cfg.replay_window_s * cfg.replay_rate_hz))
    return sorted(set(cfg.replay_backlogs) | {window})


def measure_replay(settings: StudyParams, path: str, scratch: Path, *, progress: bool = True) -> pd.DataFrame:
    """Every backlog, ``replay_trials`` times (backlogs interleaved within a trial)."""
    cfg = settings.scaling
    backlogs = replay_backlogs(settings)
    rows = []
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".replay-") as tmp:
        steps = tqdm(total=cfg.replay_trials * len(backlogs), desc="partition replay", disable=not progress)
        for trial in range(cfg.replay_trials):
            for backlog in backlogs:
                rows.append(replay_trial(settings, backlog, path, Path(tmp), trial))
                steps.update()
        steps.close()
    frame = pd.DataFrame(rows)
    frame["one_window"] = frame["backlog"] == max(1, round(cfg.replay_window_s * cfg.replay_rate_hz))
    return frame


def isolation_table(counts: pd.DataFrame, timings: pd.DataFrame) -> pd.DataFrame:
    """isolation.csv: per fleet, who keeps attesting after one revocation and the re-keying cost per identity."""
    rows = []
    for row in counts.itertuples():
        own = timings[timings["identities"] == row.identities]
        per_identity = own["rekey_us"]
        rows.append({
            "identities": row.identities, "revoked_next_report": row.revoked_next_report,
            "others": row.others, "others_attesting": row.others_attesting,
            "rekeyed": row.rekeyed, "rekeyed_attesting": row.rekeyed_attesting,
            "not_rekeyed_attesting": row.not_rekeyed_attesting,
            "old_epoch_report_after_rekey": row.old_epoch_report_after_rekey,
            "spans_after": row.spans_after, "epoch_closes_after": row.epoch_closes_after,
            "rekey_us_per_identity": float(per_identity.median()) if len(own) else float("nan"),
            "rekey_us_p95": float(per_identity.quantile(0.95)) if len(own) else float("nan"),
            "open_epoch_us": float(own["open_epoch_us"].median()) if len(own) else float("nan"),
            "confirm_us": float(own["confirm_us"].median()) if len(own) else float("nan"),
            "rekey_ms_measured": float(per_identity.sum()) / 1000.0,
            # every identity re-keyed once: the measured mean times the fleet (measured outright when all were)
            "rekey_ms_fleet": float(per_identity.mean()) * row.identities / 1000.0 if len(own) else float("nan"),
            "rekey_fleet_extrapolated": bool(row.rekeyed < row.others),
        })
    return pd.DataFrame(rows)


def replay_table(replay: pd.DataFrame) -> pd.DataFrame:
    """partition_replay.csv: per backlog, the median re-merge cost per record and the whole replay's time."""
    out = replay.groupby("backlog").agg(
        trials=("trial", "nunique"), merge_us_per_record=("merge_us_per_record", "median"),
        total_us_per_record=("total_us_per_record", "median"), merge_ms=("merge_ns", "median"),
        total_ms=("total_ns", "median"), one_window=("one_window", "first")).reset_index()
    out["merge_ms"] /= 1e6
    out["total_ms"] /= 1e6
    return out
