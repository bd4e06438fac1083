"""A short differential fuzz run: random and mutated batches give the same verdicts and state on both paths."""

from __future__ import annotations

import pytest

from pqlab.amort.conformance import fuzz
from pqlab.amort.fastpath.api import native_status


@pytest.mark.skipif(not native_status()[0], reason=f"native fast path not built: {native_status()[1]}")
def test_random_and_mutated_batches_agree() -> None:
    result = fuzz.run(1500, seed=7)
    assert result.mismatches == []
    assert result.batches == 1500
    assert 0 < result.accepted < result.reports  # both accepted and refused reports went through
    assert len(result.codes) >= 10  # most refusal codes occurred
    assert result.checkpoints > 0
