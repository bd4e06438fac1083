"""Table I's symmetric operations in the C loop: outputs equal the Python twin's, sane timings, typed bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.errors import SymmetricTimingError
from pqlab.experiments import symmetric_timing as sym

OK, WHY = sym.status()
pytestmark = pytest.mark.skipif(not OK, reason=WHY)
TIMED = (sym.HMAC, sym.HMAC_KEYED, sym.HMAC_ONESHOT, sym.LEAF_INTERIOR)


@given(key=st.binary(min_size=1, max_size=128), message=st.binary(max_size=300), sibling=st.binary(min_size=32,
                                                                                                   max_size=32))
def test_every_operation_computes_what_its_python_twin_computes(key, message, sibling):
    inputs = sym.Inputs(key, message, sibling)
    for op in TIMED:
        assert sym.compute(op, inputs) == sym.python_twin(op, inputs), op


def test_the_twin_is_rfc_2104_and_rfc_6962():
    import hashlib
    import hmac

    inputs = sym.Inputs(b"\x0b" * 20, b"Hi There", bytes(32))
    # RFC 4231 test case 1
    assert sym.python_twin(sym.HMAC, inputs).hex() == \
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    assert sym.python_twin(sym.HMAC, inputs) == hmac.new(inputs.key, inputs.message, "sha256").digest()
    leaf = hashlib.sha256(b"\x00" + inputs.message).digest()
    assert sym.python_twin(sym.LEAF_INTERIOR, inputs) == hashlib.sha256(b"\x01" + bytes(32) + leaf).digest()


def test_measure_interleaves_every_operation_and_the_empty_loop():
    inputs = sym.Inputs(b"k" * 32, bytes(83), b"s" * 32)
    gross = sym.measure(TIMED, inputs, batch=8, samples=50)
    assert set(gross) == {sym.EMPTY, *TIMED}
    assert all(values.shape == (50,) and np.isfinite(values).all() and (values > 0).all()
               for values in gross.values())
    # the loop's own cost is small beside any real operation, and the one-shot call does strictly more work than
    # the keyed restart (the key schedule and an algorithm fetch on top of the same two hashes)
    assert np.median(gross[sym.EMPTY]) < np.median(gross[sym.HMAC_KEYED])
    assert np.median(gross[sym.HMAC_KEYED]) < np.median(gross[sym.HMAC_ONESHOT])
    net = sym.net(gross)
    assert sym.EMPTY not in net and all((values >= 0).all() for values in net.values())
    np.testing.assert_allclose(net[sym.HMAC], np.clip(gross[sym.HMAC] - np.median(gross[sym.EMPTY]), 0, None))


@pytest.mark.parametrize(("args", "field"), [
    ((b"", bytes(83), bytes(32), 1, 1), "key"),
    ((b"k" * 129, bytes(83), bytes(32), 1, 1), "key"),
    ((b"k", bytes(65537), bytes(32), 1, 1), "message"),
    ((b"k", bytes(83), bytes(31), 1, 1), "sibling"),
    ((b"k", bytes(83), bytes(32), 0, 1), "batch"),
    ((b"k", bytes(83), bytes(32), 2**64 + 1, 1), "batch"),   # a wrapping unsigned parse would take 1
    ((b"k", bytes(83), bytes(32), 1, 0), "samples"),
    ((b"k", bytes(83), bytes(32), 1, 2**32), "samples"),
    ((b"k", bytes(83), bytes(32), 1, -1), "samples"),
])
def test_bad_arguments_are_typed_errors_naming_the_field(args, field):
    module = sym.load()
    with pytest.raises(SymmetricTimingError, match=f"^{field}: ") as caught:
        module.measure([0, 1], *args)
    assert caught.value.code == "SYM_E_ARGUMENT" and caught.value.field == field


def test_unknown_operations_are_refused():
    module = sym.load()
    with pytest.raises(SymmetricTimingError, match=r"^ops: "):
        module.measure([0, 5], b"k", bytes(83), bytes(32), 1, 1)
    with pytest.raises(SymmetricTimingError, match=r"^ops: "):
        module.measure([], b"k", bytes(83), bytes(32), 1, 1)
    with pytest.raises(SymmetricTimingError, match=r"^op: ") as caught:
        module.compute(2**63, b"k", bytes(83), bytes(32))   # a wrapping parse would take op 0 or some other op
    assert caught.value.code == "SYM_E_ARGUMENT"
    with pytest.raises(SymmetricTimingError, match=r"^op: "):
        module.compute(2**64 + 1, b"k", bytes(83), bytes(32))
    with pytest.raises(SymmetricTimingError, match=r"^ops: "):
        module.measure([2**32 + 1], b"k", bytes(83), bytes(32), 1, 1)
    with pytest.raises(SymmetricTimingError, match="unknown operation"):
        sym.compute("sha3", sym.Inputs(b"k", b"", bytes(32)))
