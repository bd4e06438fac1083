"""Differential fuzzing of the fast path: seeded random and mutated report batches through both paths, compared.

``make sanitize`` runs it against an AddressSanitizer + UBSan build of the native extension (``pqlab
amort-fuzz --batches 100000``); the test suite runs a short run. The batches are shared among the four profiles
(paper and hardened variant, implied and explicit wire format), each a fresh pair of controllers. Each batch mixes
honest reports
(built by a native and a reference device in lock step, which must agree), mutated copies
(:mod:`pqlab.amort.conformance.mutations`), replays, random octets and non-octet items, as a list or one framed
buffer, sometimes over the batch limit. Between batches the controllers checkpoint, change epochs, revoke
and enrol devices. Every verdict, every body and signed checkpoint, and the full state every
``state_every`` batches must be equal; the first differences are returned.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from pqlab.amort.conformance.builder import Material
from pqlab.amort.conformance.mutations import mutate
from pqlab.amort.deployment import Deployment
from pqlab.amort.fastpath.api import MAX_BATCH, ReportDevice, frame, open_controller, open_device
from pqlab.amort.profile import VARIANTS, WIRE_FORMATS, Profile
from pqlab.errors import PqlabError

CONTROLLER_ID = b"CTRL-FZ1"


@dataclass
class FuzzResult:
    """What a run did and every disagreement it found (empty: the paths agreed throughout)."""

    batches: int = 0
    reports: int = 0
    accepted: int = 0
    checkpoints: int = 0
    seconds: float = 0.0
    codes: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except PqlabError as exc:
        return ("error", type(exc).__name__, exc.code, exc.field)


class _Pair:
    """The same device on both paths; every report is built twice and must be identical."""

    def __init__(self, material: Material, n: int, epoch: int, rng: random.Random, profile: Profile) -> None:
        dev_id = f"FZ-{n:05d}".encode()
        self.k_evid = material.octets(f"k/{n}/{epoch}")
        args = (dev_id, epoch, self.k_evid, material.octets(f"c/{n}/{epoch}"))
        kw = {"tag_len": rng.choice((8, 12, 16)), "policy_id": rng.randrange(1 << 16), "chain_length": 512}
        deployment = Deployment(CONTROLLER_ID, profile=profile)
        self.ref: ReportDevice = open_device("reference", deployment, *args, **kw)
        self.nat: ReportDevice = open_device("native", deployment, *args, **kw)

    def report(self, rng: random.Random, clock: int) -> tuple[bytes, bytes]:
        digest, dtag, flags = rng.randbytes(32), rng.random() < 0.7, rng.randrange(256)
        if self.ref.seq >= self.ref.chain_length:
            dtag = False
        return (self.ref.report(digest, clock, flags=flags, disclosure_tag=dtag),
                self.nat.report(digest, clock, flags=flags, disclosure_tag=dtag))


def _junk(rng: random.Random, seen: list[bytes]) -> Any:
    """Something that must be refused: a replay, random octets, or an item that is not an octet string."""
    roll = rng.random()
    if roll < 0.5 and seen:
        return rng.choice(seen)
    if roll < 0.95:
        return rng.randbytes(rng.randrange(140))
    return rng.choice((None, 7, "report"))


PROFILES = tuple(Profile(variant, wire) for variant in VARIANTS for wire in WIRE_FORMATS)


def run(batches: int, seed: int = 1, *, state_every: int = 64, max_mismatches: int = 20) -> FuzzResult:
    """Fuzz ``batches`` batches, shared among :data:`PROFILES`; deterministic for a seed."""
    result, start = FuzzResult(), time.perf_counter()
    for i, profile in enumerate(PROFILES):
        share = batches // len(PROFILES) + (i < batches % len(PROFILES))
        _world(share, seed, profile, result, state_every, max_mismatches)
    result.seconds = time.perf_counter() - start
    return result


def _world(batches: int, seed: int, profile: Profile, result: FuzzResult, state_every: int,
           max_mismatches: int) -> None:
    """One profile's controllers and devices through ``batches`` batches, adding to ``result``."""
    rng = random.Random(f"fuzz:{seed}:{profile.variant}:{profile.wire_format}")
    material = Material(seed, f"fuzz/{profile.variant}/{profile.wire_format}")
    deployment = Deployment(CONTROLLER_ID, profile=profile)
    ref, nat = open_controller("reference", deployment), open_controller("native", deployment)
    pairs: dict[int, _Pair] = {}
    seen: list[bytes] = []
    clock, next_n = 1_000, 0

    def both(name: str, fn: Any) -> Any:
        a, b = _outcome(lambda: fn(ref)), _outcome(lambda: fn(nat))
        if a != b and len(result.mismatches) < max_mismatches:
            result.mismatches.append(f"{profile.variant}/{profile.wire_format} batch {result.batches}: {name}: "
                                     f"reference {str(a)[:200]} native {str(b)[:200]}")
        return a

    def register(n: int) -> None:
        old = pairs.get(n)
        pair = _Pair(material, n, (old.ref.epoch + rng.randint(1, 2)) if old else 1, rng, profile)
        pairs[n] = pair
        expiry = rng.choice(((1 << 64) - 1, clock + rng.randrange(1, 2_000_000)))
        # an open time just behind the clock, sometimes ahead of it (the first reports are then EPOCH_STALE)
        not_before = rng.choice((0, max(0, clock - rng.randrange(0, 50)))) if rng.random() > 0.02 else clock + 20
        both("register_epoch", lambda c: c.register_epoch(pair.ref.dev_id, pair.ref.epoch, pair.k_evid,
                                                          tag_len=pair.ref.tag_len, expiry=expiry,
                                                          policy_id=pair.ref.policy_id, not_before=not_before))

    def honest_batch(size: int) -> list[Any]:
        nonlocal clock
        items: list[Any] = []
        for _ in range(size):
            clock += rng.randrange(0, 30)
            pair = pairs[rng.choice(list(pairs))]
            r, r_native = pair.report(rng, clock)
            if r != r_native and len(result.mismatches) < max_mismatches:
                result.mismatches.append(f"batch {result.batches}: device report differs: {r.hex()} {r_native.hex()}")
            roll = rng.random()
            if roll < 0.35:
                items.append(mutate(r, rng, seen[-32:]))
            elif roll < 0.4:
                items.append(rng.choice((bytearray(r), memoryview(r))))
            elif roll < 0.5:
                items.append(_junk(rng, seen))
            if rng.random() > 0.0005:  # 0.05 % are lost: that device's later reports gap until its next epoch
                items.append(r)
            seen.append(r)
            del seen[:-256]
        return items

    for _ in range(6):
        register(next_n)
        next_n += 1
    for _ in range(batches):
        roll = rng.random()
        if roll < 0.0005:  # over the limit: refused whole, so it carries no fresh reports
            batch: Any = [_junk(rng, seen) for _ in range(MAX_BATCH + rng.randint(-1, 1))]
        elif roll < 0.01:  # a framed buffer cut short: refused whole
            framed = frame([r for r in (_junk(rng, seen) for _ in range(rng.randint(1, 8))) if isinstance(r, bytes)])
            batch = framed[:rng.randrange(len(framed) + 1)]
        else:
            items = honest_batch(rng.choice((0, 1, 2, 3, 4, 6, 12)))
            batch = frame(items) if rng.random() < 0.3 and all(isinstance(i, bytes) for i in items) else items
        roll = rng.random()  # the controller's clock: in step, behind, or past max age
        now = clock + 290_000 if roll < 0.3 else max(0, clock - 10) if roll < 0.995 else clock + 400_000
        if rng.random() < 0.05:  # first without a clock: refused whole on both paths, then sent again with one
            both("ingest without a clock", lambda c, b=batch: c.ingest(b, now=None))
        outcome = both("ingest", lambda c, b=batch, now=now: (lambda v: (v.codes, v.fields))(c.ingest(b, now=now)))
        result.batches += 1
        if outcome[0] == "ok":
            codes, _ = outcome[1]
            result.reports += len(codes)
            result.accepted += codes.count(0)
            for code in codes:
                result.codes[str(code)] = result.codes.get(str(code), 0) + 1
        roll = rng.random()
        if roll < 0.08:
            body = both("checkpoint_body", lambda c: c.checkpoint_body())
            if body[0] == "ok":
                signature = rng.randbytes(rng.choice((0, 64, 3309)))
                both("commit", lambda c, s=signature: c.commit(s))
                result.checkpoints += 1
        elif roll < 0.1:
            register(rng.choice(list(pairs)))  # a new epoch for one device
        elif roll < 0.102:
            register(next_n)  # a new device
            next_n += 1
        elif roll < 0.104 and len(pairs) > 1:
            gone = pairs.pop(rng.choice(list(pairs))).ref.dev_id
            both("revoke", lambda c, d=gone: c.revoke(d))  # its reports now come only as replays
        elif roll < 0.105:
            other = rng.choice((b"FZ-NONE!", b"FZ-00000"))  # unknown, or perhaps revoked already
            both("revoke", lambda c, d=other: c.revoke(d))
        if result.batches % state_every == 0:
            both("state", lambda c: c.state())
    both("state", lambda c: c.state())
