"""RFC 6962 Merkle tree against the Certificate Transparency reference test vectors.

Vectors: the eight leaves, their leaf hashes, the roots of the trees of sizes 1–8, and the inclusion and
consistency proofs published with the certificate-transparency project's merkle_tree tests (also used by
Trillian's ``merkle/testonly`` reference tests). Leaf indexes below are 0-based.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqlab.amort import merkle
from pqlab.amort.errors import AmortError, Code
from pqlab.amort.merkle import (
    IncrementalTree,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)

CT_LEAVES = [bytes.fromhex(h) for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                        "606162636465666768696a6b6c6d6e6f")]
CT_LEAF_HASHES = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
    "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
    "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
    "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
    "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
]
CT_ROOTS = [  # tree sizes 1..8
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = [  # (leaf index, tree size, audit path)
    (0, 1, []),
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]
CT_CONSISTENCY = [  # (old size, new size, proof)
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]


def _hx(items):
    return [bytes.fromhex(h) for h in items]


def test_empty_tree_and_empty_leaf():
    assert root([]).hex() == hashlib.sha256(b"").hexdigest()
    assert IncrementalTree().root() == root([])
    assert leaf_hash(b"").hex() == CT_LEAF_HASHES[0]


def test_reference_leaf_hashes():
    assert [leaf_hash(leaf).hex() for leaf in CT_LEAVES] == CT_LEAF_HASHES


@pytest.mark.parametrize("size", range(1, 9))
def test_reference_roots_for_sizes_1_to_8(size):
    assert root(CT_LEAVES[:size]).hex() == CT_ROOTS[size - 1]
    tree = IncrementalTree()
    for leaf in CT_LEAVES[:size]:
        tree.append(leaf)
    assert tree.root().hex() == CT_ROOTS[size - 1]


@pytest.mark.parametrize(("index", "size", "path"), CT_INCLUSION)
def test_reference_inclusion_proofs(index, size, path):
    assert inclusion_proof(CT_LEAVES[:size], index) == _hx(path)
    verify_inclusion(CT_LEAVES[index], index, size, _hx(path), bytes.fromhex(CT_ROOTS[size - 1]))
    tree = IncrementalTree()
    for leaf in CT_LEAVES:
        tree.append(leaf)
    assert tree.inclusion_proof(index, size) == _hx(path)


@pytest.mark.parametrize(("old", "new", "path"), CT_CONSISTENCY)
def test_reference_consistency_proofs(old, new, path):
    assert consistency_proof(CT_LEAVES[:new], old) == _hx(path)
    verify_consistency(old, new, bytes.fromhex(CT_ROOTS[old - 1]), bytes.fromhex(CT_ROOTS[new - 1]), _hx(path))
    tree = IncrementalTree()
    for leaf in CT_LEAVES:
        tree.append(leaf)
    assert tree.consistency_proof(old, new) == _hx(path)


def _codes(fn):
    with pytest.raises(AmortError) as info:
        fn()
    return info.value.code


@pytest.mark.parametrize(("index", "size", "path"), [v for v in CT_INCLUSION if v[2]])
def test_tampered_inclusion_proofs_fail(index, size, path):
    proof, head = _hx(path), bytes.fromhex(CT_ROOTS[size - 1])
    for i in range(len(proof)):
        bad = list(proof)
        bad[i] = bytes([bad[i][0] ^ 1]) + bad[i][1:]
        assert _codes(lambda bad=bad: verify_inclusion(CT_LEAVES[index], index, size, bad, head)) == Code.PROOF_FAIL
    wrong_index = (index + 1) % size
    assert _codes(lambda: verify_inclusion(CT_LEAVES[index], wrong_index, size, proof, head)) == "PROOF_FAIL"
    assert _codes(lambda: verify_inclusion(CT_LEAVES[index], index, size, proof[:-1], head)) == "PROOF_FAIL"
    assert _codes(lambda: verify_inclusion(CT_LEAVES[index], index, size, [*proof, proof[0]], head)) == "PROOF_FAIL"
    assert _codes(lambda: verify_inclusion(b"other", index, size, proof, head)) == "PROOF_FAIL"
    assert _codes(lambda: verify_inclusion(CT_LEAVES[index], size, size, proof, head)) == "PROOF_FAIL"


@pytest.mark.parametrize(("old", "new", "path"), [v for v in CT_CONSISTENCY if v[2]])
def test_tampered_consistency_proofs_fail(old, new, path):
    proof = _hx(path)
    old_root, new_root = bytes.fromhex(CT_ROOTS[old - 1]), bytes.fromhex(CT_ROOTS[new - 1])
    for i in range(len(proof)):
        bad = list(proof)
        bad[i] = hashlib.sha256(bad[i]).digest()
        assert _codes(lambda bad=bad: verify_consistency(old, new, old_root, new_root, bad)) == "PROOF_FAIL"
    assert _codes(lambda: verify_consistency(old, new, new_root, old_root, proof)) == "PROOF_FAIL"
    assert _codes(lambda: verify_consistency(new, old, new_root, old_root, proof)) == "PROOF_FAIL"
    assert _codes(lambda: verify_consistency(old, new, old_root, new_root, proof[:-1])) == "PROOF_FAIL"
    assert _codes(lambda: verify_consistency(old, new, old_root, new_root, [b"short"])) == "PROOF_FAIL"


def test_domain_separation_between_leaves_and_nodes():
    left, right = leaf_hash(b"a"), leaf_hash(b"b")
    assert node_hash(left, right) != leaf_hash(left + right)
    assert root([b"a", b"b"]) == node_hash(left, right)


def _recursive_mth(leaves):
    """RFC 6962 §2.1 MTH written as the RFC's recursion (split at the largest power of two below n)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _recursive_mth(leaves[:k]) + _recursive_mth(leaves[k:])).digest()


