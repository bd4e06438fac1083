"""CASE size model: templates equal the real vectors, sizes come from encoded messages, and match Table I exactly."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest
import yaml
from cryptography.hazmat.primitives.ciphers.aead import AESCCM

from pqlab import crypto, framing
from pqlab.case import algorithms, certificates, configurations, messages, tlv
from pqlab.case.configurations import TABLE1, CaseConfig, CaseConfigError, case_message_sizes, handshake
from pqlab.case.material import RealMaterial, SizedMaterial
from pqlab.framing import FramingParams

# ------------------------------------------------------------------------------ templates vs vectors


def _cert(vectors, name):
    document = json.loads((vectors / "matter" / "chip_cert_vectors.json").read_text())
    return bytes.fromhex(next(c for c in document["certs"] if c["name"] == name)["tlv_hex"])


@pytest.mark.parametrize(("name", "template", "issuer_dn"), [
    ("Node01_01", certificates.NOC_TEMPLATE, ((certificates.DN_ICAC_ID, 0xCACACACA00000003),)),
    ("ICA01", certificates.ICAC_TEMPLATE, ((certificates.DN_RCAC_ID, 0xCACACACA00000001),)),
    ("Root01", certificates.RCAC_TEMPLATE, ((certificates.DN_RCAC_ID, 0xCACACACA00000001),)),
])
def test_templates_reproduce_the_reference_vectors(vectors, name, template, issuer_dn):
    """Substituting the vector's serial, key, key ids and signature into our template gives the vector's bytes."""
    vector = _cert(vectors, name)
    decoded = tlv.decode(vector)
    extensions = decoded.member(certificates.EXTENSIONS)
    skid = next(m.value for m in extensions.value if m.tag == tlv.ContextTag(4))
    akid = next(m.value for m in extensions.value if m.tag == tlv.ContextTag(5))
    tbs = certificates.tbs_element(template, "ECDSA-P256", "ECDSA-P256", issuer_dn,
                                   (decoded.member(certificates.PUBLIC_KEY).value,),
                                   decoded.member(certificates.SERIAL).value, skid, akid)
    rebuilt = certificates.with_signatures(tbs, (decoded.member(certificates.SIGNATURE).value,))
    assert tlv.encode(rebuilt) == vector


def test_post_quantum_certificates_swap_key_and_signature_and_drop_the_curve():
    material = SizedMaterial(7)
    classic = certificates.build_chain("ECDSA-P256", "ECDSA-P256", "ECDSA-P256", material, "x")
    pq = certificates.build_chain("ML-DSA-44", "ML-DSA-44", "ML-DSA-44", material, "x")
    assert (len(classic.noc), len(classic.icac), len(classic.rcac)) == (269, 252, 252)
    noc = tlv.decode(pq.noc.encoded)
    assert noc.member(certificates.CURVE) is None and tlv.decode(classic.noc.encoded).member(certificates.CURVE)
    assert len(noc.member(certificates.PUBLIC_KEY).value) == 1312
    assert len(noc.member(certificates.SIGNATURE).value) == 2420
    # only key, signature and the dropped curve change: everything else is the template
    delta = (tlv.member_size(noc.member(9)) - 68) + (tlv.member_size(noc.member(11)) - 67) - 3
    assert len(pq.noc) - len(classic.noc) == delta


def test_composite_certificates_carry_the_second_key_and_signature_under_new_tags():
    chain = certificates.build_chain("ECDSA-P256+ML-DSA-44", None, "ECDSA-P256+ML-DSA-44", SizedMaterial(), "c")
    noc = tlv.decode(chain.noc.encoded)
    assert len(noc.member(certificates.PUBLIC_KEY).value) == 65
    assert len(noc.member(certificates.SECOND_PUBLIC_KEY).value) == 1312
    assert len(noc.member(certificates.SIGNATURE).value) == 64
    assert len(noc.member(certificates.SECOND_SIGNATURE).value) == 2420


def test_real_certificate_signatures_verify_under_the_issuer_key():
    chain = certificates.build_chain("ML-DSA-44", "ML-DSA-44", "ML-DSA-44", RealMaterial(3), "real")
    signer = crypto.get_signer("ML-DSA-44")
    for cert, issuer in ((chain.noc, chain.icac), (chain.icac, chain.rcac), (chain.rcac, chain.rcac)):
        element = tlv.decode(cert.encoded)
        tbs = tlv.encode(element.replace_member(certificates.SIGNATURE, None))
        assert signer.verify(issuer.public_keys[0], tbs, element.member(certificates.SIGNATURE).value)


# ----------------------------------------------------------------------------- algorithm sizes


def test_algorithm_sizes_match_the_vendored_table_and_its_sources(vectors):
    """Every size in the registry is the vendored table's row for it (by liboqs name where liboqs has the
    algorithm, else by name), and the entry cites the same source (repository and commit) as that row."""
    with (vectors / "pq_sizes.csv").open() as handle:
        table = list(csv.DictReader(handle))
    by_liboqs = {r["liboqs_name"]: r for r in table if r["liboqs_name"]}
    by_name = {r["algorithm"]: r for r in table}
    for alg in algorithms.SIGNATURES.values():
        row = by_liboqs[alg.liboqs_name] if alg.liboqs_name else by_name[alg.name]
        assert (int(row["public_key"]), int(row["signature"])) == (alg.public_key, alg.signature), alg.name
        assert row["source"] == alg.source, alg.name
        assert alg.liboqs_name is None or "5a1a854b0dc9f2141bdc771c555ee60c37950183" in row["source"]
    for alg in algorithms.KEMS.values():
        row = by_liboqs[alg.liboqs_name]
        assert (int(row["public_key"]), int(row["ciphertext"])) == (alg.public_key, alg.ciphertext), alg.name
        assert row["source"] == alg.source, alg.name
    assert "5a1a854b0dc9f2141bdc771c555ee60c37950183" in algorithms.SOURCE


def test_the_papers_algorithms_are_a_fixed_part_of_the_registry():
    """The paper's stages name only the paper's algorithms; the newer ones come after them, unchanged."""
    assert algorithms.PAPER_SIGNATURES == ("ECDSA-P256", "ML-DSA-44", "ML-DSA-65", "Falcon-512", "SLH-DSA-SHA2-128s",
                                           "SLH-DSA-SHA2-128f", "MAYO-2", "SNOVA-24-5-4", "UOV-Is-pkc")
    assert algorithms.PAPER_KEMS == ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024")
    assert tuple(algorithms.SIGNATURES)[:len(algorithms.PAPER_SIGNATURES)] == algorithms.PAPER_SIGNATURES
    newer = set(algorithms.SIGNATURES) - set(algorithms.PAPER_SIGNATURES)
    assert {"SQIsign-I", "HAWK-512", "CROSS-RSDPG-128-small", "FN-DSA-512", "MAYO-1", "UOV-Ip-pkc",
            "SNOVA-25-8-3"} <= newer
    assert {"HQC-1", "HQC-3", "HQC-5"} == set(algorithms.KEMS) - set(algorithms.PAPER_KEMS)


@pytest.mark.parametrize("name", ["SQIsign-I", "HAWK-512", "CROSS-RSDPG-128-small", "HQC-1", "UOV-Ip"])
def test_newer_algorithms_build_handshakes_whose_fields_have_their_registry_sizes(name):
    """A chain of a newer signature (or an HQC key exchange) encodes; its key and signature fields are the
    registry's sizes, so the message grows by exactly the size difference to ML-DSA-44."""
    from pqlab.case.configurations import CaseConfig

    if name in algorithms.KEMS:
        base = case_message_sizes(CaseConfig(key_exchange="ML-KEM-768", noc="ML-DSA-44", icac=None, rcac="ML-DSA-44"))
        new = case_message_sizes(CaseConfig(key_exchange=name, noc="ML-DSA-44", icac=None, rcac="ML-DSA-44"))
        kem, ref = algorithms.kem(name), algorithms.kem("ML-KEM-768")
        assert new["Sigma1"] - base["Sigma1"] == kem.public_key - ref.public_key
        assert new["Sigma2"] - base["Sigma2"] == kem.ciphertext - ref.ciphertext
        return
    base = case_message_sizes(CaseConfig(key_exchange="ML-KEM-768", noc="ML-DSA-44", icac=None, rcac="ML-DSA-44"))
    new = case_message_sizes(CaseConfig(key_exchange="ML-KEM-768", noc="ML-DSA-44", icac=None, rcac=name))
    sig, ref = algorithms.signature(name), algorithms.signature("ML-DSA-44")
    # the root signs the NOC: only the NOC's signature field changes (its TLV length prefix may change width)
    grown = new["Sigma2"] - base["Sigma2"]
    assert abs(grown - (sig.signature - ref.signature)) <= 4


