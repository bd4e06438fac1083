"""The device-held disclosure chain (§IV-D b): K_{j-1} = H(dom ‖ K_j), anchor K0, and its two traversals."""

from __future__ import annotations

import hashlib

from pqlab.amort.errors import AmortError, Code

CHAIN_DOMAIN = b"AMORT.CHAIN"
MAX_CHAIN_LENGTH = 1 << 24
"""Most keys in one epoch's chain (L). A verifier refuses a disclosed index above it before hashing, so the
walk costs at most this many hashes however large a committed count a controller declares (N13)."""


def check_index(j: int) -> None:
    """CHAIN_FAIL unless 1 <= j <= MAX_CHAIN_LENGTH: K_0 is the public anchor, never a disclosure key (N06)."""
    if isinstance(j, bool) or not isinstance(j, int) or not 1 <= j <= MAX_CHAIN_LENGTH:
        raise AmortError(Code.CHAIN_FAIL, f"disclosed index {j!r} is outside 1..{MAX_CHAIN_LENGTH} (K_0 is the "
                         "public anchor)", field="Disclosure.j")


def step(key: bytes) -> bytes:
    """One step towards the anchor: K_{j-1} = SHA-256(dom ‖ K_j)."""
    return hashlib.sha256(CHAIN_DOMAIN + key).digest()


def walk(key: bytes, steps: int) -> bytes:
    """Hash ``key`` ``steps`` times towards the anchor."""
    for _ in range(steps):
        key = step(key)
    return key


class DisclosureChain:
    """K_0..K_L from a device-only seed K_L; only the device ever holds this object."""

    def __init__(self, seed: bytes, length: int) -> None:
        if len(seed) != 32 or not 1 <= length <= MAX_CHAIN_LENGTH:
            raise AmortError(Code.CHAIN_FAIL, f"chain needs a 32-octet seed and 1 <= length <= {MAX_CHAIN_LENGTH}",
                             field="seed")
        keys = [seed]
        for _ in range(length):
            keys.append(step(keys[-1]))
        self._keys = keys[::-1]  # _keys[j] = K_j
        self.length = length

    @property
    def anchor(self) -> bytes:
        return self._keys[0]

    def key(self, j: int) -> bytes:
        if not 0 <= j <= self.length:
            raise AmortError(Code.CHAIN_FAIL, f"report {j} is beyond the chain of {self.length}", field="j")
        return self._keys[j]


def verify_independent(anchor: bytes, j: int, key: bytes) -> None:
    """O(j): hash K_j back to K0 (CHAIN_FAIL if it does not land on the anchor, or j is not a key index)."""
    check_index(j)
    if walk(key, j) != anchor:
        raise AmortError(Code.CHAIN_FAIL, f"K_{j} does not hash back to the committed anchor K0", field="key")


class InOrderVerifier:
    """O(1) per key when keys arrive in order: advance from the last verified key instead of from K0."""

    def __init__(self, anchor: bytes) -> None:
        self.j = 0
        self.key = anchor

    def verify(self, j: int, key: bytes) -> None:
        check_index(j)
        if j <= self.j:
            verify_independent_from(self.key, self.j, j, key)
            return
        if walk(key, j - self.j) != self.key:
            raise AmortError(Code.CHAIN_FAIL, f"K_{j} does not hash back to verified K_{self.j}", field="key")
        self.j, self.key = j, key


def verify_independent_from(known: bytes, known_j: int, j: int, key: bytes) -> None:
    """A key at or before a verified position must be reachable from it: K_j = H^(known_j - j)(K_known)."""
    if j < 0 or walk(known, known_j - j) != key:
        raise AmortError(Code.CHAIN_FAIL, f"K_{j} is not on the verified chain", field="key")
