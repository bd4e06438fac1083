"""Issue 35: every public AMORT-V1 entry point, built with only its required arguments, has every check on.

Each test builds the object the way an outsider does — the public constructor, nothing but what it requires — and
then tries what the issue found accepted by default: another controller's evidence, a span of a device that never
opened an epoch, a report of unknown age, a variant downgrade, a missing device key."""

from __future__ import annotations

import dataclasses
import hashlib
import random

import pytest

from pqlab.amort.auditor import ColdAuditor
from pqlab.amort.controller import GENESIS, Controller, Pending
from pqlab.amort.deployment import Deployment
from pqlab.amort.device import Device
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, ClockRequired, Code, FastpathError
from pqlab.amort.fastpath import native
from pqlab.amort.fastpath.api import PATHS, native_status, open_controller, open_device
from pqlab.amort.identity import PublicKey
from pqlab.amort.messages import Checkpoint, EpochOpen, HardenedEpochOpen, Span
from pqlab.amort.profile import HARDENED, IMPLIED, PAPER, PAPER_PROFILE, SECURE, Profile
from pqlab.errors import PqlabError
from pqlab.experiments.amort_lab import Lab

PATH_PARAMS = [p if p == "reference" or native_status()[0] else
               pytest.param(p, marks=pytest.mark.skip(reason="native fast path not built")) for p in PATHS]


def _code(action) -> Code:
    with pytest.raises(AmortError) as info:
        action()
    return info.value.reason


@pytest.fixture
def deployment(keys) -> Deployment:
    """The deployment an outsider writes: identifier, controller key, CA key — nothing else."""
    return Deployment(b"CTRL-001", PublicKey.of(keys.controller), keys.ca.public)


def test_a_deployment_that_states_nothing_is_hardened_and_needs_its_controller_id():
    assert Deployment(b"CTRL-001").profile == SECURE == Profile(HARDENED, IMPLIED)
    assert Profile() == SECURE
    with pytest.raises(TypeError):
        Deployment()  # type: ignore[call-arg]
    with pytest.raises(PqlabError) as short:
        Deployment(b"CTRL")
    assert short.value.field == "Deployment.controller_id"


def test_profiles_round_trip_through_their_octet_and_unknown_octets_are_refused():
    for variant in (PAPER, HARDENED):
        for wire in ("implied", "explicit"):
            profile = Profile(variant, wire)
            assert Profile.from_octet(profile.octet) == profile
    assert len({Profile(v, w).label for v in (PAPER, HARDENED) for w in ("implied", "explicit")}) == 4
    with pytest.raises(PqlabError):
        Profile.from_octet(4)


def test_the_auditor_needs_the_controllers_identity_and_keys(keys):
    with pytest.raises(PqlabError) as no_key:
        ColdAuditor(Deployment(b"CTRL-001"))
    assert no_key.value.field == "Deployment.controller_key"
    with pytest.raises(PqlabError) as no_ca:
        ColdAuditor(Deployment(b"CTRL-001", PublicKey.of(keys.controller)))
    assert no_ca.value.field == "Deployment.ca"


def test_a_default_auditor_refuses_another_controllers_checkpoint_and_phantom_spans(keys, deployment, tmp_path):
    auditor = ColdAuditor(deployment)
    assert auditor.require_opens
    span = Span(b"PLC-0001", 1, 1, 1, bytes(32))
    other = Checkpoint(b"CTRL-002", 0, GENESIS, 1, bytes(32), (span,), (), keys.controller.alg_id)
    other = other.replace(sig=keys.controller.sign(other, deployment.profile)).encode()
    assert _code(lambda: auditor.ingest_checkpoint(other)) == Code.SIG_FAIL  # signed by the key, not this controller
    phantom = Checkpoint(b"CTRL-001", 0, GENESIS, 1, bytes(32), (span,), (), keys.controller.alg_id)
    phantom = phantom.replace(sig=keys.controller.sign(phantom, deployment.profile)).encode()
    assert _code(lambda: ColdAuditor(deployment).ingest_checkpoint(phantom)) == Code.DEVICE_UNKNOWN
    log_only = ColdAuditor(deployment, unsafe_spans_without_opens=True)  # the only way to turn it off
    log_only.ingest_checkpoint(phantom)


def test_a_default_controller_judges_no_report_without_a_clock(keys, deployment, tmp_path):
    with DurableLog(tmp_path / "log") as log:
        controller = Controller(deployment, keys.controller, log)
        controller.enroll(b"PLC-0001")
        controller.install_epoch(b"PLC-0001", 1, bytes(32), tag_len=16, policy_id=1, expiry=1 << 40)
        device = open_device("reference", deployment, b"PLC-0001", 1, bytes(32), bytes(range(32)), chain_length=4)
        report = device.report(bytes(32), 1_000)
        with pytest.raises(ClockRequired) as info:
            controller.ingest(report)
        assert info.value.field == "now" and controller.batch == []
        assert _code(lambda: controller.ingest(report, now=1_000 + 23 * 3_600_000)) == Code.EPOCH_STALE
        controller.ingest(report, now=1_000)