def test_backend_sizes_agree_where_a_backend_exists():
    for name in ("ML-KEM-512", "ML-KEM-768"):
        sizes, ours = crypto.get_kem(name).sizes, algorithms.kem(name)
        assert (sizes.public_key, sizes.ciphertext) == (ours.public_key, ours.ciphertext)
    sizes = crypto.get_signer("ML-DSA-44").sizes
    assert (sizes.public_key, sizes.signature) == (1312, 2420)


# ------------------------------------------------------------------------------ the size model


@pytest.fixture(scope="module")
def paper_table1(repo_root):
    reference = yaml.safe_load((repo_root / "params" / "paper_reference.yaml").read_text())
    values = {}
    for q in reference["quantities"]:
        if q["id"].startswith("case.t1.") and q["column"] in ("Sigma1", "Sigma2", "Sigma3", "Total"):
            values[(q["row"], q["column"])] = int(q["value"])
    return values


def test_all_60_table1_payload_sizes_are_byte_exact(paper_table1):
    """Byte sizes are exact by construction, so the published Table I values are compared directly."""
    assert len(paper_table1) == 60
    mismatches = {}
    for config in TABLE1:
        sizes = case_message_sizes(config)
        for column in ("Sigma1", "Sigma2", "Sigma3", "Total"):
            if sizes[column] != paper_table1[(config.name, column)]:
                mismatches[(config.name, column)] = (sizes[column], paper_table1[(config.name, column)])
    assert mismatches == {}


