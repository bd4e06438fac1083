"""The one list of pqlab's pipeline stages: per stage its study module, ``pqlab`` command, notebook, metrics file and
kind. A measuring stage's ``measure_<stage>`` comes from :data:`pqlab.studies.raw_samples.MEASURING`. dvc.yaml, the
report's stage table (params/paper_reference.yaml), the CLI, the session's smoke runs and the notebooks are checked
against it (tests/test_stage_registry.py), so no other list of stages is kept by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pqlab.studies.raw_samples import MEASURING

Kind = Literal["measurement", "simulation", "model", "data", "report"]


@dataclass(frozen=True)
class Stage:
    """One stage of dvc.yaml: ``pqlab.studies.<name>`` builds its outputs."""

    name: str
    command: str              # ``pqlab <command>``
    notebook: str | None      # ``notebooks/<notebook>.ipynb`` the pipeline runs; None: it runs ``command``
    metrics: str | None       # ``data/derived/<metrics>``; None: the stage writes no metrics file
    kind: Kind
    what: str                 # the papers' parts it rebuilds
    # the params a stage without raw samples reads: top-level keys and whole sections (a measuring stage's come from
    # its RawSpec); dvc.yaml sees them, with every default, through params/resolved.yaml (studies.resolve_params)
    reads: tuple[str, ...] = ()

    @property
    def measure_stage(self) -> str | None:
        """``measure_<name>`` when the stage analyses raw samples its own measurement stage writes."""
        return MEASURING[self.name].measure_stage if self.name in MEASURING else None


STAGES: tuple[Stage, ...] = (
    Stage("costs", "costs", "01_cost_characterisation", "costs_metrics.json", "measurement",
          "AMORT-V1 §V-C, Table I, Fig. 2"),
    Stage("attack_matrix", "attacks", "02_attack_matrix", "attack_matrix_metrics.json", "model",
          "AMORT-V1 Appendix A, Table VI, and the attacks beyond it", ("profile", "seed", "attack_matrix", "amort")),
    Stage("case_sizes", "case-sizes", "03_case_sizes", "case_sizes_metrics.json", "model",
          "PQ-CASE §V, Table I, Fig. 1", ("profile", "seed", "case_sizes", "framing")),
    Stage("design_space", "design-space", "04_design_space", "design_space_metrics.json", "model",
          "PQ-CASE §VIII, Fig. 6", ("profile", "seed", "design_space", "inputs", "framing")),
    Stage("extended_design_space", "extended-design-space", "14_extended_design_space",
          "extended_design_space_metrics.json", "model", "beyond PQ-CASE: the design space with more algorithms",
          ("profile", "seed", "extended_design_space", "design_space", "inputs", "framing")),
    Stage("transport", "transport", "05_transport", "thread_metrics.json", "simulation",
          "PQ-CASE §IV-C, §VI, Fig. 2, Table I's times"),
    Stage("recovery", "recovery", "09_recovery", "recovery_metrics.json", "measurement",
          "AMORT-V1 §IV-E, §V-H, Table IV"),
    Stage("control_cycle", "control-cycle", "10_control_cycle", "control_cycle_metrics.json", "measurement",
          "AMORT-V1 §V-G, Fig. 6"),
    Stage("image_tree", "image-tree", None, None, "data", "AMORT-V1 §V-I: the firmware image Table V reads",
          ("seed", "image_tree")),
    Stage("full_image", "full-image", "11_full_image", "full_image_metrics.json", "measurement",
          "AMORT-V1 §V-I, Table V"),
    Stage("scaling", "scaling", "07_scaling", "scaling_metrics.json", "measurement",
          "AMORT-V1 §V-E, §V-H, Table III"),
    Stage("device_origin", "device-origin", "08_device_origin", "device_origin_metrics.json", "measurement",
          "AMORT-V1 §V-F, Fig. 5"),
    Stage("amortisation", "amortisation", "06_amortisation", "amortisation_metrics.json", "measurement",
          "AMORT-V1 §V-D, Table II, Figs. 3-4"),
    Stage("sensitivity", "sensitivity", "12_sensitivity", "sensitivity_metrics.json", "simulation",
          "PQ-CASE §VII, Figs. 4-5"),
    Stage("assumptions", "assumptions", "13_assumptions", "assumptions_metrics.json", "simulation",
          "beyond PQ-CASE: §VI's unstated assumptions and the slack bound"),
    Stage("transport_crosscheck", "transport-crosscheck", "16_transport_crosscheck",
          "crosscheck_metrics.json", "simulation",
          "beyond PQ-CASE: the Thread transport simulator against ns-3 (lr-wpan, sixlowpan)"),
    Stage("report", "report", None, None, "report", "both papers: REPORT.md and report_rows.csv"),
)
BY_NAME: dict[str, Stage] = {stage.name: stage for stage in STAGES}


RESOLVE_STAGE = "resolve_params"  # dvc.yaml's first stage: params/resolved.yaml (pqlab.studies.resolve_params)


def pipeline_stage_names() -> list[str]:
    """Every stage dvc.yaml must hold: the parameters resolved first, then each study, a measuring stage's
    ``measure_<stage>`` just before it."""
    return [RESOLVE_STAGE, *(name for stage in STAGES for name in (stage.measure_stage, stage.name) if name)]
