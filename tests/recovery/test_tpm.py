"""The real TPM stack: swtpm started and stopped by pid, the NV counter through tpm2-pytss, the anchored check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pqlab.amort.device import EpochSecrets
from pqlab.amort.recovery.reservation import TpmReserver
from pqlab.amort.recovery.tpm import NvCounter, check_index, parse_tcti
from pqlab.errors import TpmUnavailableError
from pqlab.experiments.recovery.swtpm import Swtpm, tpm_endpoint
from tests.recovery.conftest import require_tpm

pytestmark = pytest.mark.xdist_group("tpm")  # one worker: one session swtpm and key set for all of them

SECRETS = EpochSecrets(1, bytes(range(32)), bytes(range(32, 64)), 64, 16, 1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().split(")")[-1].split()[0] != "Z"


def test_nv_counter_define_increment_read_undefine(swtpm):
    index = 0x01800200
    with NvCounter(swtpm.tcti, index) as counter:
        assert not counter.exists()
        counter.define()
        assert counter.exists()
        assert counter.read() is None  # defined, never incremented
        counter.increment()
        first = counter.read()
        counter.increment()
        counter.increment()
        assert counter.read() == first + 2
    with NvCounter(swtpm.tcti, index) as again:  # a new connection finds the same value
        assert again.read() == first + 2
        again.undefine()
        assert not again.exists()


def test_the_counter_survives_a_restart_of_swtpm_on_the_same_state(tmp_path):
    require_tpm()
    with Swtpm(tmp_path / "tpm") as tpm:
        with NvCounter(tpm.tcti, 0x01800300) as counter:
            counter.define()
            for _ in range(5):
                counter.increment()
            value = counter.read()
        pid = tpm.pid
    assert not _alive(pid)
    with Swtpm(tmp_path / "tpm") as tpm, NvCounter(tpm.tcti, 0x01800300) as counter:
        assert counter.read() == value


def test_swtpm_is_stopped_by_pid_on_an_exception(tmp_path):
    with pytest.raises(RuntimeError), Swtpm(tmp_path / "tpm") as tpm:
        pid = tpm.pid
        assert _alive(pid)
        raise RuntimeError("boom")
    assert not _alive(pid)


def test_swtpm_dies_with_a_parent_that_is_killed(tmp_path):
    code = textwrap.dedent(f"""
        import sys, time
        from pqlab.experiments.recovery.swtpm import Swtpm
        tpm = Swtpm({str(tmp_path / 'tpm')!r}).start()
        print(tpm.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    assert _alive(pid)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_tpm_endpoint_starts_a_private_swtpm_and_refuses_bad_specs(tmp_path):
    with tpm_endpoint("swtpm", tmp_path) as tcti:
        assert parse_tcti(tcti)[0] == "swtpm"
        with NvCounter(tcti, 0x01800100) as counter:
            assert not counter.exists()
    with pytest.raises(TpmUnavailableError), tpm_endpoint("device:/dev/does-not-exist"):
        pass
    with pytest.raises(ValueError), tpm_endpoint("mock"):
        pass
    with pytest.raises(ValueError):
        check_index(0x81000000)


def test_anchored_check_detects_a_state_file_behind_the_tpm(swtpm, tmp_path):
    with NvCounter(swtpm.tcti, 0x01800400) as counter:
        counter.define()
        reserver = TpmReserver(tmp_path / "state.bin", 64, counter)
        first = reserver.reserve(b"PLC-0001", SECRETS, 0).state
        assert reserver.check(first).resume
        second = reserver.reserve(b"PLC-0001", SECRETS, first.reserved_hi).state
        assert second.counter == first.counter + 1 and second.reserved_hi == 128
        verdict = reserver.check(first)  # the older copy of the file
        assert not verdict.resume and verdict.stale and verdict.tpm_counter == second.counter
        assert reserver.check(second).resume
        counter.undefine()
