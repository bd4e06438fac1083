"""The design_space stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, StageMetrics


class DevicePq(MetricsNode):
    ms: float


class SmallestLargest(MetricsNode):
    bytes: int
    points: int
    example: str


class Fits(MetricsNode):
    points: int
    key_exchanges: list[str]
    cached: list[str]
    noc: list[str]


class ParetoPoint(MetricsNode):
    total_kB: float
    device_ms: float
    points: int


class Dimensions(MetricsNode):
    key_exchange: int
    noc: int
    icac: int
    rcac: int
    mode: int


class DesignSpaceMetrics(StageMetrics):
    points: int
    distinct_points: int
    device_pq: dict[str, DevicePq]
    smallest_largest_message: dict[str, SmallestLargest]
    fits: Fits
    pareto: dict[str, dict[str, ParetoPoint]]
    dimensions: Dimensions
    pareto_members: dict[str, int]
    pareto_outlined: int
    fips_points_that_fit: int
    new_signature_points: int
    new_signature_dominated_fraction: float
    device_clock_mhz: float           # the responder's clock the pqm4 cycle counts are divided by
