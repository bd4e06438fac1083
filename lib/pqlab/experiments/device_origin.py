"""AMORT-V1 §V-F: cold-auditor cost per report by audit level and k, one vs two tags, the prover's extra work."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.amort import chain, kdf
from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.fastpath.api import checkpoint_context, open_controller
from pqlab.amort.identity import PublicKey, SigningKey
from pqlab.amort.messages import RECORD_OCTETS, Disclosure, EpochOpen, Report
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.experiments.amort_fleet import FIRST_TIME_MS, Fleet, batches, report_rounds, round_time
from pqlab.experiments.amort_lab import KeySet, Lab
from pqlab.params import StudyParams

# Fig. 5's series; "log_only" = checkpoint verification (signature, link, continuity, consistency) amortised over
# k + one inclusion proof per report.
COMPONENTS = {
    "log_checkpoint": "(a) checkpoint signature, link, continuity, consistency ÷ k",
    "log_inclusion": "(a) inclusion proof",
    "log_only": "(a) log only",
    "chain_independent": "(b) chain, independent traversal",
    "chain_in_order": "(b) chain, in-order traversal",
    "mac_recheck": "(b) MAC recheck",
    "origin_in_order": "(b) full verify_origin, in order",
    "origin_independent": "(b) full verify_origin, independent",
    "device_signature": "(c) device signature",
}


@dataclass
class Interval:
    """One checkpoint interval of device A (reports 1..k), with everything a cold auditor receives."""

    k: int
    deployment: Deployment
    device_public: PublicKey
    certificates: list[bytes]
    epoch_opens: list[bytes]
    previous: bytes          # the checkpoint before A's (device B's k reports)
    checkpoint: bytes        # A's checkpoint, committing A's reports 1..k
    consistency: bytes       # previous tree head -> A's checkpoint
    reports: list[bytes]
    disclosures: list[bytes]
    proofs: list[bytes]
    sub_checkpoint: bytes
    anchor: bytes
    delay_records: list[int]  # per report j: reports A sent after j before K_j could be disclosed

    def auditor(self, *, through: int) -> ColdAuditor:
        """A cold auditor that has accepted the certificates, the EPOCH_OPENs and the first ``through`` checkpoints
        of the two."""
        auditor = ColdAuditor(self.deployment)
        for data in self.certificates:
            auditor.ingest_certificate(data)
        for data in self.epoch_opens:
            auditor.ingest_epoch_open(data)
        if through >= 1:
            auditor.ingest_checkpoint(self.previous)
        if through >= 2:
            auditor.ingest_checkpoint(self.checkpoint, self.consistency)
        return auditor


def build_interval(k: int, settings: StudyParams, trial: int, workdir: Path) -> Interval:
    """Run the protocol: device B fills one checkpoint, then device A (fresh epoch) sends k reports; A receives
    its checkpoint, discloses K_1..K_k and signs a sub-checkpoint over its k reports."""
    cfg = settings.device_origin
    seed = int(np.random.default_rng([settings.seed, k, trial]).integers(1 << 62))
    keys = KeySet.generate(2, cfg.checkpoint_signer)
    lab = Lab(keys, seed, workdir, ControllerConfig(k=k, tag_len=cfg.tag_len), chain_length=k,
              profile=PAPER_PROFILE)  # Fig. 5 times the paper's design
    try:
        device_b, device_a = lab.device(2), lab.device(1)
        lab.open_epoch(device_b)
        lab.open_epoch(device_a)
        lab.stream([device_b], k)
        controller = lab.controller
        committed_after: list[int] = []
        for _ in range(k):
            before = len(controller.checkpoints)
            controller.ingest(lab.report(device_a))
            for data in controller.checkpoints[before:]:
                device_a.receive_checkpoint(data)
            committed_after.append(device_a.current.committed_hi)
        if len(controller.checkpoints) != 2:
            raise RuntimeError(f"expected 2 checkpoints, got {len(controller.checkpoints)}")
        reports = [device_a.current.reports[j] for j in range(1, k + 1)]
        first_disclosable = {}
        for s, committed in enumerate(committed_after, start=1):
            for j in range(len(first_disclosable) + 1, committed + 1):
                first_disclosable[j] = s
        opens = [controller.epoch_open(d.dev_id, 1) for d in (device_b, device_a)]
        return Interval(
            k=k, deployment=lab.deployment,
            device_public=PublicKey.of(keys.devices[0].sign, owner=keys.devices[0].dev_id),
            certificates=[lab.cert(1), lab.cert(2)],
            epoch_opens=opens, previous=controller.checkpoints[0], checkpoint=controller.checkpoints[1],
            consistency=controller.consistency(k, 2 * k), reports=reports,
            disclosures=[device_a.disclose(j) for j in range(1, k + 1)],
            proofs=[controller.inclusion(device_a.dev_id, 1, j)[1] for j in range(1, k + 1)],
            sub_checkpoint=device_a.sub_checkpoint(), anchor=EpochOpen.decode(opens[1]).k0,
            delay_records=[first_disclosable[j] - j for j in range(1, k + 1)])
    finally:
        lab.close()


def _timed(fn: Callable[[], object]) -> int:
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def audit_costs(interval: Interval, passes: int = 1) -> dict[str, float]:
    """Every audit level over the interval's k reports, ``passes`` times (fresh auditor state each pass): the
    median pass's µs per report per component."""
    runs = [_one_pass(interval) for _ in range(passes)]
    return {name: float(np.median([run[name] for run in runs])) for name in runs[0]}


