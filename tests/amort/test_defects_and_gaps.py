"""Issue 27's fixes beyond the one action each attack-matrix case tries: the other forms of each defect, and what
the hardened variant's device, controller and auditor now require."""

from __future__ import annotations

import pytest

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import ControllerConfig, link_hash
from pqlab.amort.deployment import Deployment
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.fastpath.api import native_status, open_controller, open_device, sign_and_commit
from pqlab.amort.messages import Checkpoint
from pqlab.amort.profile import HARDENED, Profile
from pqlab.attacks.defects_and_gaps import injected_req
from pqlab.experiments.amort_lab import Lab


def _code(action) -> str:
    with pytest.raises(AmortError) as info:
        action()
    return info.value.code


@pytest.fixture
def hardened_lab(keys, tmp_path):
    world = Lab(keys, 27, tmp_path, ControllerConfig(k=4), profile=Profile(HARDENED))
    yield world
    world.close()


def test_registering_an_active_device_again_keeps_its_epoch_and_counters(lab, keys):
    """N10, the other half: a re-registered honest device is not reset to epoch 0 (it would be EPOCH_STALE)."""
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 3)
    lab.controller.register(lab.cert(1))
    lab.controller.ingest(lab.report(a))  # seq 4 in epoch 1 still continues
    lab.open_epoch(a)  # and the next epoch is 2, not 1 again
    assert a.epoch_number == 2


def test_repeated_injected_epoch_requests_neither_desynchronise_nor_trip_the_restart_rate(lab, keys):
    """N15: three injected EPOCH_REQs around one re-key; the device keeps its exchanges, the controller opens once."""
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 2)
    req = lab.controller.open_epoch(a.dev_id, lab.now)
    for _ in range(3):
        a.respond(injected_req(lab, a.dev_id, 2))
    opened = lab.controller.confirm(a.respond(req), lab.now)
    a.respond(injected_req(lab, a.dev_id, 2))
    a.accept_open(opened)
    lab.controller.ingest(lab.report(a), now=lab.now)
    assert a.epoch_number == 2 and lab.controller.epoch_keys(a.dev_id).epoch == 2


def test_a_lost_epoch_open_leaves_both_sides_in_the_old_epoch(lab):
    """N15's root: the controller installs an epoch when the device first uses it, not when it signs the open."""
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 2)
    lab.controller.confirm(a.respond(lab.controller.open_epoch(a.dev_id, lab.now)), lab.now)  # EPOCH_OPEN lost
    lab.controller.ingest(lab.report(a))  # epoch 1 goes on
    assert lab.controller._devices[a.dev_id].epoch == 1
    assert lab.controller.open_epoch(a.dev_id, lab.now)  # a retry opens epoch 3: 2 was signed, never reused
    assert lab.controller._devices[a.dev_id].highest_epoch == 3


def test_an_oversized_checkpoint_is_refused_before_any_signature_work(lab):
    """N12: over the auditor's cap is TRAILING, whatever the octets are."""
    auditor = lab.cold_auditor(max_checkpoint_octets=10_000)
    assert _code(lambda: auditor.ingest_checkpoint(bytes(10_001))) == Code.TRAILING
    assert _code(lambda: auditor.ingest_checkpoint(bytes(9_000))) == Code.SIG_FAIL


@pytest.mark.parametrize("path", ["reference", "native"])
def test_the_link_does_not_depend_on_the_signature(path, keys):
    """N08 on the fast path: the same body committed with two signatures chains the same prev_hash."""
    if path == "native" and not native_status()[0]:
        pytest.skip("native fast path not built")
    heads = []
    for _ in range(2):
        deployment = keys.deployment()
        ctl = open_controller(path, deployment, sig_alg=keys.controller.algorithm)
        dev = open_device(path, deployment, b"PLC-0001", 1, bytes(32), bytes(range(32)), chain_length=4)
        ctl.register_epoch(dev.dev_id, 1, bytes(32), not_before=0)
        ctl.ingest([dev.report(bytes(32), 5)], now=5)
        data = sign_and_commit(ctl, keys.controller)
        heads.append((ctl.prev_hash, data))
    assert heads[0][1] != heads[1][1]  # randomised signatures
    assert heads[0][0] == heads[1][0] == link_hash(Checkpoint.decode(heads[0][1]).tbs())


