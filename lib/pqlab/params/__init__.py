"""Study parameters: load ``params/params.yaml`` with its profile merged in and every field validated strictly.

The schema is :mod:`pqlab.params.schema` (its sections' models live beside the code that reads them: framing,
thread, case, amort, experiments); loading, profile merging and error locations are :mod:`pqlab.params.loader`;
finding ``params/params.yaml`` is :mod:`pqlab.paths`.
"""

from pqlab.amort.config import AmortParams
from pqlab.amort.recovery.config import RecoveryParams, RecoverySizingParams
from pqlab.case.config import DesignSpaceParams, ExtendedDesignSpaceParams
from pqlab.config import BackendChoice, Name, name_problem, read_table, read_yaml
from pqlab.framing import FramingParams
from pqlab.params.loader import dump_all, load, load_raw, resolve
from pqlab.params.measurement_sections import (
    AmortBaseline,
    AmortisationParams,
    AmortModelInputs,
    ControlCycleParams,
    CostsParams,
    CycleConfiguration,
)
from pqlab.params.schema import (
    AttackMatrixParams,
    CaseSizesParams,
    DeviceOriginParams,
    FullImageParams,
    ImageTreeParams,
    InputsParams,
    ScalingParams,
    StudyParams,
)
from pqlab.transport.config import LossScenario, TransportParams, TransportSwitches
from pqlab.transport.sweep_config import AssumptionsParams, SensitivityParams

__all__ = [
    "AmortBaseline", "AmortModelInputs", "AmortParams", "AmortisationParams", "AssumptionsParams",
    "AttackMatrixParams", "BackendChoice", "CaseSizesParams", "ControlCycleParams", "CostsParams",
    "CycleConfiguration", "DesignSpaceParams", "DeviceOriginParams", "ExtendedDesignSpaceParams", "FramingParams",
    "FullImageParams", "ImageTreeParams", "InputsParams", "LossScenario", "Name", "RecoveryParams",
    "RecoverySizingParams", "ScalingParams", "SensitivityParams", "StudyParams", "TransportParams", "TransportSwitches",
    "dump_all", "load", "load_raw", "name_problem", "read_table", "read_yaml", "resolve",
]