@pytest.mark.parametrize("config", TABLE1, ids=lambda c: c.name)
def test_sizes_are_len_of_the_encoded_messages_and_messages_decode(config):
    hs = handshake(config)
    sizes = case_message_sizes(config)
    for message in hs.messages:
        assert sizes[message.name] == len(message.encoded)
        assert sum(message.fields.values()) == len(message.encoded), message.name
        if message.name != "StatusReport":
            assert tlv.encode(tlv.decode(message.encoded)) == message.encoded
    assert sizes["Total"] == sum(len(m.encoded) for m in hs.messages)


def test_encrypted_payloads_decrypt_to_the_certificates():
    material = SizedMaterial()
    hs = handshake(configurations.table1_config("D3"), material)
    sigma2 = tlv.decode(hs.sigma2.encoded)
    tbe = AESCCM(material.random(16, "s2k"), tag_length=16).decrypt(
        messages.NONCE_SIGMA2, sigma2.member(messages.S2_ENCRYPTED).value, None)
    decrypted = tlv.decode(tbe)
    assert decrypted.member(messages.TBE_NOC).value == hs.responder_chain.noc.encoded
    assert decrypted.member(messages.TBE_ICAC).value == hs.responder_chain.icac.encoded
    assert len(decrypted.member(messages.TBE_SIGNATURE).value) == 2420


def test_real_material_gives_identical_sizes_and_verifiable_signatures():
    for name in ("B", "C1", "S5"):
        config = configurations.table1_config(name)
        assert case_message_sizes(config, RealMaterial(11)) == case_message_sizes(config, SizedMaterial(11))
    material = RealMaterial(5)
    hs = handshake(configurations.table1_config("D3"), material)
    share = tlv.decode(hs.sigma1.encoded).member(messages.S1_SHARE).value
    reply = tlv.decode(hs.sigma2.encoded).member(messages.S2_SHARE).value
    tbe = AESCCM(material.random(16, "s2k"), tag_length=16).decrypt(
        messages.NONCE_SIGMA2, tlv.decode(hs.sigma2.encoded).member(messages.S2_ENCRYPTED).value, None)
    signature = tlv.decode(tbe).member(messages.TBE_SIGNATURE).value
    tbs = messages.tbs_data(hs.responder_chain, reply, share)
    assert crypto.get_signer("ML-DSA-44").verify(hs.responder_chain.noc.public_keys[0], tbs, signature)


def test_new_fields_use_the_documented_tags():
    c4 = handshake(configurations.table1_config("C4"))
    assert len(tlv.decode(c4.sigma1.encoded).member(messages.S1_PDK_CIPHERTEXT).value) == 1088
    s4 = handshake(configurations.table1_config("S4"))
    assert s4.status.fields["key confirmation"] == 19


def test_resumption_sizes():
    b = configurations.resumption_sizes(configurations.table1_config("B"))
    assert (b["Sigma1"], b["Sigma2Resume"], b["Total"]) == (212, 74, 294)
    k768 = CaseConfig(key_exchange="ML-KEM-768")
    assert configurations.resumption_sizes(k768)["Sigma1"] == 1332
    assert configurations.resumption_sizes(k768, with_share=False)["Total"] == 226


def test_limit_check_and_the_hybrid_512_cached_configuration_fits():
    limit = configurations.MAX_APP_MESSAGE_OCTETS
    assert limit == 1280 - 48 - 38 - 16
    c1 = case_message_sizes(configurations.table1_config("C1"))
    assert max(c1["Sigma1"], c1["Sigma2"], c1["Sigma3"]) <= limit
    c1_768 = replace(configurations.table1_config("C1"), key_exchange="P-256+ML-KEM-768")
    assert case_message_sizes(c1_768)["Sigma2"] > limit


def test_configurations_are_parameterised_and_validated():
    config = CaseConfig(key_exchange="ML-KEM-512", noc="Falcon-512", icac=None, rcac="MAYO-2", auth="kem-pdk",
                        cached="both")
    assert config.responder_kem == "ML-KEM-512"
    assert case_message_sizes(config)["Sigma2"] > 0
    for bad in ({"key_exchange": "X25519"}, {"noc": "RSA"}, {"auth": "psk"}, {"cached": "all"}):
        with pytest.raises(CaseConfigError):
            CaseConfig(**bad)


def test_frames_follow_6lowpan_fragmentation():
    fr = FramingParams()
    one_hop = lambda n, **kw: len(framing.frame_psdus(n, fr, multi_hop=False, **kw))  # noqa: E731
    assert one_hop(1232) == 13  # the paper's 13 frames per 1232-B payload (IPHC 9, every fragment full)
    assert one_hop(1232, rounding=True, iphc_bytes=25) == 14  # OpenThread: ML-EID IPHC, 8-byte rounding
    assert one_hop(10) == 1
    assert framing.frames_for_message(5000, fr) == sum(
        one_hop(n) for n in (1232, 1232, 1232, 1232, 5026 - 4 * 1232))
