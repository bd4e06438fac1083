"""The fast-path interface against the full reference protocol: real ML-KEM epochs, ML-DSA checkpoints, auditor."""

from __future__ import annotations

import random
import warnings

import pytest

from pqlab.amort.controller import ControllerConfig
from pqlab.amort.deployment import Deployment
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError, Code, FastpathError
from pqlab.amort.fastpath import native
from pqlab.amort.fastpath.api import (
    PATHS,
    frame,
    native_status,
    open_controller,
    open_device,
    resolve_controller_path,
    sign_and_commit,
    unframe,
)
from pqlab.amort.messages import Checkpoint
from pqlab.errors import ParamsError, PqlabError
from pqlab.experiments.amort_lab import Lab

needs_native = pytest.mark.skipif(not native_status()[0], reason=f"native fast path not built: {native_status()[1]}")
BOTH = pytest.mark.parametrize("path", [p if p == "reference" else pytest.param(p, marks=needs_native)
                                        for p in PATHS])


def chain_seed(lab: Lab, n: int) -> bytes:
    """The disclosure seed device n drew in its first epoch (Lab seeds each device's entropy)."""
    return random.Random(f"device:{lab.seed}:{n}").randbytes(32)


@BOTH
def test_device_path_equals_the_reference_device(lab: Lab, path: str) -> None:
    device = lab.device(1)
    lab.open_epoch(device)
    k_evid, tag_len = lab.controller.evidence_key(device.dev_id)
    fast = open_device(path, lab.deployment, device.dev_id, 1, k_evid, chain_seed(lab, 1), tag_len=tag_len,
                       policy_id=1, chain_length=lab.chain_length)
    assert fast.anchor == device.current.chain.anchor
    for i in range(40):
        digest = lab.digest()
        assert fast.report(digest, 5_000 + i, disclosure_tag=i % 3 != 0) == device.report(
            digest, 5_000 + i, disclosure_tag=i % 3 != 0)
    assert fast.seq == 40
    assert [fast.chain_key(j) for j in (0, 1, 17, 40, lab.chain_length)] == \
        [device.current.chain.key(j) for j in (0, 1, 17, 40, lab.chain_length)]


@BOTH
def test_controller_path_equals_the_reference_controller(lab: Lab, path: str, keys) -> None:
    """Same keys and reports as a real Controller with ML-KEM epochs: same bodies, same signed checkpoints,
    and the cold auditor accepts the chain the fast path built."""
    lab.config = ControllerConfig(k=1 << 40)
    lab.controller.config = lab.config
    devices = [lab.device(n) for n in (1, 2, 3)]
    for d in devices:
        lab.open_epoch(d)
    fast = open_controller(path, lab.deployment, sig_alg="ML-DSA-65", clock=lambda: lab.now)
    for d in devices:
        keys = lab.controller.epoch_keys(d.dev_id)
        fast.register_epoch(d.dev_id, 1, keys.k_evid, tag_len=keys.tag_len, expiry=keys.expiry, policy_id=1,
                            not_before=keys.not_before)
    for round_ in range(3):
        reports = lab.stream(devices, 2 + round_)
        reports.append(reports[0])  # a replay: both refuse it
        with pytest.raises(AmortError) as refused:
            lab.controller.ingest(reports[-1])
        verdicts = fast.ingest(reports)
        assert [v.accepted for v in verdicts] == [True] * (len(reports) - 1) + [False]
        assert verdicts[-1].code == refused.value.reason == Code.SEQ_DUPLICATE
        signed = lab.controller.checkpoint()
        body = fast.checkpoint_body()
        assert body == Checkpoint.decode(signed).tbs()
        assert fast.commit(Checkpoint.decode(signed).sig) == signed
        assert fast.prev_hash == lab.controller.prev_hash
        assert fast.root == lab.controller.tree.root() and fast.tree_size == len(lab.controller.tree)
    for d in devices:
        assert fast.last_seen(d.dev_id) == fast.last_committed(d.dev_id) == 9
        assert fast.epoch(d.dev_id) == 1
    assert lab.auditor().last.index == 2


@BOTH
def test_sign_and_commit_signs_once_and_writes_once(tmp_path, keys, path: str) -> None:
    deployment = keys.deployment()
    fast = open_controller(path, deployment, sig_alg=keys.controller.algorithm)
    dev = open_device(path, deployment, b"PLC-0001", 1, bytes(32), bytes(range(32)), chain_length=8)
    fast.register_epoch(dev.dev_id, 1, bytes(32), not_before=0)
    with DurableLog(tmp_path / "log") as log:
        fast.ingest([dev.report(bytes(32), t) for t in range(3)], now=3)
        data = sign_and_commit(fast, keys.controller, log)
        assert log.fsync_count == 1 and log.entries() == [data]
    ckpt = Checkpoint.decode(data)
    # a real ML-DSA-65 signature over the fast path's body, under the deployment profile's context
    deployment.controller_key.verify(ckpt, ckpt.sig, "Checkpoint", deployment.profile)
    assert ckpt.tree_size == 3 and ckpt.spans[0].seq_hi == 3


