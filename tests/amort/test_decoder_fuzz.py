"""Property tests: arbitrary or mutated octets into every decoder give a value or the typed protocol error."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pqlab.amort.errors import AmortError, Code
from pqlab.amort.messages import DECODERS
from tests.amort.samples import valid_messages

FAST = settings(max_examples=300, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=10_000, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


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


def _property(name: str, profile: settings, seen: list[int] | None = None):
    @profile
    @given(data=inputs(name))
    def run(data: bytes) -> None:
        check(name, data)
        if seen is not None:
            seen[0] += 1
    return run


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoders_never_crash(name):
    _property(name, FAST)()


# The decoders issue 3 names get 10,000 examples each; the other five (certificate and epoch-exchange
# messages, built from the same codec) get 3,000 to keep the slow suite near a minute on two cores.
TEN_THOUSAND = ("Record", "Report", "EpochOpen", "Checkpoint", "InclusionProof", "ConsistencyProof", "Disclosure")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoders_never_crash_many(name):
    """``make test`` runs this: 10,000 generated inputs per named decoder (3,000 for the rest)."""
    examples = 10_000 if name in TEN_THOUSAND else 3_000
    seen = [0]
    _property(name, settings(SLOW, max_examples=examples), seen)()
    assert seen[0] >= examples
