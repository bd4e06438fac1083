"""RFC 6962 §2.1 Merkle hashing: leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right)."""

from __future__ import annotations

import hashlib

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """The RFC 6962 hash of one leaf."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The RFC 6962 hash of an interior node from its two children."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def root_hash(leaves: list[bytes]) -> bytes:
    """Merkle Tree Hash (RFC 6962 §2.1) of a list of leaf data: split at the largest power of two below n."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaf_hash(leaves[0])
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    return node_hash(root_hash(leaves[:split]), root_hash(leaves[split:]))
