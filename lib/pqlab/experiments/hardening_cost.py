"""What the hardened variant costs beside the paper's, both measured in one run with the same harnesses.

Per report: the controller's batch path (``pqlab.amort.fastpath``, the run's controller path: ingest, and ingest plus
one signed checkpoint per round of one report per identity, Table III's shape), the device's report path (same
path), the report's and the checkpoint's octets, and the cold auditor's in-order origin check (the reference
:class:`~pqlab.amort.auditor.ColdAuditor`, as the device_origin stage times it), hardened with the receipt
comparison and its share of the device's receipt signature (one signed receipt list per device per audit interval
of k reports). Per epoch: the device's and the controller's epoch exchange (ML-KEM, the chain, hardened: the signed
EPOCH_REQ and the anchor signature, and their verifications), the auditor's EPOCH_OPEN check and the exchange's
octets. Per audit interval: the device's receipt signature. Per checkpoint: what a hardened device keeps. The two
variants alternate within each trial (the first one swaps every trial), so a shared machine's drift reaches both; an
unrecorded warm-up trial of both comes first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import ControllerConfig
from pqlab.amort.fastpath.api import checkpoint_context, open_controller
from pqlab.amort.identity import SigningKey
from pqlab.amort.messages import ReceiptEntry
from pqlab.amort.profile import HARDENED, PAPER, VARIANTS, Profile
from pqlab.experiments.amort_fleet import FIRST_TIME_MS, Fleet, batches, round_time
from pqlab.experiments.amort_lab import KeySet, Lab

METRICS = {  # name: (unit, what)
    "controller_ingest_us_per_report": ("µs", "controller: check one report (batch path)"),
    "controller_us_per_report": ("µs", "controller: check one report + its share of one signed checkpoint"),
    "device_us_per_report": ("µs", "device: build one two-tag report (batch path)"),
    "auditor_us_per_report": ("µs", "auditor: in-order origin check of one report (+ receipt comparison ÷ k)"),
    "device_receipts_us": ("µs", "device: sign its receipt list once per audit interval (hardened only)"),
    "device_receipts_us_per_report": ("µs", "device: its receipt signature ÷ the k reports of the interval"),
    "receipts_octets": ("octets", "the signed receipt list of one interval (hardened only)"),
    "report_octets": ("octets", "one report with both tags"),
    "checkpoint_octets": ("octets", "one checkpoint of one report per identity"),
    "device_epoch_us": ("µs", "device: answer EPOCH_REQ and accept EPOCH_OPEN"),
    "controller_epoch_us": ("µs", "controller: EPOCH_REQ and EPOCH_CONFIRM → EPOCH_OPEN"),
    "auditor_epoch_us": ("µs", "auditor: check one EPOCH_OPEN"),
    "epoch_exchange_octets": ("octets", "EPOCH_REQ + EPOCH_CONFIRM + EPOCH_OPEN"),
    "device_state_octets_per_checkpoint": ("octets", "receipt state a device keeps per checkpoint"),
}


@dataclass(frozen=True)
class CostSetup:
    """How much to measure: ``identities`` per checkpoint and ``rounds`` of reports per trial (controller, device),
    ``k`` reports per auditor interval, ``epochs`` epoch exchanges per trial."""

    identities: int
    rounds: int
    k: int
    epochs: int
    trials: int
    seed: int
    path: str
    wire_format: str
    checkpoint_signer: str = "ML-DSA-65"


def _ns(fn: Callable[[], object]) -> int:
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


CHUNK = 128
"""Reports per timed chunk: a sample is the median chunk's time per report, so a scheduler preemption on a shared
machine (a lost 10 ms slice) moves one chunk, not the sample."""


def _median(values: list[float]) -> float:
    return float(np.median(values))


def _fleet_costs(setup: CostSetup, variant: str, trial: int, key: SigningKey) -> dict[str, float]:
    """Device and controller per report, report and checkpoint octets, on the fast path."""
    fleet = Fleet(setup.identities, setup.seed, trial, profile=Profile(variant, setup.wire_format))
    rounds: list[list[bytes]] = [[] for _ in range(setup.rounds)]
    devices = [fleet.device(setup.path, i, chain_length=setup.rounds) for i in range(fleet.n)]
    device_chunks = []
    for r in range(setup.rounds):
        for lo in range(0, fleet.n, CHUNK):
            members = range(lo, min(lo + CHUNK, fleet.n))
            start = time.perf_counter_ns()
            rounds[r].extend(devices[i].report(fleet.digest(i, r + 1), round_time(r)) for i in members)
            device_chunks.append((time.perf_counter_ns() - start) / len(members))
    ctl = open_controller(setup.path, fleet.deployment(), sig_alg=setup.checkpoint_signer)
    context = checkpoint_context(fleet.profile)
    fleet.register(ctl, not_before=FIRST_TIME_MS)
    ingest_chunks, checkpoint_ns = [], []
    checkpoint = b""
    for r, reports in enumerate(rounds):
        accepted = 0
        for chunk in batches(reports, CHUNK):
            start = time.perf_counter_ns()
            accepted += ctl.ingest(chunk, now=round_time(r)).n_accepted
            ingest_chunks.append((time.perf_counter_ns() - start) / len(chunk))
        start = time.perf_counter_ns()
        body = ctl.checkpoint_body()
        checkpoint = ctl.commit(key.signer.sign(key.secret, body, context))
        checkpoint_ns.append(time.perf_counter_ns() - start)
        if accepted != fleet.n:
            raise RuntimeError(f"{variant}: {accepted} of {fleet.n} reports accepted")
    ingest = _median(ingest_chunks)
    return {"device_us_per_report": _median(device_chunks) / 1e3, "controller_ingest_us_per_report": ingest / 1e3,
            "controller_us_per_report": (ingest + _median(checkpoint_ns) / fleet.n) / 1e3,
            "report_octets": float(len(rounds[0][0])), "checkpoint_octets": float(len(checkpoint))}


def _protocol_costs(setup: CostSetup, variant: str, trial: int, keys: KeySet, workdir: Path) -> dict[str, float]:
    """The epoch exchange (device, controller, octets), the auditor per epoch and per report, on the reference model
    with real ML-KEM-768 / ML-DSA-65 keys; each the median over its repetitions."""
    profile = Profile(variant, setup.wire_format)
    lab = Lab(keys, setup.seed * 1_000 + trial, workdir, ControllerConfig(k=setup.k, max_restarts=setup.epochs + 2),
              chain_length=setup.k, profile=profile)
    try:
        a, b = lab.device(1), lab.device(2)
        device_ns, controller_ns, auditor_epoch_ns = [], [], []
        octets = 0
        opened = b""
        for _ in range(setup.epochs):
            lab.now += 1_000
            a.restart()
            start = time.perf_counter_ns()
            req = lab.controller.open_epoch(a.dev_id, lab.now)
            mid = time.perf_counter_ns()
            confirm = a.respond(req)
            end = time.perf_counter_ns()
            opened = lab.controller.confirm(confirm, lab.now)
            controller_ns.append(mid - start + time.perf_counter_ns() - end)
            start = time.perf_counter_ns()
            a.accept_open(opened)
            device_ns.append(end - mid + time.perf_counter_ns() - start)
            octets = len(req) + len(confirm) + len(opened)
            auditor = ColdAuditor(lab.deployment)
            auditor.ingest_certificate(lab.cert(1))  # once per device lifetime, not counted
            auditor_epoch_ns.append(_ns(lambda opened=opened, auditor=auditor: auditor.ingest_epoch_open(opened)))
        lab.open_epoch(b)
        lab.stream([b, a], setup.k // 2)  # k reports in all: one checkpoint
        for data in lab.controller.checkpoints:
            a.receive_checkpoint(data)
        epoch = a.epoch_number
        triples = [(*lab.controller.inclusion(a.dev_id, epoch, j), a.disclose(j)) for j in range(1, setup.k // 2 + 1)]
        auditor = lab.cold_auditor()
        for data in lab.controller.checkpoints:  # certificates, opens and the checkpoint; not yet the receipts
            lab.feed(auditor, data)
        signed_receipts, sign_ns, receipts_ns = b"", 0, 0
        if variant == HARDENED:
            start = time.perf_counter_ns()
            signed_receipts = a.receipts()
            sign_ns = time.perf_counter_ns() - start
            receipts_ns = _ns(lambda: auditor.compare_receipts(signed_receipts))
        per_report = [_ns(lambda t=t: auditor.verify_origin(t[0], t[2], t[1])) for t in triples]
        receipts = len(a.current.receipts) if variant == HARDENED else 0
        return {"device_epoch_us": _median(device_ns) / 1e3, "controller_epoch_us": _median(controller_ns) / 1e3,
                "auditor_epoch_us": _median(auditor_epoch_ns) / 1e3,
                "auditor_us_per_report": (_median(per_report) + receipts_ns / len(triples)) / 1e3,
                "device_receipts_us": sign_ns / 1e3, "device_receipts_us_per_report": sign_ns / setup.k / 1e3,
                "receipts_octets": float(len(signed_receipts)),
                "epoch_exchange_octets": float(octets),
                "device_state_octets_per_checkpoint": float(ReceiptEntry.item_size() if receipts else 0)}
    finally:
        lab.close()


def _orders(trials: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    for trial in range(trials):
        yield trial, VARIANTS if trial % 2 == 0 else VARIANTS[::-1]


def measure(setup: CostSetup, workdir: Path, *, progress: bool = True) -> pd.DataFrame:
    """One row per (trial, variant, metric): the value in the metric's unit."""
    rows = []
    keys = KeySet.generate(2, setup.checkpoint_signer)
    key = SigningKey.generate(setup.checkpoint_signer)
    for variant in VARIANTS:  # a warm-up trial, not recorded: first calls load code and fill caches
        _fleet_costs(setup, variant, setup.trials, key)
        _protocol_costs(setup, variant, setup.trials, keys, workdir)
    steps = tqdm(total=setup.trials * 2, desc="hardening cost", disable=not progress)
    for trial, order in _orders(setup.trials):
        for variant in order:
            steps.set_postfix_str(f"trial {trial + 1}, {variant}")
            values = _fleet_costs(setup, variant, trial, key) | _protocol_costs(setup, variant, trial, keys, workdir)
            rows.extend({"trial": trial, "variant": variant, "first": variant == order[0], "metric": name,
                         "value": value, "unit": METRICS[name][0]} for name, value in values.items())
            steps.update()
    steps.close()
    return pd.DataFrame(rows)


