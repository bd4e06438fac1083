"""Ctrl-C during ``pqlab recovery`` (issue 24, item 6): "interrupted", exit 130, no swtpm or prover left behind.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group. The test starts ``pqlab recovery`` as a
shell starts a job (its own process group), waits until swtpm and a prover process are running, and sends SIGINT
to that group, as the terminal would. swtpm and the provers run in their own sessions, so pqlab is interrupted
first and stops them; before, swtpm died first and the run ended in TPM_UNAVAILABLE and tss2 ERROR lines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, foreground
from tests.recovery.conftest import require_tpm

pytestmark = pytest.mark.xdist_group("tpm")


def children(pid: int) -> dict[int, str]:
    """pid -> command line of the direct children of ``pid`` (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            if ppid == pid:
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def test_ctrl_c_during_recovery_is_interrupted_exit_130_and_stops_swtpm(tmp_path):
    require_tpm()
    (tmp_path / "params").mkdir()
    for name in ("params.yaml", "pqm4_cycles.yaml", "paper_reference.yaml"):
        (tmp_path / "params" / name).write_text((REPO / "params" / name).read_text())
    command = [sys.executable, "-m", "pqlab.cli", "recovery", "--params", str(tmp_path / "params" / "params.yaml"),
               "--profile", "quick", "--quiet"]  # quick: about a minute of trials, time enough to interrupt one
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                           preexec_fn=foreground)
    helpers: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and job.poll() is None:
            helpers = children(job.pid)
            commands = " ".join(helpers.values())
            if "swtpm socket" in commands and "pqlab.amort.recovery.prover" in commands:
                break
            time.sleep(0.05)
        assert job.poll() is None, "the run ended before it could be interrupted"
        assert "swtpm socket" in " ".join(helpers.values()), helpers
        os.killpg(job.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        err = job.communicate(timeout=120)[1].decode()
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    lines = [line for line in err.splitlines() if line.strip()]
    assert job.returncode == 130, err
    assert lines[-1].startswith("pqlab: interrupted; "), err
    assert "TPM_UNAVAILABLE" not in err and "ERROR" not in err and "Traceback" not in err, err
    time.sleep(0.2)
    left = {pid: cmd for pid, cmd in helpers.items() if alive(pid)}
    for pid in left:  # never leave a helper behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after the interrupt: {left}"
