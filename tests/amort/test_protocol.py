"""Protocol behaviour over real keys: epochs, report checks in the paper's order, checkpoints, auditing."""

from __future__ import annotations

import pytest

from pqlab.amort import merkle
from pqlab.amort.controller import ControllerConfig
from pqlab.amort.errors import AmortError
from pqlab.amort.messages import Checkpoint, EpochOpen, Report
from pqlab.experiments.amort_lab import Lab


def _code(fn):
    with pytest.raises(AmortError) as info:
        fn()
    return info.value.code


def test_epoch_exchange_gives_both_sides_the_same_evidence_key(lab):
    a = lab.device(1)
    opened = EpochOpen.decode(lab.open_epoch(a))
    assert a.current.k_evid == lab.controller.evidence_key(a.dev_id)[0]
    assert opened.k0 == a.current.chain.anchor and opened.tag_len == 16 and opened.epoch == 1
    assert a.current.chain.anchor != a.current.k_evid


def test_disclosure_seed_comes_from_device_entropy_not_the_shared_secret(keys, tmp_path):
    first, second = Lab(keys, 1, tmp_path / "a"), Lab(keys, 2, tmp_path / "b")
    anchors = []
    for world in (first, second):
        dev = world.device(1)
        world.open_epoch(dev)
        anchors.append(dev.current.chain.anchor)
    assert anchors[0] != anchors[1]
    again = Lab(keys, 1, tmp_path / "c")
    dev = again.device(1)
    again.open_epoch(dev)
    assert dev.current.chain.anchor == anchors[0]  # seeded entropy: reproducible per seed


def test_device_rejects_tampered_epoch_open(lab):
    a = lab.device(1)
    confirm = a.respond(lab.controller.open_epoch(a.dev_id, lab.now))
    opened = EpochOpen.decode(lab.controller.confirm(confirm, lab.now))
    assert _code(lambda: a.accept_open(opened.replace(tag_len=8).encode())) == "SIG_FAIL"
    assert _code(lambda: a.accept_open(opened.replace(sig=opened.sig[:-1] + b"\x00").encode())) == "SIG_FAIL"
    a.accept_open(opened.encode())


def test_evidence_tag_is_checked_before_policy(keys, tmp_path):
    world = Lab(keys, 3, tmp_path, ControllerConfig(reference_digests=frozenset({bytes(32)})))
    a = world.device(1)
    world.open_epoch(a)
    good = a.report(bytes(32), world.now + 1)
    world.controller.ingest(good)
    assert world.controller.verdicts[a.dev_id] is True
    bad = a.report(b"\x01" * 32, world.now + 2)
    report = Report.decode(bad)
    forged = report.replace(tag=bytes(16)).encode()
    assert _code(lambda: world.controller.ingest(forged)) == "MAC_FAIL"
    assert world.controller.verdicts[a.dev_id] is True  # the failed report never reached the policy check
    world.controller.ingest(bad)
    assert world.controller.verdicts[a.dev_id] is False


def test_checkpoint_commits_batch_with_one_fsync_and_auditor_accepts(keys, tmp_path):
    world = Lab(keys, 4, tmp_path, ControllerConfig(k=10))
    devs = [world.device(n) for n in (1, 2, 3)]
    for dev in devs:
        world.open_epoch(dev)
    world.stream(devs, 10)
    assert world.log.fsync_count == len(world.controller.checkpoints) == 3
    ckpt = Checkpoint.decode(world.controller.checkpoints[-1])
    assert ckpt.tree_size == 30 and ckpt.root == merkle.root(world.controller.leaves)
    assert [s.dev_id for s in ckpt.spans] == sorted(s.dev_id for s in ckpt.spans)
    auditor = world.auditor()
    assert auditor.committed == {(d.dev_id, 1): 10 for d in devs}
    assert world.log.entries() == world.controller.checkpoints


def test_device_detects_substitution_and_refuses_early_disclosure(keys, tmp_path):
    world = Lab(keys, 5, tmp_path, ControllerConfig(k=1000))
    a = world.device(1)
    world.open_epoch(a)
    world.stream([a], 3)
    assert _code(lambda: a.disclose(1)) == "DISCLOSE_EARLY"
    batch, world.controller.batch = world.controller.batch, []
    honest = world.controller.commit(batch)
    a.receive_checkpoint(honest)
    assert Report.decode(world.controller.leaves[0]).record.seq == 1
    a.disclose(3)
    assert _code(lambda: a.disclose(4)) == "DISCLOSE_EARLY"


def test_auditor_requires_consistency_proofs_after_the_first_checkpoint(keys, tmp_path):
    world = Lab(keys, 6, tmp_path, ControllerConfig(k=4))
    a = world.device(1)
    world.open_epoch(a)
    world.stream([a], 8)
    auditor = world.cold_auditor()
    auditor.ingest_checkpoint(world.controller.checkpoints[0])
    assert _code(lambda: auditor.ingest_checkpoint(world.controller.checkpoints[1])) == "PROOF_FAIL"
    auditor.ingest_checkpoint(world.controller.checkpoints[1], world.controller.consistency(4, 8))
    auditor.ingest_checkpoint(world.controller.checkpoints[1])  # the same checkpoint again is idempotent


def test_epoch_close_without_loss_raises_nothing(keys, tmp_path):
    world = Lab(keys, 7, tmp_path, ControllerConfig(k=4))
    a = world.device(1)
    world.open_epoch(a)
    world.stream([a], 8)  # everything committed
    a.restart()
    world.open_epoch(a)
    world.stream([a], 4)
    auditor = world.auditor()
    assert auditor.closes == {(a.dev_id, 1): (8, 8)}


def test_revocation_is_per_identity(keys, tmp_path):
    world = Lab(keys, 8, tmp_path)
    a, b = world.device(1), world.device(2)
    world.open_epoch(a)
    world.open_epoch(b)
    world.controller.revoke(a.dev_id)
    assert _code(lambda: world.controller.open_epoch(a.dev_id, world.now)) == "REVOKED"
    world.controller.ingest(world.report(b))
