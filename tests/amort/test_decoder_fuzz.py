"""Property tests: arbitrary or mutated octets into every decoder give a value or the typed protocol error."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import DECODERS
from pqlab.amort.profile import PAPER_PROFILE
from tests.amort.samples import valid_messages
from tests.conftest import FUZZ


def mutate(name: str, seed: int) -> bytes:
    """A valid encoding with 1–4 seeded edits (overwrite, insert, delete, cut): cheap to generate, so the
    10,000-example runs spend their time in the decoder rather than in hypothesis."""
    rng = random.Random(seed)
    data = bytearray(valid_messages()[name])
    for _ in range(rng.randint(1, 4)):
        op, at = rng.randrange(4), rng.randrange(max(len(data), 1))
        if op == 0 and data:
            data[at] = rng.randrange(256)
        elif op == 1:
            data[at:at] = rng.randbytes(rng.randint(1, 4))
        elif op == 2 and data:
            del data[at]
        elif op == 3:
            del data[at:]
    return bytes(data)


def inputs(name: str):
    prefix = valid_messages()[name][:12]
    return st.one_of(st.binary(max_size=120), st.binary(max_size=60).map(lambda tail: prefix + tail),
                     st.integers(0, 2**64 - 1).map(lambda seed: mutate(name, seed)))


def check(name: str, data: bytes) -> None:
    try:
        DECODERS[name](data)
    except AmortError as exc:
        assert isinstance(exc.reason, Code) and exc.field


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoders_never_crash(name):
    """Generated inputs into every public decoder, as many as the profile's fuzz count: ``make test`` 10,000 per
    decoder (issue 16), ``make check`` a few hundred."""
    seen = [0]

    @FUZZ
    @given(data=inputs(name))
    def run(data: bytes) -> None:
        check(name, data)
        seen[0] += 1

    run()
    assert seen[0] >= FUZZ.max_examples


@pytest.fixture(scope="module")
def honest_world(tmp_path_factory):
    from pqlab.amort.controller import ControllerConfig
    from pqlab.experiments.amort_lab import KeySet, Lab

    world = Lab(KeySet.generate(2), 9, tmp_path_factory.mktemp("fuzz"), ControllerConfig(k=4), chain_length=4096,
                profile=PAPER_PROFILE)
    a = world.device(1)
    world.open_epoch(a)
    world.stream([a], 4)
    yield world, a
    world.close()


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**64 - 1))
def test_controller_and_auditor_reject_mutated_input_only_with_protocol_errors(honest_world, seed):
    """Past the decoder too: mutated reports, checkpoints and disclosures end in a value or an AmortError."""
    world, device = honest_world
    rng = random.Random(seed)
    report = world.report(device)
    data = bytearray(report)
    # Flip a bit of the record or evidence tag; the disclosure tag is not the paper controller's to check (it
    # cannot know K_j) and is caught by the auditor after disclosure instead.
    data[rng.randrange(83 + 16)] ^= 1 << rng.randrange(8)
    with pytest.raises(AmortError):
        world.controller.ingest(bytes(data))
    world.controller.ingest(report)
    ckpt = bytearray(world.controller.checkpoints[0])
    ckpt[rng.randrange(len(ckpt))] ^= 1 << rng.randrange(8)
    with pytest.raises(AmortError):
        world.cold_auditor().ingest_checkpoint(bytes(ckpt))
    device.current.committed_hi = max(device.current.committed_hi, 1)
    disclosure = bytearray(device.disclose(1))
    disclosure[rng.randrange(len(disclosure))] ^= 1 << rng.randrange(8)
    leaf, proof = world.controller.inclusion(device.dev_id, 1, 1, tree_size=4)
    auditor = world.cold_auditor()
    auditor.ingest_checkpoint(world.controller.checkpoints[0])
    with pytest.raises(AmortError):
        auditor.verify_origin(leaf, bytes(disclosure), proof)
