"""The prover as its own process: ``python -m pqlab.amort.recovery.prover --dir D --arm A ...``.

It loads its provisioned identity (``device.json``) and its state file (``state.bin``) from ``D``, recovers
(resume or ask for a new epoch), then produces reports on request over stdin/stdout frames (pqlab.amort.recovery.wire).
``--hook NAME@N`` makes it stop at the N-th time it reaches the named point, announce it, and wait: the parent then
kills it (SIGKILL) or lets it continue. Hook points: report, before_reservation, before_increment, after_increment,
state_written, state_durable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pqlab.amort.deployment import Deployment
from pqlab.amort.device import Device
from pqlab.amort.errors import AmortError
from pqlab.amort.identity import PublicKey
from pqlab.amort.profile import Profile
from pqlab.amort.recovery import wire
from pqlab.amort.recovery.reservation import FreshEpoch, Reserver, TpmReserver
from pqlab.amort.recovery.state import ARMS, ProverState, read_state
from pqlab.crypto.base import KeyPair

IDENTITY_FILE = "device.json"
STATE_FILE = "state.bin"
HOOK_POINTS = ("report", "before_reservation", "before_increment", "after_increment", "state_written",
               "state_durable")
KEM_BACKEND = "openssl"  # the provisioned ML-KEM key travels as its FIPS 203 seed; OpenSSL rebuilds it from that


@dataclass(frozen=True)
class Identity:
    """The prover's provisioned, read-only material ("flash"): identity, ML-KEM seed, and its deployment — the
    controller's identifier and public key and the profile octet (pqlab.amort.profile.Profile.octet)."""

    dev_id: bytes
    kem_seed: bytes
    controller_id: bytes
    controller_algorithm: str
    controller_public: bytes
    profile: int
    chain_length: int

    def to_json(self) -> str:
        return json.dumps({"dev_id": self.dev_id.hex(), "kem_seed": self.kem_seed.hex(),
                           "controller_id": self.controller_id.hex(), "controller_algorithm": self.controller_algorithm,
                           "controller_public": self.controller_public.hex(), "profile": self.profile,
                           "chain_length": self.chain_length})

    @classmethod
    def from_json(cls, text: str) -> Identity:
        d = json.loads(text)
        return cls(bytes.fromhex(d["dev_id"]), bytes.fromhex(d["kem_seed"]), bytes.fromhex(d["controller_id"]),
                   d["controller_algorithm"], bytes.fromhex(d["controller_public"]), int(d["profile"]),
                   int(d["chain_length"]))

    def deployment(self) -> Deployment:
        return Deployment(self.controller_id, PublicKey(self.controller_algorithm, self.controller_public),
                          profile=Profile.from_octet(self.profile))

    def kem_keypair(self) -> KeyPair:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        secret = mlkem.MLKEM768PrivateKey.from_seed_bytes(self.kem_seed)
        return KeyPair(secret.public_key().public_bytes_raw(), secret)


def parse_hooks(specs: list[str]) -> dict[str, set[int]]:
    """``["report@17", "state_durable@1"]`` -> {"report": {17}, "state_durable": {1}}."""
    out: dict[str, set[int]] = {}
    for spec in specs:
        name, sep, nth = spec.partition("@")
        if name not in HOOK_POINTS or not sep or not nth.isdigit() or int(nth) < 1:
            raise ValueError(f"hook must be NAME@N with NAME in {HOOK_POINTS} and N >= 1, got {spec!r}")
        out.setdefault(name, set()).add(int(nth))
    return out