def summarise(samples: pd.DataFrame) -> pd.DataFrame:
    """Per metric: the paper and hardened medians over trials, and the hardened/paper ratio — the median of the
    per-trial ratios (the two variants of a trial ran back to back) with its range."""
    rows = []
    for name, (unit, what) in METRICS.items():
        group = samples[samples["metric"] == name].pivot(index="trial", columns="variant", values="value")
        paper, hardened = group[PAPER].to_numpy(), group[HARDENED].to_numpy()
        ratios = np.divide(hardened, paper, out=np.full_like(hardened, np.nan), where=paper != 0)
        finite = ratios[np.isfinite(ratios)]
        rows.append({"metric": name, "what": what, "unit": unit, "paper": float(np.median(paper)),
                     "hardened": float(np.median(hardened)),
                     "ratio": float(np.median(finite)) if len(finite) else None,
                     "ratio_min": float(finite.min()) if len(finite) else None,
                     "ratio_max": float(finite.max()) if len(finite) else None, "trials": len(group)})
    return pd.DataFrame(rows)


def metrics(summary: pd.DataFrame, setup: CostSetup) -> dict:
    """The summary as metrics (``<metric>: {paper, hardened, ratio, ratio_min, ratio_max, unit}``) and the setup."""
    out = {r.metric: {"paper": round(r.paper, 4), "hardened": round(r.hardened, 4), "unit": r.unit,
                      "ratio": None if r.ratio is None or np.isnan(r.ratio) else round(r.ratio, 4),
                      "ratio_min": None if r.ratio_min is None or np.isnan(r.ratio_min) else round(r.ratio_min, 4),
                      "ratio_max": None if r.ratio_max is None or np.isnan(r.ratio_max) else round(r.ratio_max, 4)}
           for r in summary.itertuples()}
    return {**out, "setup": {"trials": setup.trials, "identities": setup.identities, "rounds": setup.rounds,
                             "k": setup.k, "epochs": setup.epochs, "controller_path": setup.path,
                             "wire_format": setup.wire_format, "checkpoint_signer": setup.checkpoint_signer}}
