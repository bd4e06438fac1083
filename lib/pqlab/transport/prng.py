"""The simulator's PRNG: xoshiro256** seeded by splitmix64 from (scenario hash, run index).

Both the C core and the Python twin implement exactly these functions, so a run's random
stream — and therefore its result — depends only on the scenario and the run index.
"""

from __future__ import annotations

import hashlib
import math

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(x: int) -> tuple[int, int]:
    """One splitmix64 step: returns (next state, output)."""
    x = (x + GOLDEN) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return x, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256:
    """xoshiro256** 1.0 (Blackman & Vigna) with the three draws the model uses."""

    def __init__(self, scenario_hash: int, run: int) -> None:
        x = (scenario_hash ^ ((run * GOLDEN) & MASK)) & MASK
        state = []
        for _ in range(4):
            x, out = splitmix64(x)
            state.append(out)
        self.s = state

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self) -> float:
        """A double in [0, 1) from the top 53 bits."""
        return (self.next_u64() >> 11) * (1.0 / 9007199254740992.0)

    def below(self, n: int) -> int:
        """An integer in {0, …, n−1} (modulo reduction; the bias is below 2^-50 for the n used here)."""
        return self.next_u64() % n

    def exponential_us(self, mean_us: float) -> int:
        """An exponential sojourn with the given mean, floored to whole microseconds, at least 1."""
        return max(1, math.floor(-mean_us * math.log(1.0 - self.uniform())))


def scenario_hash(key: str) -> int:
    """A stable 64-bit hash of a scenario's canonical description."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