class Prover:
    """The prover's main loop over one pair of pipes."""

    def __init__(self, directory: Path, arm: str, window: int, tcti: str | None, nv_index: int, seed: str,
                 hooks: dict[str, set[int]], out: BinaryIO, in_fd: int) -> None:
        self.dir = directory
        self.arm = arm
        self.out = out
        self.in_fd = in_fd
        self.hooks = hooks
        self.hits: dict[str, int] = {}
        self.identity = Identity.from_json((directory / IDENTITY_FILE).read_text())
        self.rng = random.Random(f"prover:{seed}")
        self.device = Device(self.identity.deployment(), self.identity.dev_id, self.identity.kem_keypair(),
                             self.rng.randbytes, chain_length=self.identity.chain_length, kem_backend=KEM_BACKEND)
        path = directory / STATE_FILE
        self.counter = None
        if arm == "tpm":
            if tcti is None:
                raise ValueError("the tpm arm needs --tcti")
            self.tcti, self.nv_index = tcti, nv_index
            self.reserver: Reserver = TpmReserver(path, window, _LazyCounter(self), self.hook)
        elif arm == "naive":
            self.reserver = Reserver(path, window, self.hook)
        else:
            self.reserver = FreshEpoch(path, window, self.hook)
        self.reserved_hi = 0
        self._warm()

    def _warm(self) -> None:
        """Load code paths (modules, OpenSSL providers, the TSS library) before recovery is timed.

        A restarted C prover has its code in memory; an interpreter would otherwise bill imports to recovery.
        Nothing here touches the state file, the TPM or the controller."""
        from pqlab.amort import kdf
        from pqlab.amort.messages import EpochClose
        from pqlab.crypto import get_kem

        kem = get_kem("ML-KEM-768", KEM_BACKEND)
        pair = self.identity.kem_keypair()
        kem.decaps(pair.secret, kem.encaps(pair.public)[0])
        kdf.epoch_keys(bytes(32), bytes(32), self.identity.dev_id, 1)
        try:
            self.device.controller.verify(EpochClose(self.identity.dev_id, 0, 0, 0), b"\0", "warm-up",
                                          self.device.profile)
        except AmortError:
            pass
        if self.arm == "tpm":
            from pqlab.amort.recovery.tpm import _pytss

            _pytss()

    # --- frames and hooks ------------------------------------------------------------------------------
    def send(self, kind: bytes, payload: bytes | dict[str, Any] = b"") -> None:
        wire.write_frame(self.out, kind, payload)

    def recv(self, expect: bytes) -> Any:
        kind, payload = wire.read_frame(self.in_fd)
        if kind != expect:
            raise RuntimeError(f"expected frame {expect!r}, got {kind!r}")
        return payload

    def hook(self, name: str) -> None:
        """Count arrivals at ``name``; at an armed count, announce it and block until the parent says continue."""
        n = self.hits[name] = self.hits.get(name, 0) + 1
        if n in self.hooks.get(name, ()):
            self.send(wire.HOOK, {"name": name, "count": n, "seq": self._seq()})
            self.recv(wire.CONTINUE)

    def _seq(self) -> int:
        return self.device.current.seq if self.device.current is not None else 0

    # --- recovery ---------------------------------------------------------------------------------------
    def recover(self) -> None:
        """Resume from the state file if the arm allows it, else run a new epoch; then announce READY."""
        t0 = time.perf_counter_ns()
        try:
            state = read_state(self.reserver.path)
        except AmortError as exc:  # a torn or edited file is never trusted
            state, corrupt = None, f"unreadable state file: {exc}"
        else:
            corrupt = ""
            if state is not None and state.dev_id != self.identity.dev_id:
                state, corrupt = None, "state file belongs to another device"
        stale, reason, mode, check_ns = bool(corrupt), corrupt or "no state file", "new_epoch", 0
        if state is not None:
            self.device.epoch_number = state.epoch
            verdict = self.reserver.check(state) if state.has_secrets or not self.reserver.reserves else None
            if verdict is not None and verdict.resume and state.has_secrets:
                self._resume(state)
                mode, reason, check_ns = "resumed", verdict.reason, verdict.check_ns
            elif verdict is not None:
                stale, reason, check_ns = verdict.stale, verdict.reason, verdict.check_ns
        if mode == "new_epoch":
            self.send(wire.NEED_EPOCH, {"stale_detected": stale, "reason": reason})
            self._new_epoch()
        self.send(wire.READY, {"mode": mode, "ready_ns": time.perf_counter_ns() - t0, "stale_detected": stale,
                               "reason": reason, "check_ns": check_ns, "epoch": self.device.epoch_number,
                               "next_seq": self._seq() + 1, "reserved_hi": self.reserved_hi})

    def _resume(self, state: ProverState) -> None:
        secrets = state.secrets()
        reservation = self.reserver.reserve(self.identity.dev_id, secrets, state.reserved_hi)
        self._announce(reservation)
        self.device.resume(secrets, state.reserved_hi + 1)
        msg = wire.Resume(self.identity.dev_id, secrets.epoch, state.reserved_hi + 1, reservation.state.counter)
        self.send(wire.RESUME, msg.signed(secrets.k_evid).encode())

    def _new_epoch(self) -> None:
        self.send(wire.EPOCH_CONFIRM, self.device.respond(self.recv(wire.EPOCH_REQ)))
        self.device.accept_open(self.recv(wire.EPOCH_OPEN))
        self.reserved_hi = 0
        self._announce(self.reserver.store_epoch(self.identity.dev_id, self.device.epoch_secrets()))

    def _announce(self, reservation: Any) -> None:
        self.reserved_hi = reservation.state.reserved_hi
        self.send(wire.RESERVED, {"reserved_hi": reservation.state.reserved_hi, "counter": reservation.state.counter,
                                  "increment_ns": reservation.increment_ns, "read_ns": reservation.read_ns,
                                  "write_ns": reservation.write_ns, "total_ns": reservation.total_ns})

    # --- reporting --------------------------------------------------------------------------------------
    def run(self, n: int) -> None:
        for _ in range(n):
            if self.reserver.reserves and self._seq() + 1 > self.reserved_hi:
                self._announce(self.reserver.reserve(self.identity.dev_id, self.device.epoch_secrets(),
                                                     self.reserved_hi))
            digest = hashlib.sha256(self.rng.randbytes(64)).digest()
            report = self.device.report(digest, time.monotonic_ns() // 1_000_000)
            self.send(wire.REPORT, report)
            self.hook("report")
        self.send(wire.DONE, {"seq": self._seq()})

    def serve(self) -> None:
        self.recover()
        while True:
            kind, payload = wire.read_frame(self.in_fd)
            if kind == wire.RUN:
                self.run(int(payload["n"]))
            elif kind == wire.EXIT:
                return
            else:
                raise RuntimeError(f"unexpected frame {kind!r}")


class _LazyCounter:
    """Opens the TPM connection on first use, so the connection time counts towards recovery, not start-up."""

    def __init__(self, prover: Prover) -> None:
        self._prover = prover
        self._counter: Any = None

    def _get(self) -> Any:
        if self._counter is None:
            from pqlab.amort.recovery.tpm import NvCounter

            self._counter = NvCounter(self._prover.tcti, self._prover.nv_index)
        return self._counter

    def increment(self) -> None:
        self._get().increment()

    def read(self) -> int | None:
        return self._get().read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pqlab.amort.recovery.prover", description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--arm", required=True, choices=ARMS)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--tcti")
    parser.add_argument("--nv-index", type=lambda s: int(s, 0), default=0x01800100)
    parser.add_argument("--seed", required=True)
    parser.add_argument("--hook", action="append", default=[])
    args = parser.parse_args(argv)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the frame stream
    prover = Prover(args.dir, args.arm, args.window, args.tcti, args.nv_index, args.seed, parse_hooks(args.hook),
                    out, sys.stdin.fileno())
    try:
        prover.serve()
    except EOFError:
        return 0  # the parent went away
    except Exception as exc:
        try:
            wire.write_frame(out, wire.FAILED, {"error": type(exc).__name__, "message": str(exc),
                                                "code": getattr(exc, "code", "")})
        except OSError:
            pass
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
