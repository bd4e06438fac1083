"""Start and stop a private software TPM 2.0 (Debian's ``swtpm``) on free loopback ports with its own state directory.

The daemon is our child in its own session, so a terminal's Ctrl-C (SIGINT to the foreground process group) reaches
pqlab and not the TPM: it is stopped by its pid (SIGTERM, then SIGKILL) when the context exits — normally, on an
exception or on Ctrl-C — and, on Linux, the kernel sends it SIGTERM if the process that started it dies first
(``PR_SET_PDEATHSIG``), so a killed study leaves no TPM behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from pqlab.child_processes import signal_on_parent_death
from pqlab.errors import TpmUnavailableError

BINARY = "swtpm"


def swtpm_problem() -> str | None:
    """Why a software TPM cannot be started here, or None when it can."""
    if shutil.which(BINARY) is None:
        return "swtpm is not installed (Debian: apt-get install swtpm swtpm-tools; make setup does this as root)"
    return None


def _free_port_pair() -> int:
    """A port P such that P and P+1 were both free on 127.0.0.1 (swtpm's TCTI wants the control port at P+1)."""
    for _ in range(200):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise TpmUnavailableError("no two consecutive free loopback ports for swtpm", field="tpm")


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Swtpm:
    """A running ``swtpm socket --tpm2`` with a private state directory; use as a context manager."""

    def __init__(self, state_dir: str | Path | None = None, *, startup_timeout: float = 10.0) -> None:
        self._own_dir = state_dir is None
        self.state_dir = Path(tempfile.mkdtemp(prefix="pqlab-swtpm-")) if state_dir is None else Path(state_dir)
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def tcti(self) -> str:
        """The tpm2-tss TCTI spec of this TPM (``swtpm:host=127.0.0.1,port=P``)."""
        if self.process is None:
            raise TpmUnavailableError("swtpm is not running", field="tpm")
        return f"swtpm:host=127.0.0.1,port={self.port}"

    def start(self) -> Swtpm:
        """Start the daemon and wait until its command port accepts connections (retries on a port race)."""
        problem = swtpm_problem()
        if problem is not None:
            raise TpmUnavailableError(problem, field="tpm")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        log = self.state_dir / "swtpm.log"
        last_error = ""
        for _ in range(5):
            port = _free_port_pair()
            cmd = [BINARY, "socket", "--tpm2", "--tpmstate", f"dir={self.state_dir}",
                   "--server", f"type=tcp,port={port},bindaddr=127.0.0.1",
                   "--ctrl", f"type=tcp,port={port + 1},bindaddr=127.0.0.1",
                   "--flags", "not-need-init,startup-clear", "--log", f"file={log},level=1"]
            # its own session: the terminal's Ctrl-C reaches pqlab, which then stops the TPM (not the other way)
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, preexec_fn=signal_on_parent_death, start_new_session=True)
            deadline = time.monotonic() + self.startup_timeout
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    break
                if _accepts(port) and _accepts(port + 1):
                    self.process, self.port = proc, port
                    proc.stderr.close()
                    return self
                time.sleep(0.02)
            if proc.poll() is None:
                self._stop_process(proc)
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            last_error = f"swtpm exited with {proc.returncode}: {err}" if err else f"swtpm exited ({proc.returncode})"
        raise TpmUnavailableError(f"swtpm did not start: {last_error}", field="tpm")

    @staticmethod
    def _stop_process(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        """Stop the daemon by its pid and remove the state directory if this object created it."""
        proc, self.process = self.process, None
        if proc is not None:
            self._stop_process(proc)
        if self._own_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> Swtpm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def tpm_endpoint(spec: str, workdir: str | Path | None = None) -> Iterator[str]:
    """Yield a TCTI spec for the ``recovery.tpm`` parameter: ``swtpm`` starts a private one, ``device:PATH`` uses
    a kernel TPM node as it is."""
    if spec == "swtpm":
        state = Path(tempfile.mkdtemp(prefix="swtpm-", dir=workdir)) if workdir is not None else None
        with Swtpm(state) as tpm:
            try:
                yield tpm.tcti
            finally:
                if state is not None:
                    tpm.stop()
                    shutil.rmtree(state, ignore_errors=True)
        return
    if spec.startswith("device:"):
        path = spec.partition(":")[2]
        if not os.path.exists(path):
            raise TpmUnavailableError(f"{path} does not exist (no kernel TPM resource manager here)", field="tpm")
        if not os.access(path, os.R_OK | os.W_OK):
            raise TpmUnavailableError(f"{path} is not readable and writable by this user (group tss?)", field="tpm")
        yield spec
        return
    raise ValueError(f"recovery.tpm must be 'swtpm' or 'device:/dev/tpmrmN', got {spec!r}")


def swtpm_version() -> str | None:
    """``swtpm --version``'s first line, or None when swtpm is absent."""
    if shutil.which(BINARY) is None:
        return None
    out = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else None
