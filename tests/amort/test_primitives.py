"""HKDF and truncated HMAC against their RFC vectors; the disclosure chain; the fsync-counting log."""

from __future__ import annotations

import hmac

import pytest

from pqlab.amort import chain, kdf
from pqlab.amort.durable import DurableLog
from pqlab.amort.errors import AmortError


def test_hkdf_extract_and_expand_match_rfc5869_case_1():
    ikm, salt, info = bytes([0x0B] * 22), bytes(range(13)), bytes(range(0xF0, 0xFA))
    prk = kdf.extract(salt, ikm)
    assert prk.hex() == "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"
    assert kdf.expand(prk, info, 42).hex() == ("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                                               "34007208d5b887185865")
    assert prk == hmac.digest(salt, ikm, "sha256")  # RFC 5869 §2.2: Extract is HMAC(salt, IKM)


def test_truncated_hmac_matches_rfc4231():
    assert kdf.mac(bytes([0x0B] * 20), b"Hi There").hex() == (
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    # RFC 4231 test case 5: truncation to 128 bits
    assert kdf.mac(bytes([0x0C] * 20), b"Test With Truncation", 16).hex() == "a3b6167473100ee06e0c796c2955552b"
    tag = kdf.mac(b"k" * 32, b"record", 12)
    assert kdf.mac_ok(b"k" * 32, b"record", tag)
    assert not kdf.mac_ok(b"k" * 32, b"record", b"")
    assert not kdf.mac_ok(b"k" * 32, b"recorD", tag)


def test_epoch_keys_are_bound_to_transcript_device_and_epoch():
    base = kdf.epoch_keys(b"t" * 32, b"s" * 32, b"PLC-0001", 1)
    assert base[0] != base[1]
    assert kdf.epoch_keys(b"u" * 32, b"s" * 32, b"PLC-0001", 1) != base
    assert kdf.epoch_keys(b"t" * 32, b"s" * 32, b"PLC-0002", 1) != base
    assert kdf.epoch_keys(b"t" * 32, b"s" * 32, b"PLC-0001", 2) != base


def test_chain_links_and_both_traversals():
    c = chain.DisclosureChain(bytes(range(32)), 50)
    for j in range(1, 51):
        assert chain.step(c.key(j)) == c.key(j - 1)
        chain.verify_independent(c.anchor, j, c.key(j))
    in_order = chain.InOrderVerifier(c.anchor)
    for j in (1, 2, 5, 6, 30, 4):  # forward jumps, then one key behind the last verified (fallback)
        in_order.verify(j, c.key(j))
    with pytest.raises(AmortError) as info:
        chain.verify_independent(c.anchor, 3, c.key(4))
    assert info.value.code == "CHAIN_FAIL"
    with pytest.raises(AmortError):
        in_order.verify(31, bytes(32))
    with pytest.raises(AmortError):
        c.key(51)


def test_durable_log_counts_one_fsync_per_append(tmp_path, monkeypatch):
    import os

    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    with DurableLog(tmp_path / "ckpt.log") as log:
        for i in range(5):
            log.append(bytes([i]) * (i + 1))
        assert log.fsync_count == len(calls) == 5
        assert log.entries() == [bytes([i]) * (i + 1) for i in range(5)]