def test_incremental_tree_agrees_with_root_and_the_rfc_recursion():
    leaves = [i.to_bytes(2, "big") for i in range(70)]
    tree = IncrementalTree()
    for n, leaf in enumerate(leaves, start=1):
        assert tree.append(leaf) == n - 1
        assert tree.root() == root(leaves[:n]) == _recursive_mth(leaves[:n])
    assert tree.root(33) == root(leaves[:33])


@given(st.lists(st.binary(max_size=8), min_size=1, max_size=40), st.data())
def test_every_generated_proof_verifies(leaves, data):
    size = len(leaves)
    index = data.draw(st.integers(0, size - 1))
    old = data.draw(st.integers(1, size))
    head = root(leaves)
    verify_inclusion(leaves[index], index, size, inclusion_proof(leaves, index), head)
    verify_consistency(old, size, root(leaves[:old]), head, consistency_proof(leaves, old))


def test_caller_misuse_is_value_or_type_error_and_bad_proofs_are_proof_fail():
    with pytest.raises(ValueError):
        verify_inclusion(b"", -1, 1, [], root([b""]))
    with pytest.raises(TypeError):
        verify_inclusion(None, 0, 1, [], root([b""]))
    with pytest.raises(TypeError):
        verify_consistency(1, 2, None, b"", [])
    with pytest.raises(TypeError):
        verify_consistency(None, 2, b"", b"", [])
    with pytest.raises(ValueError):
        inclusion_proof([b"a"], 1)
    with pytest.raises(ValueError):
        consistency_proof([b"a"], 2)
    tree = merkle.IncrementalTree()
    tree.append(b"a")
    for call in (lambda: tree.inclusion_proof(1), lambda: tree.root(2), lambda: tree.consistency_proof(2)):
        with pytest.raises(ValueError):
            call()
    assert _codes(lambda: verify_consistency(1, 2, b"", b"", [None])) == "PROOF_FAIL"
    assert merkle.EMPTY_ROOT == hashlib.sha256(b"").digest()


def test_a_consistency_proof_from_the_empty_tree_is_rejected_whatever_the_old_root():
    """RFC 9162 §2.1.4: proofs exist for 0 < m < n; accepting one from size 0 would accept any old root."""
    leaves = [b"a", b"b", b"c"]
    for old_root in (merkle.EMPTY_ROOT, b"\x00" * 32, root(leaves)):
        assert _codes(lambda r=old_root: verify_consistency(0, 3, r, root(leaves), [])) == "PROOF_FAIL"