def passes_for(k: int, pass_reports: int) -> int:
    """Passes per timed sample so that one sample covers at least ``pass_reports`` reports (small k repeat)."""
    return max(1, -(-pass_reports // k))


def _one_pass(interval: Interval) -> dict[str, float]:
    """One pass of every audit level over the interval's k reports: µs per report per component."""
    k = interval.k
    keys = [Disclosure.decode(d).key for d in interval.disclosures]
    numbered = list(enumerate(keys, start=1))
    records = [r[:RECORD_OCTETS] for r in interval.reports]
    dtags = [Report.decode(r).dtag for r in interval.reports]
    mac_inputs = list(zip(keys, records, dtags, strict=True))
    anchor = interval.anchor
    ns: dict[str, int] = {}

    auditor = interval.auditor(through=1)
    ns["log_checkpoint"] = _timed(lambda: auditor.ingest_checkpoint(interval.checkpoint, interval.consistency))
    inclusion = list(zip(interval.reports, interval.proofs, strict=True))
    ns["log_inclusion"] = _timed(lambda: [auditor.verify_inclusion(leaf, proof) for leaf, proof in inclusion])
    ns["chain_independent"] = _timed(lambda: [chain.verify_independent(anchor, j, key) for j, key in numbered])
    verifier = chain.InOrderVerifier(anchor)
    ns["chain_in_order"] = _timed(lambda: [verifier.verify(j, key) for j, key in numbered])
    results: list[bool] = []
    ns["mac_recheck"] = _timed(lambda: results.extend(kdf.mac_ok(key, rec, tag) for key, rec, tag in mac_inputs))
    if not all(results):
        raise RuntimeError("a disclosure tag did not recompute")
    triples = list(zip(interval.reports, interval.disclosures, interval.proofs, strict=True))
    for name, in_order in (("origin_in_order", True), ("origin_independent", False)):
        full = interval.auditor(through=2)
        ns[name] = _timed(lambda full=full, in_order=in_order: [
            full.verify_origin(r, d, p, in_order=in_order) for r, d, p in triples])
    ns["device_signature"] = _timed(lambda: auditor.verify_sub_checkpoint(
        interval.sub_checkpoint, interval.device_public, interval.reports))
    costs = {name: value / k / 1000.0 for name, value in ns.items()}
    costs["log_only"] = costs["log_checkpoint"] + costs["log_inclusion"]
    return costs


def measure_auditor(settings: StudyParams, scratch: Path, *,
                    progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 5: (one row per k, trial, rep and component; the disclosure delay of every report per k)."""
    cfg = settings.device_origin
    rows, delays = [], []
    steps = tqdm(total=cfg.trials * len(cfg.k_values), desc="cold auditor", disable=not progress)
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".device-origin-") as tmp:
        for trial in range(cfg.trials):
            for k in cfg.k_values:
                steps.set_postfix_str(f"k={k}, trial {trial + 1}")
                interval = build_interval(k, settings, trial, Path(tmp))
                if trial == 0:
                    delays.extend({"k": k, "j": j, "delay_records": d}
                                  for j, d in enumerate(interval.delay_records, start=1))
                for rep in range(cfg.reps):
                    for component, us in audit_costs(interval, passes_for(k, cfg.pass_reports)).items():
                        rows.append({"k": k, "trial": trial, "rep": rep, "component": component,
                                     "label": COMPONENTS[component], "us_per_report": us})
                steps.update()
    steps.close()
    return pd.DataFrame(rows), pd.DataFrame(delays)


def measure_controller_tags(settings: StudyParams, path: str, scratch: Path, *,
                            progress: bool = True) -> pd.DataFrame:
    """One-tag vs two-tag controller cost per report at ``controller_identities``, alternated within each trial
    (one-tag first in even trials, two-tag first in odd ones) on one controller; one warm-up round first."""
    cfg = settings.device_origin
    n = cfg.controller_identities
    rows = []
    clock = time.perf_counter_ns
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".tags-") as tmp:
        for trial in tqdm(range(cfg.controller_trials), desc="one vs two tags", disable=not progress):
            pair = [False, True] if trial % 2 == 0 else [True, False]
            flags = [False] + pair * cfg.controller_rounds
            fleet = Fleet(n, settings.seed, 2000 + trial, tag_len=cfg.tag_len)
            rounds = report_rounds(fleet, path, flags)
            key = SigningKey.generate(cfg.checkpoint_signer)
            ctl = open_controller(path, fleet.deployment(), sig_alg=cfg.checkpoint_signer)
            context = checkpoint_context(fleet.profile)
            fleet.register(ctl, not_before=FIRST_TIME_MS)
            with DurableLog(Path(tmp) / f"tags-{trial}.log") as log:
                for r, (tagged, reports) in enumerate(zip(flags, rounds, strict=True)):
                    chunks = list(batches(reports))
                    t0 = clock()
                    accepted = sum(ctl.ingest(chunk, now=round_time(r)).n_accepted for chunk in chunks)
                    body = ctl.checkpoint_body()
                    data = ctl.commit(key.signer.sign(key.secret, body, context))
                    log.append(data)
                    total = clock() - t0
                    if accepted != n:
                        raise RuntimeError(f"round {r}: {accepted} of {n} accepted")
                    if r == 0:
                        continue
                    rows.append({"trial": trial, "round": r, "tags": 2 if tagged else 1, "identities": n,
                                 "us_per_report": total / n / 1000.0, "report_octets": len(reports[0]),
                                 "checkpoint_octets": len(data)})
    return pd.DataFrame(rows)


def measure_prover(settings: StudyParams, path: str, *, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The prover's per-report work on the device path: one-tag and two-tag reports alternated call by call on
    two devices, and the chain's set-up (open_device with L keys minus with 1) spread over its L reports."""
    cfg = settings.device_origin
    length = cfg.prover_reports
    clock = time.perf_counter_ns
    samples, builds = [], []
    for trial in tqdm(range(cfg.prover_trials), desc="prover extra work", disable=not progress):
        fleet = Fleet(2, settings.seed, 3000 + trial, tag_len=cfg.tag_len)
        one, two = fleet.device(path, 0, length), fleet.device(path, 1, length)
        digests = [fleet.digest(0, s) for s in range(1, length + 1)]
        one_ns, two_ns = np.empty(length, np.int64), np.empty(length, np.int64)
        for s, digest in enumerate(digests):
            stamp = 1_000 * (s + 1)
            if s % 2 == 0:
                t0 = clock(); one.report(digest, stamp, disclosure_tag=False); t1 = clock()  # noqa: E702
                two.report(digest, stamp, disclosure_tag=True); t2 = clock()  # noqa: E702
                one_ns[s], two_ns[s] = t1 - t0, t2 - t1
            else:
                t0 = clock(); two.report(digest, stamp, disclosure_tag=True); t1 = clock()  # noqa: E702
                one.report(digest, stamp, disclosure_tag=False); t2 = clock()  # noqa: E702
                two_ns[s], one_ns[s] = t1 - t0, t2 - t1
        samples.append(pd.DataFrame({"trial": trial, "report": np.arange(1, length + 1),
                                     "one_tag_ns": one_ns, "two_tag_ns": two_ns}))
        for rep in range(5):
            full = _timed(lambda fleet=fleet: fleet.device(path, 0, length))
            bare = _timed(lambda fleet=fleet: fleet.device(path, 0, 1))
            builds.append({"trial": trial, "rep": rep, "chain_length": length, "open_full_ns": full,
                           "open_bare_ns": bare, "chain_us_per_report": max(full - bare, 0) / length / 1000.0})
    return pd.concat(samples, ignore_index=True), pd.DataFrame(builds)


def describe(interval: Interval) -> dict[str, Any]:
    """Sizes of what the auditor received for one interval (len() of each encoding)."""
    return {"k": interval.k, "checkpoint_octets": len(interval.checkpoint),
            "disclosure_octets": len(interval.disclosures[0]), "report_octets": len(interval.reports[0]),
            "sub_checkpoint_octets": len(interval.sub_checkpoint),
            "inclusion_proof_octets": float(np.mean([len(p) for p in interval.proofs]))}
