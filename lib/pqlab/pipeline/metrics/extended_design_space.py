"""The extended_design_space stage's typed metrics model: what its study writes and the report reads."""

from __future__ import annotations

from pqlab.pipeline.typed_metrics import MetricsNode, StageMetrics


class Fits(MetricsNode):
    points: int
    new_points: int
    new_with_device_cost: int


class SmallestLargest(MetricsNode):
    paper: int
    all: int
    all_with_device_cost: int


class Entering(MetricsNode):
    total_kB: float
    device_ms: float | None
    key_exchange: str
    noc: str
    icac: str
    rcac: str
    mode: str
    family: str


class Front(MetricsNode):
    classes: int
    new_classes: int
    new_points: int
    displaced_paper_classes: int
    entering: list[Entering]


class ExtendedDesignSpaceMetrics(StageMetrics):
    """``extended_design_space_metrics.json``: the extended space's size, fits, smallest largest messages and the
    classes entering each Pareto front."""

    points: int
    paper_points: int
    new_points: int
    device_known_points: int
    fits: Fits
    smallest_largest_message: SmallestLargest
    fronts: dict[str, Front]
    unranked_classes: int
