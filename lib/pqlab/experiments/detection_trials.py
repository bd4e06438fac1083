"""AMORT-V1 §V-D detection trials: a malicious controller omits a record or equivocates; the cold auditor catches it.

Both run the reference model end to end — devices with real ML-KEM epochs and two-tag reports, a controller
that verifies every report, signs each checkpoint (pqlab.crypto) and fsyncs it to its log, and cold auditors
that hold no secret. The counts come from running the protocol; nothing here computes them from k.

Omission (one per trial, at a uniformly random position ``p`` of a batch of ``k`` records; delays are counted
in records from the omitted one, inclusive, to the last record before the checkpoint that exposes it):

- ``declared``: the controller drops the leaf but still declares the sequence ranges it accepted (the paper's
  setting, Table VI A14): the auditor's range-width check — span widths against tree growth — fires at the
  very next checkpoint.
- ``trimmed``: the controller also shrinks the declared ranges to what it kept. A gap at the start of a
  device's range trips sequence continuity now, one in the middle the range width; dropping a device's *last*
  record of the batch is indistinguishable from that record arriving after the checkpoint, so it surfaces only
  when a later checkpoint commits that device's next record.

Equivocation: after a random number of honest checkpoints, the controller signs two different checkpoints
for the same position — one view truncated by the last few reports, or with two reports of different devices
swapped — each valid on its own; two auditors, one per view, compare what they hold (CKPT_FORK).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from pqlab.amort import merkle
from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import ControllerConfig, Pending, spans_of
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import Checkpoint, ConsistencyProof
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.experiments.amort_lab import KeySet, Lab
from pqlab.seeds import derive_seed

STRATEGIES = ("declared", "trimmed")
VARIANTS = ("truncate", "reorder")
_NEVER = 1 << 40  # the controller never checkpoints by itself: the trial decides when

WIDTH, CONTINUITY = "range width vs leaf count", "sequence continuity"


def which_check(error: AmortError) -> str:
    """Name the auditor check behind a rejection (the field it reports says which one fired)."""
    field = error.field or ""
    if error.reason is Code.SEQ_GAP and field == "Checkpoint.tree_size":
        return WIDTH
    if error.reason in (Code.SEQ_GAP, Code.SEQ_DUPLICATE) and field.startswith("Checkpoint.spans"):
        return CONTINUITY
    return f"{error.code} at {field}"


@dataclass
class _World:
    lab: Lab
    devices: list


def _world(keys: KeySet, seed: int, workdir: Path, n_devices: int, per_device: int) -> _World:
    lab = Lab(keys, seed, workdir, config=ControllerConfig(k=_NEVER), chain_length=max(per_device, 1) + 1,
              profile=PAPER_PROFILE)  # the omission and equivocation trials test the paper's design
    devices = [lab.device(n) for n in range(1, n_devices + 1)]
    for device in devices:
        lab.open_epoch(device)
    return _World(lab, devices)


def _close(world: _World) -> None:
    world.lab.close()
    world.lab.log.path.unlink(missing_ok=True)


def _stream(world: _World, count: int, start: int) -> list[Pending]:
    """``count`` round-robin reports (device index continues from ``start``), verified by the controller."""
    lab = world.lab
    for i in range(start, start + count):
        lab.controller.ingest(lab.report(world.devices[i % len(world.devices)]))
    batch, lab.controller.batch = lab.controller.batch, []
    return batch


def _offer(world: _World, auditor: ColdAuditor, data: bytes) -> AmortError | None:
    try:
        world.lab.feed(auditor, data)
    except AmortError as exc:
        return exc
    return None


def omission_trial(keys: KeySet, k: int, seed: int, workdir: Path, *, strategy: str = "declared",
                   n_devices: int = 4, max_batches: int | None = None, position: int | None = None) -> dict[str, Any]:
    """One batch of ``k`` records with one omitted at a random position (or the 1-based ``position``); feed
    checkpoints to a cold auditor until it rejects one (at most ``max_batches``, default devices + 2).
    Returns the position, the delay in records, and the code and check that fired."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if k < 1 or n_devices < 1:
        raise ValueError("k and n_devices must be >= 1")
    rng = random.Random(seed)
    max_batches = max_batches if max_batches is not None else n_devices + 2
    world = _world(keys, seed, workdir, n_devices, per_device=-(-k * max_batches // n_devices))
    try:
        auditor = world.lab.cold_auditor()
        batch = _stream(world, k, 0)
        if position is not None and not 1 <= position <= k:
            raise ValueError(f"position must be in 1..{k}, got {position}")
        position = rng.randrange(k) if position is None else position - 1
        omitted = batch[position]
        kept = [p for p in batch if p is not omitted]
        spans = spans_of(batch) if strategy == "declared" else None
        error = _offer(world, auditor, world.lab.controller.commit(kept, spans=spans))
        batches = 1
        while error is None and batches < max_batches:  # the omission survived: honest batches follow
            error = _offer(world, auditor, world.lab.controller.commit(_stream(world, k, batches * k)))
            batches += 1
    finally:
        _close(world)
    exposed = error is not None
    return {
        "strategy": strategy, "k": k, "devices": n_devices, "position": position + 1,
        "omitted_device": omitted.dev_id.decode(), "omitted_seq": omitted.seq,
        "last_of_device_in_batch": all(p.dev_id != omitted.dev_id for p in batch[position + 1:]),
        "exposed": exposed, "checkpoints_until_exposed": batches if exposed else None,
        "delay_records": (k - position) + (batches - 1) * k if exposed else None,
        "code": error.code if exposed else None, "field": error.field if exposed else None,
        "check": which_check(error) if exposed else None,
    }


def _alternative(batch: list[Pending], variant: str, rng: random.Random, n_devices: int) -> list[Pending]:
    """A second history for the same position, valid on its own (ranges and subtree roots stay consistent)."""
    if variant == "truncate":
        cut = rng.randint(1, max(1, min(n_devices, len(batch) - 1)))
        return batch[:-cut]  # the last ``cut`` reports are each the last of their device: ranges just end earlier
    swappable = [i for i in range(len(batch) - 1) if batch[i].dev_id != batch[i + 1].dev_id]
    i = rng.choice(swappable)
    return [*batch[:i], batch[i + 1], batch[i], *batch[i + 2:]]  # per-device order, ranges, subtrees unchanged


def equivocation_trial(keys: KeySet, k: int, seed: int, workdir: Path, *, n_devices: int = 4,
                       max_prefix: int = 3) -> dict[str, Any]:
    """The controller signs two conflicting checkpoints at one position (after 0..``max_prefix`` honest ones);
    each view goes to its own cold auditor; comparing the two views must expose the fork (CKPT_FORK)."""
    if k < 2 or n_devices < 2:
        raise ValueError("equivocation needs k >= 2 and at least two devices")
    rng = random.Random(seed)
    prefix = rng.randint(0, max_prefix)
    world = _world(keys, seed, workdir, n_devices, per_device=-(-k * (prefix + 1) // n_devices))
    lab = world.lab
    try:
        first, second = lab.cold_auditor(), lab.cold_auditor()
        for i in range(prefix):
            honest = lab.controller.commit(_stream(world, k, i * k))
            lab.feed(first, honest)
            lab.feed(second, honest)
        old_size = len(lab.controller.tree)
        batch = _stream(world, k, prefix * k)
        variant = rng.choice(VARIANTS)
        alt = _alternative(batch, variant, rng, n_devices)
        view_a = lab.controller.commit(batch)
        leaves = lab.controller.leaves[:old_size] + [p.leaf for p in alt]
        body = Checkpoint.decode(view_a).replace(tree_size=len(leaves), root=merkle.root(leaves), spans=spans_of(alt))
        view_b = lab.controller.sign(body)  # one more real signature over the conflicting body
        proof_b = ConsistencyProof(old_size, len(leaves), tuple(merkle.consistency_proof(leaves, old_size))).encode() \
            if old_size else None
        alone = [_offer(world, first, view_a) is None, _accept(second, view_b, proof_b)]
        outcome = _expose(lambda: first.compare(second))
        gossip = _expose(lambda: first.ingest_checkpoint(view_b, proof_b))
    finally:
        _close(world)
    return {
        "k": k, "devices": n_devices, "position": prefix, "variant": variant, "views_differ": view_a != view_b,
        "view_a_valid_alone": alone[0], "view_b_valid_alone": alone[1],
        "exposed": outcome == Code.CKPT_FORK.value, "code": outcome,
        "exposed_by_gossip": gossip == Code.CKPT_FORK.value,
    }


def _accept(auditor: ColdAuditor, data: bytes, proof: bytes | None) -> bool:
    try:
        auditor.ingest_checkpoint(data, proof)
    except AmortError:
        return False
    return True


def _expose(check: Callable[[], object]) -> str | None:
    try:
        check()
    except AmortError as exc:
        return exc.code
    return None


def omission_trials(keys: KeySet, ks: list[int], trials: int, seed: int, workdir: Path, *,
                    strategies: tuple[str, ...] = STRATEGIES, n_devices: int = 4,
                    progress: bool = True) -> list[dict[str, Any]]:
    """``trials`` omission trials per interval and strategy, each with its own derived seed."""
    os.makedirs(workdir, exist_ok=True)
    plan = [(strategy, k) for strategy in strategies for k in ks]
    rows = []
    with tqdm(total=len(plan) * trials, desc="omission trials", disable=not progress) as bar:
        for strategy, k in plan:
            bar.set_postfix_str(f"{strategy}, k = {k}")
            for t in range(trials):
                row = omission_trial(keys, k, derive_seed(seed, "omission", strategy, k, t), workdir,
                                     strategy=strategy, n_devices=n_devices)
                rows.append({"trial": t, **row})
                bar.update()
    return rows


def equivocation_trials(keys: KeySet, k: int, trials: int, seed: int, workdir: Path, *, n_devices: int = 4,
                        progress: bool = True) -> list[dict[str, Any]]:
    """``trials`` equivocation trials at interval ``k``, each with its own derived seed."""
    os.makedirs(workdir, exist_ok=True)
    rows = []
    for t in tqdm(range(trials), desc="equivocation trials", disable=not progress):
        row = equivocation_trial(keys, k, derive_seed(seed, "equivocation", k, t), workdir, n_devices=n_devices)
        rows.append({"trial": t, **row})
    return rows