@pytest.mark.parametrize("path", PATH_PARAMS)
def test_a_default_batch_controller_needs_a_clock_and_an_open_time(path, deployment):
    ctl = open_controller(path, deployment)
    with pytest.raises(TypeError):
        ctl.register_epoch(b"PLC-0001", 1, bytes(32))  # not_before has no default
    devices = {}
    for dev_id in (b"PLC-0001", b"PLC-0002"):
        ctl.register_epoch(dev_id, 1, bytes(32), not_before=5_000)
        devices[dev_id] = open_device(path, deployment, dev_id, 1, bytes(32), bytes(range(32)), chain_length=4)
    early = devices[b"PLC-0001"].report(bytes(32), 4_999)
    held = devices[b"PLC-0002"].report(bytes(32), 6_000)
    with pytest.raises(ClockRequired):
        ctl.ingest([held])
    assert ctl.pending == 0 and ctl.last_seen(b"PLC-0002") == 0  # refused whole, nothing judged
    assert ctl.ingest([early], now=6_000)[0].code == Code.EPOCH_STALE  # stamped before its epoch opened
    assert ctl.ingest([held], now=6_000 + 23 * 3_600_000)[0].code == Code.EPOCH_STALE  # a day late
    clocked = open_controller(path, deployment, clock=lambda: 6_000)
    clocked.register_epoch(b"PLC-0002", 1, bytes(32), not_before=5_000)
    assert clocked.ingest([held]).n_accepted == 1  # the clock read when no time is passed


def test_the_binding_and_the_c_core_refuse_a_batch_without_a_clock():
    if not native_status()[0]:
        pytest.skip("native fast path not built")
    ctl = native.load().Controller(b"CTRL-001", 1, 0, 1, 300_000)
    with pytest.raises(FastpathError) as info:
        ctl.ingest([b"x"], None)
    assert info.value.field == "now"


def test_a_hardened_device_needs_its_signing_key_and_the_deployments_controller(keys, deployment):
    d = keys.devices[0]
    with pytest.raises(PqlabError) as missing:
        Device(deployment, d.dev_id, d.kem, random.Random(1).randbytes)
    assert missing.value.field == "sign_key"
    with pytest.raises(PqlabError) as no_controller_key:
        Device(Deployment(b"CTRL-001"), d.dev_id, d.kem, random.Random(1).randbytes, sign_key=d.sign)
    assert no_controller_key.value.field == "Deployment.controller_key"
    Device(dataclasses.replace(deployment, profile=PAPER_PROFILE), d.dev_id, d.kem, random.Random(1).randbytes)


def test_default_objects_refuse_a_variant_downgrade(keys, tmp_path):
    lab = Lab(keys, 35, tmp_path)  # the defaults: hardened
    assert lab.profile == SECURE
    a = lab.device(1)
    honest = HardenedEpochOpen.decode(lab.open_epoch(a))
    fields = {f.name: getattr(honest, f.name) for f in dataclasses.fields(EpochOpen) if f.name not in ("sig", "k0")}
    paper_form = EpochOpen(**{**fields, "profile": PAPER_PROFILE.octet}, k0=hashlib.sha256(b"own").digest())
    paper_form = paper_form.replace(sig=keys.controller.sign(paper_form, PAPER_PROFILE)).encode()
    assert _code(lambda: lab.cold_auditor().ingest_epoch_open(paper_form)) == Code.PROFILE_MISMATCH
    assert _code(lambda: a.accept_open(paper_form)) == Code.PROFILE_MISMATCH
    paper_auditor = ColdAuditor(dataclasses.replace(lab.deployment, profile=PAPER_PROFILE))
    assert _code(lambda: paper_auditor.ingest_certificate(lab.cert(1))) == Code.PROFILE_MISMATCH
    lab.close()


def test_a_controller_that_cannot_commit_keeps_its_batch(keys, deployment):
    controller = Controller(deployment, keys.controller, None)
    controller.batch = [Pending(b"PLC-0001", 1, 1, b"leaf")]
    with pytest.raises(PqlabError) as info:
        controller.checkpoint()
    assert info.value.field == "log" and len(controller.batch) == 1 and len(controller.tree) == 0


def test_65536_closes_are_committed_over_two_checkpoints_by_the_reference_controller(keys, deployment, tmp_path):
    n = 65_536
    with DurableLog(tmp_path / "log") as log:
        controller = Controller(deployment, keys.controller, log)
        for epoch in (1, 2):
            for i in range(n):
                dev_id = b"C" + i.to_bytes(7, "big")
                controller.enroll(dev_id)
                controller.install_epoch(dev_id, epoch, bytes(32), tag_len=16, policy_id=1, expiry=1 << 40)
        first = controller.decode_checkpoint(controller.checkpoint())
        second = controller.decode_checkpoint(controller.checkpoint())
        third = controller.decode_checkpoint(controller.checkpoint())
    assert [len(c.closes) for c in (first, second, third)] == [0xFFFF, 1, 0]
    assert [c.index for c in (first, second, third)] == [0, 1, 2]
