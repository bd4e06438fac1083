"""The parent's side of a prover process: spawn it, exchange frames, relay AMORT messages to the controller, kill it.

A ``ProverProcess`` is a real child process (``python -m pqlab.amort.recovery.prover``); ``kill()`` sends SIGKILL to
its pid and reaps it. A ``Link`` pumps frames between one prover and a controller and counts what the controller
did with each report (accepted, or rejected with which protocol code).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pqlab.amort.errors import AmortError, Code
from pqlab.amort.recovery import wire
from pqlab.amort.recovery.resume import RecoveryController
from pqlab.child_processes import signal_on_parent_death
from pqlab.errors import ProverProcessError

FRAME_TIMEOUT = 60.0


def clock_ms() -> int:
    """The shared millisecond clock (CLOCK_MONOTONIC is system-wide, so prover timestamps use the same one)."""
    return time.monotonic_ns() // 1_000_000


class ProverProcess:
    """One life of the prover: a child process with pipes on stdin/stdout and stderr in a log file."""

    def __init__(self, directory: Path, arm: str, *, window: int, seed: str, tcti: str | None = None,
                 nv_index: int = 0x01800100, hooks: tuple[str, ...] = (), life: int = 1) -> None:
        self.directory = directory
        cmd = [sys.executable, "-m", "pqlab.amort.recovery.prover", "--dir", str(directory), "--arm", arm,
               "--window", str(window), "--seed", f"{seed}:{life}", "--nv-index", hex(nv_index)]
        if tcti is not None:
            cmd += ["--tcti", tcti]
        for hook in hooks:
            cmd += ["--hook", hook]
        self.stderr_path = directory / f"prover-{life}.log"
        self._stderr = open(self.stderr_path, "wb")
        self.spawned_ns = time.perf_counter_ns()
        # own session: Ctrl-C in the terminal interrupts the parent, which then kills the prover (see __exit__)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     preexec_fn=signal_on_parent_death, start_new_session=True)
        self.pid = self.proc.pid
        self.killed = False

    def send(self, kind: bytes, payload: bytes | dict[str, Any] = b"") -> None:
        try:
            self.proc.stdin.write(wire.encode_frame(kind, payload))
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise ProverProcessError(f"prover {self.pid} is gone: {self._tail()}", field="prover") from exc

    def recv(self, timeout: float = FRAME_TIMEOUT) -> tuple[bytes, Any]:
        try:
            kind, payload = wire.read_frame(self.proc.stdout.fileno(), timeout)
        except EOFError as exc:
            raise ProverProcessError(f"prover {self.pid} closed its pipe (exit {self.proc.poll()}): {self._tail()}",
                                     field="prover") from exc
        if kind == wire.FAILED:
            raise ProverProcessError(f"prover {self.pid} failed: {payload}", field="prover")
        return kind, payload

    def _tail(self) -> str:
        self._stderr.flush()
        try:
            return self.stderr_path.read_text(errors="replace")[-2000:].strip()
        except OSError:
            return ""

    def kill(self) -> int:
        """SIGKILL the prover by its pid and reap it; returns the exit status (-9)."""
        os.kill(self.pid, signal.SIGKILL)
        self.killed = True
        return self.proc.wait()

    def __enter__(self) -> ProverProcess:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        """Leave no prover behind: on an error or an interrupt it is SIGKILLed at once, else asked to exit."""
        if exc_type is not None and self.proc.poll() is None:
            self.kill()
        self.close()

    def close(self) -> int | None:
        """Ask a live prover to exit, or reap a dead one; always release the pipes."""
        if self.proc.poll() is None and not self.killed:
            try:
                self.send(wire.EXIT)
                self.proc.wait(timeout=10)
            except (ProverProcessError, subprocess.TimeoutExpired):
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._stderr.close()
        return self.proc.wait()


HookAction = Callable[[str, int, int], str]  # (name, count, seq) -> "kill" | "continue"


@dataclass
class LifeLog:
    """What happened during one prover life, as seen by the parent and the controller."""

    pid: int
    mode: str = ""
    ready_ns: int | None = None
    spawn_to_ready_ns: int | None = None
    stale_detected: bool = False
    reason: str = ""
    check_ns: int = 0
    new_epoch: bool = False
    epoch: int = 0
    resume_seq: int | None = None
    resume_rejected: str = ""
    reservations: list[dict[str, Any]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    last_report_seq: int = 0
    killed_at: tuple[str, int, int] | None = None
    exit_status: int | None = None
    restart_rate_refused: bool = False


class Link:
    """Relays one prover's frames to the controller until a stop condition; records a ``LifeLog``."""

    def __init__(self, prover: ProverProcess, controller: RecoveryController, dev_id: bytes,
                 on_hook: HookAction | None = None) -> None:
        self.prover = prover
        self.controller = controller
        self.dev_id = dev_id
        self.on_hook = on_hook or (lambda name, count, seq: "continue")
        self.log = LifeLog(prover.pid)

    def _handle(self, kind: bytes, payload: Any) -> bool:
        """Process one frame; True when the prover was killed at a hook."""
        log = self.log
        if kind == wire.NEED_EPOCH:
            log.stale_detected = bool(payload["stale_detected"])
            log.reason = payload["reason"]
            try:
                req = self.controller.open_epoch(self.dev_id, clock_ms())
            except AmortError as exc:
                if exc.reason is not Code.ERR_RESTART_RATE:
                    raise
                log.restart_rate_refused = True
                log.exit_status = self.prover.kill()
                return True
            self.prover.send(wire.EPOCH_REQ, req)
            kind, confirm = self._expect(wire.EPOCH_CONFIRM)
            if kind is None:
                return True
            self.prover.send(wire.EPOCH_OPEN, self.controller.confirm(confirm, clock_ms()))
            log.new_epoch = True
        elif kind == wire.RESUME:
            msg = wire.Resume.decode(payload)
            log.resume_seq = msg.resume_seq
            try:
                self.controller.resume(payload)
            except AmortError as exc:
                log.resume_rejected = exc.code
        elif kind == wire.RESERVED:
            log.reservations.append(payload)
        elif kind == wire.REPORT:
            try:
                report = self.controller.ingest(payload)
            except AmortError as exc:
                log.outcomes[exc.code] += 1
            else:
                log.outcomes["accepted"] += 1
                log.last_report_seq = report.record.seq
        elif kind == wire.HOOK:
            if self.on_hook(payload["name"], payload["count"], payload["seq"]) == "kill":
                log.killed_at = (payload["name"], payload["count"], payload["seq"])
                log.exit_status = self.prover.kill()
                return True
            self.prover.send(wire.CONTINUE)
        elif kind == wire.READY:
            log.mode, log.ready_ns = payload["mode"], payload["ready_ns"]
            log.spawn_to_ready_ns = time.perf_counter_ns() - self.prover.spawned_ns
            log.check_ns, log.epoch = payload["check_ns"], payload["epoch"]
            log.stale_detected = log.stale_detected or bool(payload["stale_detected"])
            log.reason = payload["reason"]
        else:
            raise ProverProcessError(f"unexpected frame {kind!r} from the prover", field="prover")
        return False

    def _expect(self, want: bytes) -> tuple[bytes | None, Any]:
        """Read frames until ``want`` (hooks may fire in between); (None, None) if the prover was killed."""
        while True:
            kind, payload = self.prover.recv()
            if kind == want:
                return kind, payload
            if self._handle(kind, payload):
                return None, None

    def until(self, stop: bytes) -> Any:
        """Pump frames until ``stop`` arrives (returns its payload) or the prover is killed (returns None)."""
        while True:
            kind, payload = self.prover.recv()
            if kind == stop:
                if kind == wire.READY:
                    self._handle(kind, payload)
                return payload
            if self._handle(kind, payload):
                return None

    def ready(self) -> bool:
        """Bring the prover up (resume or new epoch); False if it was killed on the way."""
        return self.until(wire.READY) is not None

    def run(self, n: int) -> bool:
        """Ask for ``n`` reports and relay them; False if the prover was killed on the way."""
        self.prover.send(wire.RUN, {"n": n})
        return self.until(wire.DONE) is not None