@pytest.mark.parametrize("path", ["reference", "native"])
def test_sequence_exhaustion_is_a_protocol_code_on_both_paths(path):
    """N11 and issue 22 item 6: the report after seq 2^64 - 1 is AmortError EPOCH_STALE, not a generic error."""
    if path == "native" and not native_status()[0]:
        pytest.skip("native fast path not built")
    dev = open_device(path, Deployment(b"CTRL-001"), b"PLC-0001", 1, bytes(32), bytes(range(32)), chain_length=4,
                      next_seq=(1 << 64) - 1)
    dev.report(bytes(32), 1, disclosure_tag=False)
    assert dev.seq == (1 << 64) - 1
    with pytest.raises(AmortError) as info:
        dev.report(bytes(32), 2, disclosure_tag=False)
    assert (info.value.reason, info.value.field) == (Code.EPOCH_STALE, "seq")


def test_hardened_device_requires_receipt_continuity(hardened_lab):
    """N04: a receipt that skips an index, or does not link to the last one, is CKPT_DISCONTINUITY."""
    lab = hardened_lab
    a, b = lab.device(1), lab.device(2)
    lab.open_epoch(a)
    lab.open_epoch(b)
    for device in (a, b, a):  # checkpoints of 4 reports: a's 1-4, b's 1-4, a's 5-8
        lab.stream([device], 4)
    first, second, third = lab.controller.checkpoints
    a.receive_checkpoint(first)
    assert _code(lambda: a.receive_checkpoint(third)) == Code.CKPT_DISCONTINUITY  # its spans would continue
    a.receive_checkpoint(second)  # commits nothing of a's, but is part of the history a must follow
    a.receive_checkpoint(third)
    assert [e.index for e in a.current.receipts] == [0, 1, 2] and a.current.committed_hi == 8


def test_hardened_auditor_needs_the_devices_receipts_for_origin(hardened_lab):
    """N04: without a compared receipt committing report j, a disclosed K_j is DISCLOSE_EARLY; with it, accepted."""
    lab = hardened_lab
    a = lab.device(1)
    lab.open_epoch(a)
    lab.stream([a], 4)
    a.receive_checkpoint(lab.controller.checkpoints[0])
    leaf, proof = lab.controller.inclusion(a.dev_id, 1, 2)
    auditor = lab.cold_auditor()  # the certificate and the open
    lab.feed(auditor, lab.controller.checkpoints[0])
    assert _code(lambda: auditor.verify_origin(leaf, a.disclose(2), proof)) == Code.DISCLOSE_EARLY
    auditor.compare_receipts(a.receipts())
    auditor.verify_origin(leaf, a.disclose(2), proof)


def test_hardened_open_needs_the_devices_certificate_and_is_unique(hardened_lab):
    """N03: the auditor checks the anchor against the device's certificate; a second open of the epoch is a fork."""
    lab = hardened_lab
    a = lab.device(1)
    opened = lab.open_epoch(a)
    auditor = ColdAuditor(lab.deployment)
    assert _code(lambda: auditor.ingest_epoch_open(opened)) == Code.DEVICE_UNKNOWN
    auditor.ingest_certificate(lab.cert(1))
    auditor.ingest_epoch_open(opened)
    auditor.ingest_epoch_open(opened)  # the same open again is no fork
    from pqlab.amort.messages import HardenedEpochOpen

    other = HardenedEpochOpen.decode(opened).replace(expiry=1)
    other = other.replace(sig=lab.keys.controller.sign(other, lab.profile)).encode()
    assert _code(lambda: auditor.ingest_epoch_open(other)) == Code.CKPT_FORK


def test_time_primitives_refuses_bad_iterations_with_a_typed_error():
    """Issue 22 item 6: the binding's iteration count is range-checked (was a builtin OverflowError)."""
    if not native_status()[0]:
        pytest.skip("native fast path not built")
    from pqlab.amort.fastpath import native
    from pqlab.errors import PqlabError

    for bad in (-1, 0, 1 << 64, 2.5):
        with pytest.raises(PqlabError) as info:
            native.load().time_primitives(bad)
        assert info.value.field == "iterations"