@BOTH
def test_state_accessors_and_their_errors(path: str) -> None:
    fast = open_controller(path, Deployment(b"CTRL-001"))
    with pytest.raises(AmortError) as unknown:
        fast.last_seen(b"PLC-0001")
    assert unknown.value.reason == Code.DEVICE_UNKNOWN
    fast.register_epoch(b"PLC-0001", 3, bytes(32), tag_len=8, expiry=99, policy_id=4, not_before=0)
    assert (fast.epoch(b"PLC-0001"), fast.last_seen(b"PLC-0001"), fast.pending, fast.index) == (3, 0, 0, 0)
    with pytest.raises(PqlabError) as short:
        fast.epoch(b"PLC")
    assert short.value.field == "dev_id"
    fast.checkpoint_body()
    assert fast.awaiting_commit and fast.index == 1
    with pytest.raises(FastpathError):
        fast.checkpoint_body()


def test_framing_round_trips_and_names_the_broken_offset() -> None:
    reports = [b"", b"\x01" * 117, b"abc"]
    assert unframe(frame(reports)) == reports
    with pytest.raises(FastpathError) as cut:
        unframe(frame(reports) + b"\x00")
    assert cut.value.field == "batch@126"  # 2 + 0, 2 + 117, 2 + 3 octets before the cut


@needs_native
def test_binding_codes_are_the_reference_codes_in_order() -> None:
    assert native.load().code_names() == tuple(code.value for code in Code)


@needs_native
def test_native_errors_are_the_reference_exception_types() -> None:
    module = native.load()
    ctl = module.Controller(b"CTRL-001", 1, 0, 0, 300_000)
    with pytest.raises(AmortError) as revoked:
        ctl.revoke(b"PLC-0009")
    assert (revoked.value.reason, revoked.value.field) == (Code.DEVICE_UNKNOWN, "dev_id")
    with pytest.raises(FastpathError):
        ctl.commit(b"")
    dev = module.Device(b"PLC-0001", 1, bytes(32), bytes(32), 16, 1, 2, 0, 0, 1)
    with pytest.raises(PqlabError) as bad:
        dev.report(bytes(32), -5)
    assert bad.value.field == "timestamp" and not isinstance(bad.value, AmortError)


def test_resolve_controller_path() -> None:
    assert resolve_controller_path("reference").path == "reference"
    with pytest.raises(ParamsError):
        resolve_controller_path("fast")
    ok, why = native_status()
    resolved = resolve_controller_path("native")
    assert resolved.path == ("native" if ok else "reference")
    assert why in resolved.reason


def test_native_fallback_is_loud(monkeypatch, tmp_path) -> None:
    """A missing native build resolves to the reference path with the reason and a RuntimeWarning."""
    monkeypatch.setenv(native.ENV, str(tmp_path / "missing.so"))  # another build: loaded (and cached) on its own
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resolved = resolve_controller_path("native")
    assert resolved.path == "reference" and "unavailable" in resolved.reason
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)
    with pytest.raises(FastpathError):
        open_controller("native", Deployment(b"CTRL-001"))


@needs_native
def test_closes_beyond_one_checkpoint_wait_for_the_next_on_both_paths() -> None:
    """Issue 35 O10: 65,537 epoch closes at once go out 65,535 in the first body and 2 in the next, byte-identical
    bodies and states on both paths; before, the limit raised after the leaves were appended and stuck the chain."""
    deployment = Deployment(b"CTRL-001")
    ids = [b"C" + i.to_bytes(7, "big") for i in range(0xFFFF + 2)]
    out = {}
    for path in PATHS:
        ctl = open_controller(path, deployment, clock=lambda: 10)
        for epoch in (1, 2):
            for dev_id in ids:
                ctl.register_epoch(dev_id, epoch, bytes(32), not_before=0)
        ctl.register_epoch(ids[0], 3, bytes(32), not_before=0)  # one more close, queued after the first 65,537
        bodies = []
        for _ in range(3):
            bodies.append(ctl.checkpoint_body())
            ctl.commit(bytes(64))
        state = ctl.state()
        out[path] = (bodies, {k: v for k, v in state.items() if k != "devices"})
    assert out["reference"] == out["native"]
    counts = [len(Checkpoint.decode(b + b"\x00\x00").closes) for b in out["reference"][0]]
    assert counts == [0xFFFF, 3, 0] and out["reference"][1]["closes"] == []
