"""RFC 6962 Merkle hashing against the Certificate Transparency reference test vectors."""

from __future__ import annotations

import hashlib

from pqlab.amort.merkle import leaf_hash, node_hash, root_hash

# The eight leaves of the certificate-transparency project's merkle_tree tests (RFC 6962 hashing).
CT_LEAVES = [bytes.fromhex(h) for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                        "606162636465666768696a6b6c6d6e6f")]


def test_empty_tree_and_empty_leaf():
    assert root_hash([]).hex() == hashlib.sha256(b"").hexdigest()
    assert leaf_hash(b"").hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"


def test_eight_leaf_reference_root():
    assert root_hash(CT_LEAVES).hex() == "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"


def test_domain_separation_between_leaves_and_nodes():
    left, right = leaf_hash(b"a"), leaf_hash(b"b")
    assert node_hash(left, right) != leaf_hash(left + right)
    assert root_hash([b"a", b"b"]) == node_hash(left, right)
