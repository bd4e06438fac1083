"""Backends: real sizes match FIPS 203/204/205, and keys, ciphertexts and signatures interoperate."""

from __future__ import annotations

import csv
import itertools

import pytest

from pqlab import crypto
from pqlab.errors import CryptoInputError, UnknownAlgorithmError, UnknownBackendError

AVAILABLE = [b for b in crypto.backends() if b.available]
KEM_CASES = [(b.name, alg) for b in AVAILABLE for alg in b.kems]
SIG_CASES = [(b.name, alg) for b in AVAILABLE for alg in b.signatures]
# Compressed Falcon signatures vary in length (about 650-670 B for Falcon-512); pq_sizes.csv gives liboqs's maximum.
VARIABLE_LENGTH = {"Falcon-512"}


def _fips_sizes(vectors):
    with open(vectors / "pq_sizes.csv", newline="") as handle:
        return {row["algorithm"]: row for row in csv.DictReader(handle)}


def test_at_least_two_backends_work_here():
    names = [b.name for b in AVAILABLE]
    assert len(names) >= 2, f"usable backends: {names}"
    for status in AVAILABLE:
        assert status.version


@pytest.mark.parametrize(("backend", "algorithm"), KEM_CASES)
def test_kem_sizes_match_fips_203(backend, algorithm, vectors):
    expected = _fips_sizes(vectors)[algorithm]
    sizes = crypto.get_kem(algorithm, backend).sizes
    assert sizes.public_key == int(expected["public_key"])
    assert sizes.ciphertext == int(expected["ciphertext"])
    assert sizes.shared_secret == int(expected["shared_secret"])
    if sizes.secret_key is not None:  # OpenSSL keeps the 64-byte seed, not the expanded key
        assert sizes.secret_key == int(expected["secret_key"])


@pytest.mark.parametrize(("backend", "algorithm"), SIG_CASES)
def test_signature_sizes_match_fips_204_205(backend, algorithm, vectors):
    expected = _fips_sizes(vectors)[algorithm]
    sizes = crypto.get_signer(algorithm, backend).sizes
    assert sizes.public_key == int(expected["public_key"])
    if algorithm in VARIABLE_LENGTH:
        assert int(expected["signature"]) - 150 < sizes.signature <= int(expected["signature"])
    else:
        assert sizes.signature == int(expected["signature"])
    if sizes.secret_key is not None:
        assert sizes.secret_key == int(expected["secret_key"])


def _pairs(algorithm: str, kind: str):
    names = crypto.backends_offering(algorithm, kind)
    pairs = list(itertools.product(names, repeat=2))
    if len(names) < 2:
        pytest.skip(f"only {names} offer {algorithm}: no cross-backend pair to check")
    return pairs


@pytest.mark.parametrize("algorithm", ["ML-DSA-44", "ML-DSA-65"])
@pytest.mark.parametrize("context", [b"", b"pqlab-ctx"])
def test_signatures_verify_across_every_backend_pair(algorithm, context):
    message = b"checkpoint root" * 20
    for signer_name, verifier_name in _pairs(algorithm, "signature"):
        signer = crypto.get_signer(algorithm, signer_name)
        verifier = crypto.get_signer(algorithm, verifier_name)
        pair = signer.keygen()
        signature = signer.sign(pair.secret, message, context)
        assert verifier.verify(pair.public, message, signature, context), (signer_name, verifier_name)
        assert not verifier.verify(pair.public, message + b"!", signature, context)
        tampered = bytearray(signature)
        tampered[len(tampered) // 2] ^= 0x01
        assert not verifier.verify(pair.public, message, bytes(tampered), context)
        if context:
            assert not verifier.verify(pair.public, message, signature, b"other")


@pytest.mark.parametrize("algorithm", ["ML-KEM-768", "ML-KEM-1024"])
def test_kem_encapsulations_decapsulate_across_every_backend_pair(algorithm):
    for owner_name, sender_name in _pairs(algorithm, "kem"):
        owner = crypto.get_kem(algorithm, owner_name)
        sender = crypto.get_kem(algorithm, sender_name)
        pair = owner.keygen()
        ciphertext, shared = sender.encaps(pair.public)
        assert owner.decaps(pair.secret, ciphertext) == shared, (owner_name, sender_name)
        tampered = bytearray(ciphertext)
        tampered[0] ^= 0x01
        # ML-KEM's implicit rejection: a modified ciphertext yields an unrelated secret, not an error.
        assert owner.decaps(pair.secret, bytes(tampered)) != shared


@pytest.mark.parametrize(("backend", "algorithm"), KEM_CASES)
def test_kem_rejects_malformed_inputs(backend, algorithm):
    kem = crypto.get_kem(algorithm, backend)
    pair = kem.keygen()
    with pytest.raises(CryptoInputError, match="public_key"):
        kem.encaps(pair.public[:-1])
    with pytest.raises(CryptoInputError, match="public_key"):
        kem.encaps("not bytes")  # type: ignore[arg-type]
    ciphertext, _ = kem.encaps(pair.public)
    with pytest.raises(CryptoInputError, match="ciphertext"):
        kem.decaps(pair.secret, ciphertext + b"\x00")


@pytest.mark.parametrize(("backend", "algorithm"), [c for c in SIG_CASES if c[1].startswith("ML-DSA")])
def test_signer_rejects_malformed_inputs(backend, algorithm):
    signer = crypto.get_signer(algorithm, backend)
    pair = signer.keygen()
    signature = signer.sign(pair.secret, b"m")
    assert not signer.verify(pair.public, b"m", signature[:-1])
    assert not signer.verify(pair.public, b"m", b"")
    with pytest.raises(CryptoInputError, match="public_key"):
        signer.verify(pair.public[:10], b"m", signature)


def test_auto_prefers_liboqs_then_openssl_then_pqcrypto():
    for algorithm in ("ML-DSA-65", "ML-KEM-768", "ML-KEM-512", "SLH-DSA-SHA2-128f"):
        kind = "kem" if algorithm.startswith("ML-KEM") else "signature"
        offering = crypto.backends_offering(algorithm, kind)
        if not offering:
            continue
        chosen = crypto.resolve_backend(algorithm, "auto", kind)
        assert chosen == offering[0]
        assert crypto.PREFERENCE.index(chosen) == min(crypto.PREFERENCE.index(n) for n in offering)


def test_unknown_algorithm_and_backend_are_typed_errors():
    with pytest.raises(UnknownAlgorithmError, match="ML-KEM-999"):
        crypto.get_kem("ML-KEM-999")
    with pytest.raises(UnknownAlgorithmError, match="ML-DSA-65"):
        crypto.get_kem("ML-DSA-65")  # a signature is not a KEM
    with pytest.raises(UnknownBackendError, match="'botan'"):
        crypto.get_signer("ML-DSA-65", "botan")


def test_named_backend_without_the_algorithm_is_a_typed_error():
    if not crypto.backend_status("openssl").available:
        pytest.skip("OpenSSL backend not usable here")
    with pytest.raises(UnknownAlgorithmError, match="openssl"):
        crypto.get_signer("SLH-DSA-SHA2-128f", "openssl")
