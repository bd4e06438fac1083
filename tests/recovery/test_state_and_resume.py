"""The prover state file, the RESUME message, Device.resume and the controller's RESUME checks (no TPM needed)."""

from __future__ import annotations

import os
import random

import pytest

from pqlab.amort.controller import ControllerConfig
from pqlab.amort.device import Device, EpochSecrets
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import Checkpoint
from pqlab.amort.profile import PAPER_PROFILE
from pqlab.amort.recovery.cases import ARMS
from pqlab.amort.recovery.resume import RecoveryController
from pqlab.amort.recovery.state import STATE_OCTETS, ProverState, read_state, write_state
from pqlab.amort.recovery.wire import RESUME_OCTETS, Resume, encode_frame, read_frame
from pqlab.experiments.amort_lab import CONTROLLER_ID, KeySet

SECRETS = EpochSecrets(3, bytes(range(32)), bytes(range(32, 64)), 256, 16, 1)


def test_state_file_round_trips_at_144_octets_and_rejects_any_flipped_octet(tmp_path):
    state = ProverState.for_epoch("tpm", b"PLC-0001", SECRETS, 3, reserved_hi=192, counter=17)
    data = state.encode()
    assert len(data) == STATE_OCTETS
    assert ProverState.decode(data) == state
    assert state.secrets() == SECRETS and ARMS[state.arm] == "tpm"
    for i in range(0, len(data), 7):
        bad = bytearray(data)
        bad[i] ^= 0x01
        with pytest.raises(AmortError):
            ProverState.decode(bytes(bad))


def test_state_write_is_atomic_the_old_file_survives_until_the_rename(tmp_path):
    path = tmp_path / "state.bin"
    old = ProverState.for_epoch("naive", b"PLC-0001", SECRETS, 3, reserved_hi=64)
    new = ProverState.for_epoch("naive", b"PLC-0001", SECRETS, 3, reserved_hi=128)
    write_state(path, old)
    seen = {}

    def hook(name):
        seen[name] = (read_state(path).reserved_hi, (tmp_path / "state.bin.tmp").stat().st_size)

    write_state(path, new, hook)
    assert seen == {"state_written": (64, STATE_OCTETS)}
    assert read_state(path).reserved_hi == 128
    assert not (tmp_path / "state.bin.tmp").exists()
    assert read_state(tmp_path / "absent.bin") is None


def test_resume_message_is_72_octets_and_authenticated():
    msg = Resume(b"PLC-0001", 3, 193, 9).signed(SECRETS.k_evid)
    data = msg.encode()
    assert len(data) == RESUME_OCTETS
    assert Resume.decode(data) == msg


def test_frames_round_trip_over_a_pipe():
    r, w = os.pipe()
    os.write(w, encode_frame(b"P", b"\x00\x01") + encode_frame(b"Y", {"mode": "resumed"}))
    os.close(w)
    assert read_frame(r) == (b"P", b"\x00\x01")
    assert read_frame(r) == (b"Y", {"mode": "resumed"})
    with pytest.raises(EOFError):
        read_frame(r)
    os.close(r)


@pytest.fixture(scope="module")
def keys() -> KeySet:
    return KeySet.generate(1)


@pytest.fixture
def pair(keys, tmp_path):
    log = DurableLog(tmp_path / "ckpt.log")
    deployment = keys.deployment(PAPER_PROFILE, CONTROLLER_ID)
    ctrl = RecoveryController(deployment, keys.controller, log, ControllerConfig(k=64), clock=lambda: 600)
    ctrl.register(keys.devices[0].cert(PAPER_PROFILE))
    d = keys.devices[0]
    dev = Device(deployment, d.dev_id, d.kem, random.Random(1).randbytes, chain_length=512)
    dev.accept_open(ctrl.confirm(dev.respond(ctrl.open_epoch(d.dev_id, 0)), 0))
    yield ctrl, dev
    log.close()


def _send(ctrl, dev, n, t=1):
    for i in range(n):
        ctrl.ingest(dev.report(bytes(32), t + i))


def test_a_resumed_device_skips_its_reserved_window_and_the_controller_records_the_skip(pair, keys):
    ctrl, dev = pair
    _send(ctrl, dev, 40)
    secrets = dev.epoch_secrets()
    restarted = Device(dev.deployment, dev.dev_id, keys.devices[0].kem, random.Random(2).randbytes)
    restarted.resume(secrets, 65)  # the reservation covered 1..64; 41..64 may or may not have been issued
    ctrl.resume(Resume(dev.dev_id, secrets.epoch, 65, 0).signed(secrets.k_evid).encode())
    report = ctrl.ingest(restarted.report(bytes(32), 100))
    assert report.record.seq == 65
    assert [(s.lo, s.hi) for s in ctrl.skips] == [(41, 64)]


def test_the_controller_rejects_a_stale_forged_or_old_epoch_resume(pair):
    ctrl, dev = pair
    _send(ctrl, dev, 40)
    k = dev.epoch_secrets().k_evid
    with pytest.raises(AmortError) as stale:
        ctrl.resume(Resume(dev.dev_id, dev.epoch_number, 30, 0).signed(k).encode())
    assert stale.value.reason is Code.SEQ_DUPLICATE
    with pytest.raises(AmortError) as forged:
        ctrl.resume(Resume(dev.dev_id, dev.epoch_number, 65, 0).signed(bytes(32)).encode())
    assert forged.value.reason is Code.MAC_FAIL
    with pytest.raises(AmortError) as old:
        ctrl.resume(Resume(dev.dev_id, dev.epoch_number - 1, 65, 0).signed(k).encode())
    assert old.value.reason is Code.EPOCH_STALE


def test_a_device_that_rolls_back_re_issues_numbers_the_controller_flags_as_duplicates(pair, keys):
    ctrl, dev = pair
    _send(ctrl, dev, 100)
    stale = Device(dev.deployment, dev.dev_id, keys.devices[0].kem, random.Random(3).randbytes)
    stale.resume(dev.epoch_secrets(), 65)
    codes = []
    for i in range(50):
        try:
            ctrl.ingest(stale.report(bytes(32), 200 + i))
            codes.append("ok")
        except AmortError as exc:
            codes.append(exc.code)
    assert codes.count(Code.SEQ_DUPLICATE.value) == 36  # 65..100 again
    assert codes[36:] == ["ok"] * 14


def test_a_resumed_device_discloses_nothing_on_the_strength_of_pre_restart_receipts(pair, keys):
    ctrl, dev = pair
    _send(ctrl, dev, 64)
    restarted = Device(dev.deployment, dev.dev_id, keys.devices[0].kem, random.Random(4).randbytes)
    restarted.resume(dev.epoch_secrets(), 65)
    with pytest.raises(AmortError) as early:
        restarted.disclose(10)
    assert early.value.reason is Code.DISCLOSE_EARLY
    with pytest.raises(ValueError):
        restarted.resume(dev.epoch_secrets(), 0)


def test_retire_commits_what_was_seen_then_a_clean_close(pair):
    ctrl, dev = pair
    _send(ctrl, dev, 10)
    ctrl.retire(dev.dev_id)
    ctrl.checkpoint()
    closes = [c for data in ctrl.checkpoints for c in Checkpoint.decode(data).closes]
    assert [(c.last_committed, c.last_seen) for c in closes] == [(10, 10)]
    with pytest.raises(AmortError):
        ctrl.retire(dev.dev_id)
