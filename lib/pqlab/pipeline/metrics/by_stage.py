"""Each stage's typed metrics model by stage name: the report's static view of every metrics file it reads."""

from __future__ import annotations

from pqlab.pipeline.metrics.amortisation import AmortisationMetrics
from pqlab.pipeline.metrics.assumptions import AssumptionsMetrics
from pqlab.pipeline.metrics.attack_matrix import AttackMatrixMetrics
from pqlab.pipeline.metrics.case_sizes import CaseSizesMetrics
from pqlab.pipeline.metrics.control_cycle import ControlCycleMetrics
from pqlab.pipeline.metrics.costs import CostsMetrics
from pqlab.pipeline.metrics.design_space import DesignSpaceMetrics
from pqlab.pipeline.metrics.device_origin import DeviceOriginMetrics
from pqlab.pipeline.metrics.extended_design_space import ExtendedDesignSpaceMetrics
from pqlab.pipeline.metrics.full_image import FullImageMetrics
from pqlab.pipeline.metrics.recovery import RecoveryMetrics
from pqlab.pipeline.metrics.scaling import ScalingMetrics
from pqlab.pipeline.metrics.sensitivity import SensitivityMetrics
from pqlab.pipeline.metrics.transport import TransportMetrics
from pqlab.pipeline.metrics.transport_crosscheck import CrosscheckMetrics
from pqlab.pipeline.typed_metrics import StageMetrics

MODELS: dict[str, type[StageMetrics]] = {
    "amortisation": AmortisationMetrics,
    "assumptions": AssumptionsMetrics,
    "attack_matrix": AttackMatrixMetrics,
    "case_sizes": CaseSizesMetrics,
    "control_cycle": ControlCycleMetrics,
    "costs": CostsMetrics,
    "design_space": DesignSpaceMetrics,
    "device_origin": DeviceOriginMetrics,
    "extended_design_space": ExtendedDesignSpaceMetrics,
    "full_image": FullImageMetrics,
    "recovery": RecoveryMetrics,
    "scaling": ScalingMetrics,
    "sensitivity": SensitivityMetrics,
    "transport": TransportMetrics,
    "transport_crosscheck": CrosscheckMetrics,
}


def stage_model(stage: str) -> type[StageMetrics] | None:
    """The typed metrics model of ``stage`` (None: the stage writes no metrics file)."""
    return MODELS.get(stage)
