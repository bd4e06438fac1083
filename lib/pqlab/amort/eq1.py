"""AMORT-V1 Eq. 1 (§V-D): amortised cost per report, the symmetric floor, k*, the detection window, the trade-off.

    cost(k) = C_mac + C_leaf + (C_sign + C_fsync) / k          floor = C_mac + C_leaf
    k*      = (C_sign + C_fsync) / (C_mac + C_leaf)            (the amortised checkpoint cost equals the floor)
    W       = k / r                                             (an omission stays hidden at most W at rate r)

Pure arithmetic, no I/O: the inputs are measured medians the caller supplies (the ``amortisation`` study reads
them from the cost study's ``data/derived`` outputs). Every cost is in microseconds, rates in reports/s,
windows in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

SIGNATURE, WRITE = "signature", "durable write"


@dataclass(frozen=True)
class CostInputs:
    """The four cost classes of Eq. 1 for one scheme (µs); ``c_fsync`` is 0 when the deployment keeps no log."""

    c_mac: float
    c_leaf: float
    c_sign: float
    c_fsync: float = 0.0
    label: str = ""
    sources: dict[str, str] = field(default_factory=dict, compare=False)  # where each input was measured

    def __post_init__(self) -> None:
        for name in ("c_mac", "c_leaf", "c_sign", "c_fsync"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite cost >= 0 µs, got {value!r}")
        if self.c_mac + self.c_leaf <= 0:
            raise ValueError("c_mac + c_leaf must be > 0 µs (the floor divides k*)")

    @property
    def floor(self) -> float:
        """The symmetric per-report floor C_mac + C_leaf (µs)."""
        return self.c_mac + self.c_leaf

    @property
    def amortisable(self) -> float:
        """The per-checkpoint cost C_sign + C_fsync that Eq. 1 divides by k (µs)."""
        return self.c_sign + self.c_fsync


def cost(inputs: CostInputs, k: float | np.ndarray) -> float | np.ndarray:
    """Eq. 1: amortised controller cost per report (µs) at checkpoint interval ``k`` (scalar or array, k >= 1)."""
    ks = np.asarray(k, dtype=float)
    if np.any(~np.isfinite(ks)) or np.any(ks < 1):
        raise ValueError(f"checkpoint interval must be >= 1, got {k!r}")
    out = inputs.floor + inputs.amortisable / ks
    return float(out) if out.ndim == 0 else out


def floor(inputs: CostInputs) -> float:
    """The symmetric floor C_mac + C_leaf (µs): what cost(k) approaches as k grows."""
    return inputs.floor


def k_star(inputs: CostInputs) -> float:
    """k* = (C_sign + C_fsync) / (C_mac + C_leaf): where the amortised checkpoint cost equals the floor."""
    return inputs.amortisable / inputs.floor


def reduction(inputs: CostInputs, k_low: float = 1, k_high: float = 4096) -> float:
    """cost(k_low) / cost(k_high): the reduction factor Table II reports between its endpoints."""
    return cost(inputs, k_low) / cost(inputs, k_high)


def window(k: float | np.ndarray, rate: float) -> float | np.ndarray:
    """W = k / r: the longest an omission stays hidden at aggregate report rate ``rate`` (s)."""
    _check_rate(rate)
    ks = np.asarray(k, dtype=float)
    if np.any(ks < 1):
        raise ValueError(f"checkpoint interval must be >= 1, got {k!r}")
    out = ks / rate
    return float(out) if out.ndim == 0 else out


def shares(inputs: CostInputs) -> dict[str, float]:
    """Fractions of the amortisable cost due to the signature and to the durable write (they sum to 1)."""
    total = inputs.amortisable
    if total <= 0:
        raise ValueError("no amortisable cost: C_sign + C_fsync is 0")
    return {SIGNATURE: inputs.c_sign / total, WRITE: inputs.c_fsync / total}


def dominant(inputs: CostInputs) -> str:
    """Which term of the amortisable cost is larger: ``"signature"`` or ``"durable write"``."""
    split = shares(inputs)
    return SIGNATURE if split[SIGNATURE] >= split[WRITE] else WRITE


def _check_rate(rate: float) -> None:
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate <= 0:
        raise ValueError(f"report rate must be a finite number > 0 reports/s, got {rate!r}")


@dataclass(frozen=True)
class TradeOff:
    """One operating point: interval ``k``, window ``window_s`` at ``rate`` reports/s, and its Eq. 1 cost."""

    label: str
    rate: float
    k: int
    window_s: float
    cost_us: float
    floor_us: float
    k_star: float
    limited_by: str  # "window", "budget" or "k"

    @property
    def overhead_over_floor(self) -> float:
        """cost / floor - 1: how far above the symmetric floor this point sits."""
        return self.cost_us / self.floor_us - 1


def tradeoff(inputs: CostInputs, rate: float, *, window_s: float | None = None, budget_us: float | None = None,
             k: int | None = None) -> TradeOff:
    """The operating point for a fleet at ``rate`` reports/s given exactly one of:

    - ``window_s``: the longest acceptable detection window -> the largest k with k / rate <= window_s;
    - ``budget_us``: the highest acceptable cost per report -> the smallest k with cost(k) <= budget_us;
    - ``k``: a chosen interval.

    ValueError when none or several are given, or when no interval satisfies the request (a window shorter
    than one report, a budget at or below the symmetric floor).
    """
    _check_rate(rate)
    given = [name for name, value in (("window_s", window_s), ("budget_us", budget_us), ("k", k)) if value is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of window_s, budget_us, k (got {given or 'none'})")
    if window_s is not None:
        if not math.isfinite(window_s) or window_s <= 0:
            raise ValueError(f"window_s must be > 0 s, got {window_s!r}")
        chosen = math.floor(window_s * rate * (1 + 1e-12))  # k / rate <= window_s, tolerant of float rounding
        if chosen < 1:
            raise ValueError(f"a window of {window_s} s is shorter than one report at {rate} reports/s "
                             f"(k = 1 already gives {1 / rate:g} s)")
    elif budget_us is not None:
        if not math.isfinite(budget_us) or budget_us <= inputs.floor:
            raise ValueError(f"a budget of {budget_us} µs/report is not above the symmetric floor "
                             f"{inputs.floor:.4g} µs: no interval reaches it")
        chosen = max(1, math.ceil(inputs.amortisable / (budget_us - inputs.floor)))
        while chosen > 1 and cost(inputs, chosen - 1) <= budget_us:  # float rounding of the division
            chosen -= 1
        while cost(inputs, chosen) > budget_us:
            chosen += 1
    else:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        chosen = k
    return TradeOff(inputs.label, float(rate), int(chosen), window(chosen, rate), cost(inputs, chosen),
                    inputs.floor, k_star(inputs), {"window_s": "window", "budget_us": "budget", "k": "k"}[given[0]])


def model_curve(inputs: CostInputs, ks: np.ndarray | list[int]) -> np.ndarray:
    """Eq. 1 over ``ks`` (a convenience for tables and figures)."""
    return np.asarray(cost(inputs, np.asarray(ks, dtype=float)), dtype=float).reshape(-1)


def relative_errors(measured: np.ndarray, model: np.ndarray) -> np.ndarray:
    """|measured - model| / model, element-wise (the paper's model/measurement error)."""
    measured, model = np.asarray(measured, dtype=float), np.asarray(model, dtype=float)
    if measured.shape != model.shape:
        raise ValueError(f"shapes differ: measured {measured.shape}, model {model.shape}")
    if np.any(model <= 0):
        raise ValueError("model costs must be > 0")
    return np.abs(measured - model) / model
