"""RFC 6962 Merkle tree: leaf/node hashing, tree heads, inclusion and consistency proofs, and an incremental tree.

Hashing is RFC 6962 §2.1 (leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right)); proofs are
generated per §2.1.1 (PATH) and §2.1.2 (SUBPROOF) and verified with the iterative algorithms of
RFC 9162 §2.1.3.2 and §2.1.4.2. Errors follow the package convention (``pqlab.errors``): a proof that does
not verify raises :class:`AmortError` with ``PROOF_FAIL``; asking for something impossible (a leaf outside the
tree, a negative size) is caller misuse and raises ``ValueError``; a non-integer size or non-bytes data raises
``TypeError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pqlab.amort.errors import AmortError, Code

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
HASH_OCTETS = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """The RFC 6962 hash of one leaf."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The RFC 6962 hash of an interior node from its two children."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly smaller than ``n`` (n ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def _mth(hashes: Sequence[bytes]) -> bytes:
    """Merkle Tree Hash over leaf hashes (already hashed)."""
    if not hashes:
        return EMPTY_ROOT
    level = list(hashes)
    # Bottom-up pairing gives the same tree as the recursive split: odd nodes are carried up unchanged.
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def root(leaves: Sequence[bytes]) -> bytes:
    """The RFC 6962 tree head over a sequence of leaf data; the empty tree is SHA-256 of the empty string."""
    return _mth([leaf_hash(leaf) for leaf in leaves])


def _path(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    n = len(hashes)
    if n <= 1:
        return []
    k = _split(n)
    if index < k:
        return [*_path(index, hashes[:k]), _mth(hashes[k:])]
    return [*_path(index - k, hashes[k:]), _mth(hashes[:k])]


def _subproof(m: int, hashes: Sequence[bytes], complete: bool) -> list[bytes]:
    n = len(hashes)
    if m == n:
        return [] if complete else [_mth(hashes)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, hashes[:k], complete), _mth(hashes[k:])]
    return [*_subproof(m - k, hashes[k:], False), _mth(hashes[:k])]


def _check_size(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _check_bytes(value: bytes, name: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, not {type(value).__name__}")
    return bytes(value)


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """The audit path (RFC 6962 §2.1.1) for leaf ``index`` in the tree over ``leaves``."""
    _check_size(index, "index")
    if index >= len(leaves):
        raise ValueError(f"leaf {index} is outside a tree of {len(leaves)}")
    return _path(index, [leaf_hash(leaf) for leaf in leaves])


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """The consistency proof (RFC 6962 §2.1.2) from the first ``old_size`` leaves to all of ``leaves``."""
    _check_size(old_size, "old_size")
    if old_size > len(leaves):
        raise ValueError(f"old size {old_size} exceeds new size {len(leaves)}")
    if old_size == 0 or old_size == len(leaves):
        return []
    return _subproof(old_size, [leaf_hash(leaf) for leaf in leaves], True)


def _check_proof(proof: Sequence[bytes]) -> list[bytes]:
    items = list(proof)
    for i, item in enumerate(items):
        if not isinstance(item, (bytes, bytearray)) or len(item) != HASH_OCTETS:
            raise AmortError(Code.PROOF_FAIL, f"proof element is not a {HASH_OCTETS}-octet hash", field=f"proof[{i}]")
    return [bytes(item) for item in items]


def _proof_sides(fn: int, sn: int, length: int, kind: str) -> tuple[list[bool], int]:
    """RFC 9162's walk from node ``fn`` (last node ``sn``) over ``length`` proof elements: per element whether it is
    hashed in from the left, and the ``sn`` left at the end (0: the walk reached the root); PROOF_FAIL when the proof
    is longer than the path."""
    sides = []
    for _ in range(length):
        if sn == 0:
            raise AmortError(Code.PROOF_FAIL, f"{kind} proof is too long", field="proof")
        left = bool(fn & 1) or fn == sn
        sides.append(left)
        if left:
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        fn >>= 1
        sn >>= 1
    return sides, sn


def root_from_inclusion(leaf_data: bytes, index: int, tree_size: int, proof: Sequence[bytes]) -> bytes:
    """The root implied by an inclusion proof (RFC 9162 §2.1.3.2), or PROOF_FAIL if its shape is wrong."""
    leaf_data = _check_bytes(leaf_data, "leaf_data")
    _check_size(index, "index")
    _check_size(tree_size, "tree_size")
    items = _check_proof(proof)
    if index >= tree_size:
        raise AmortError(Code.PROOF_FAIL, f"leaf {index} is outside a tree of {tree_size}", field="index")
    sides, sn = _proof_sides(index, tree_size - 1, len(items), "inclusion")
    if sn != 0:
        raise AmortError(Code.PROOF_FAIL, "inclusion proof is too short", field="proof")
    r = leaf_hash(leaf_data)
    for p, left in zip(items, sides, strict=True):
        r = node_hash(p, r) if left else node_hash(r, p)
    return r


def verify_inclusion(leaf_data: bytes, index: int, tree_size: int, proof: Sequence[bytes], root: bytes) -> None:
    """Return None if ``proof`` shows ``leaf_data`` at ``index`` in the tree of ``tree_size`` with head ``root``."""
    root = _check_bytes(root, "root")
    if root_from_inclusion(leaf_data, index, tree_size, proof) != root:
        raise AmortError(Code.PROOF_FAIL, "inclusion proof does not lead to the tree head", field="root")


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """Return None if ``proof`` shows the tree of ``old_size`` is a prefix of the tree of ``new_size``.

    RFC 9162 §2.1.4 defines consistency proofs for 0 < old_size; a "proof" from the empty tree would accept any
    old root, so it fails (the caller's first tree head has nothing to be consistent with).
    """
    old_root, new_root = _check_bytes(old_root, "old_root"), _check_bytes(new_root, "new_root")
    _check_size(old_size, "old_size")
    _check_size(new_size, "new_size")
    items = _check_proof(proof)
    if old_size > new_size:
        raise AmortError(Code.PROOF_FAIL, f"old size {old_size} exceeds new size {new_size}", field="old_size")
    if old_size == new_size:
        if items or old_root != new_root:
            raise AmortError(Code.PROOF_FAIL, "equal sizes need equal roots and an empty proof", field="proof")
        return
    if old_size == 0:
        raise AmortError(Code.PROOF_FAIL, "no consistency proof exists from the empty tree (RFC 9162: 0 < m)",
                         field="old_size")
    if old_size & (old_size - 1) == 0:
        items = [old_root, *items]
    if not items:
        raise AmortError(Code.PROOF_FAIL, "consistency proof is empty", field="proof")
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    sides, sn = _proof_sides(fn, sn, len(items) - 1, "consistency")
    fr = sr = items[0]
    for c, left in zip(items[1:], sides, strict=True):
        if left:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
        else:
            sr = node_hash(sr, c)
    if sn != 0 or fr != old_root or sr != new_root:
        raise AmortError(Code.PROOF_FAIL, "consistency proof does not join the two tree heads", field="proof")


class IncrementalTree:
    """An append-only RFC 6962 tree: O(log n) append and root via a stack of perfect subtrees.

    Leaf hashes are kept so proofs for any past size can be produced; ``root()`` agrees with :func:`root`.
    """

    def __init__(self) -> None:
        self._hashes: list[bytes] = []
        self._stack: list[tuple[int, bytes]] = []  # (height, hash) of perfect subtrees, left to right

    def __len__(self) -> int:
        return len(self._hashes)

    def append(self, data: bytes) -> int:
        """Add one leaf; returns its index."""
        h = leaf_hash(data)
        self._hashes.append(h)
        height = 0
        while self._stack and self._stack[-1][0] == height:
            _, left = self._stack.pop()
            h = node_hash(left, h)
            height += 1
        self._stack.append((height, h))
        return len(self._hashes) - 1

    def root(self, size: int | None = None) -> bytes:
        """The tree head now, or at an earlier ``size``."""
        if size is not None and size != len(self._hashes):
            _check_size(size, "size")
            if size > len(self._hashes):
                raise ValueError(f"size {size}: the tree has only {len(self._hashes)} leaves")
            return _mth(self._hashes[:size])
        if not self._stack:
            return EMPTY_ROOT
        r = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            r = node_hash(left, r)
        return r

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The audit path of leaf ``index`` in the tree of ``size`` leaves (default: now)."""
        size = len(self._hashes) if size is None else _check_size(size, "size")
        _check_size(index, "index")
        if size > len(self._hashes) or index >= size:
            raise ValueError(f"no leaf {index} in a tree of {size} (the tree has {len(self._hashes)} leaves)")
        return _path(index, self._hashes[:size])

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """The consistency proof from ``old_size`` to ``new_size`` leaves (default: now)."""
        new_size = len(self._hashes) if new_size is None else _check_size(new_size, "new_size")
        _check_size(old_size, "old_size")
        if new_size > len(self._hashes) or old_size > new_size:
            raise ValueError(f"no consistency proof from {old_size} to {new_size} leaves "
                             f"(the tree has {len(self._hashes)})")
        if old_size == 0 or old_size == new_size:
            return []
        return _subproof(old_size, self._hashes[:new_size], True)
