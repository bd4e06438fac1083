"""The one table of pqlab's pipeline stages: per stage its study module, ``pqlab`` command, notebook, metrics file,
kind and, for a measuring stage, its raw samples (:class:`RawSpec`, whose ``measure_<stage>`` writes them). dvc.yaml
is generated from it (:mod:`pqlab.pipeline.dvc_file`), the CLI's study commands come from it, and the report's stage
table (params/paper_reference.yaml), the session's smoke runs and the notebooks are checked against it
(tests/test_stage_registry.py), so no other list of stages is kept by hand."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pqlab.errors import RawSamplesError
from pqlab.paths import ProjectPaths

Kind = Literal["measurement", "simulation", "model", "data", "report"]


@dataclass(frozen=True)
class RawSpec:
    """What a measuring stage's ``measure_<stage>`` writes: its files (each with the columns its analysis reads), the
    params sections its measurement reads, and the keys of those sections that only the analysis reads. ``stage``
    and ``command`` are its Stage's (set by the Stage that holds it)."""

    files: dict[str, tuple[str, ...]]             # file name under data/raw -> columns the analysis needs
    sections: tuple[str, ...]                     # params sections the measurement reads (whole, minus below)
    analysis_keys: tuple[str, ...] = ()           # dotted keys (``costs.bootstrap_resamples``) only analysis reads
    stage: str = ""
    command: str = ""                             # ``pqlab <command> --measure-only``

    @property
    def measure_stage(self) -> str:
        return f"measure_{self.stage}"

    def raw_paths(self, paths: ProjectPaths) -> list[Path]:
        return [paths.raw / name for name in self.files]


@dataclass(frozen=True)
class Stage:
    """One study stage of dvc.yaml: ``pqlab.studies.<name>`` builds its outputs."""

    name: str
    command: str              # ``pqlab <command>``
    notebook: str | None      # ``notebooks/<notebook>.ipynb`` the pipeline runs; None: it runs ``command``
    metrics: str | None       # ``data/derived/<metrics>``; None: the stage writes no metrics file
    kind: Kind
    what: str                 # the papers' parts it rebuilds
    # the params a stage without raw samples reads: top-level keys and whole sections (a measuring stage's come from
    # its RawSpec); dvc.yaml sees them, with every default, through params/resolved.yaml (studies.resolve_params)
    reads: tuple[str, ...] = ()
    raw: RawSpec | None = field(default=None)  # a measuring stage's raw samples

    def __post_init__(self) -> None:
        if self.raw is not None:  # the spec names its own stage: one spelling, here
            object.__setattr__(self, "raw", replace(self.raw, stage=self.name, command=self.command))

    @property
    def measure_stage(self) -> str | None:
        """``measure_<name>`` when the stage analyses raw samples its own measurement stage writes."""
        return self.raw.measure_stage if self.raw else None


STAGES: tuple[Stage, ...] = (
    Stage("costs", "costs", "01_cost_characterisation", "costs_metrics.json", "measurement",
          "AMORT-V1 §V-C, Table I, Fig. 2",
          raw=RawSpec(
              {"costs.parquet": ("op_id", "operation", "frequency", "algorithm", "backend", "in_table1", "trial",
                                 "net_ns", "overhead_ns")},
              ("costs",), ("costs.bootstrap_resamples", "costs.confidence"))),
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
          "PQ-CASE §IV-C, §VI, Fig. 2, Table I's times",
          raw=RawSpec(
              {"thread_grid.parquet": ("point_id", "run"), "thread_grid_source_accurate.parquet": ("point_id", "run"),
               "thread_channel_rule.parquet": (), "thread_channel_rule_source_accurate.parquet": ()},
              ("thread", "inputs", "framing"), ("thread.bootstrap_resamples", "thread.confidence"))),
    Stage("recovery", "recovery", "09_recovery", "recovery_metrics.json", "measurement",
          "AMORT-V1 §IV-E, §V-H, Table IV",
          raw=RawSpec(
              {"recovery_trials.parquet": ("arm", "scenario", "killed_by_sigkill", "new_epoch", "stale_detected",
                                           "resume_rejected", "reissued", "skipped", "ready_ms", "spawn_to_ready_ms"),
               "recovery_restart.parquet": ("trial", "epoch", "interrupted", "kill_point", "lost",
                                            "err_evidence_incomplete", "restart_rate_refused"),
               "recovery_crashes.parquet": ("case", "killed_by_sigkill", "outcome", "fails_secure_or_resumes"),
               "recovery_reservations.parquet": ("arm", "increment_ms", "read_ms", "write_ms", "total_ms")},
              ("recovery",), ("recovery.sizing",))),
    Stage("control_cycle", "control-cycle", "10_control_cycle", "control_cycle_metrics.json", "measurement",
          "AMORT-V1 §V-G, Fig. 6",
          raw=RawSpec(
              {"control_cycle_samples.parquet": ("configuration", "cycle", "response_ns", "latency_ns", "execution_ns",
                                                 "evidence", "evidence_ns")},
              ("control_cycle",),
              ("control_cycle.deadline_us", "control_cycle.bootstrap_resamples", "control_cycle.confidence"))),
    Stage("image_tree", "image-tree", None, None, "data", "AMORT-V1 §V-I: the firmware image Table V reads",
          ("seed", "image_tree")),
    Stage("full_image", "full-image", "11_full_image", "full_image_metrics.json", "measurement",
          "AMORT-V1 §V-I, Table V",
          raw=RawSpec(
              {"full_image_samples.parquet": ("condition", "repetition", "seconds", "octets", "files", "pages",
                                              "digest", "resident_before", "resident_after_eviction",
                                              "files_still_resident", "resident_after_read"),
               "full_image_evictions.parquet": ("repetition",)},
              ("full_image",), ("full_image.reference_operation",))),
    Stage("scaling", "scaling", "07_scaling", "scaling_metrics.json", "measurement",
          "AMORT-V1 §V-E, §V-H, Table III",
          raw=RawSpec(
              {"scaling_rounds.parquet": ("identities", "trial"),
               "scaling_trials.parquet": ("identities", "trial", "us_per_report", "signature_octets",
                                          "checkpoint_octets", "verify_ms"),
               "scaling_rekey.parquet": ("identities", "rekey_us", "open_epoch_us", "confirm_us"),
               "scaling_replay.parquet": ("backlog", "trial", "merge_ns", "total_ns", "one_window"),
               "scaling_isolation.parquet": ("identities", "others", "others_attesting", "rekeyed")},
              ("scaling", "amort"),
              ("scaling.size_budget_octets", "scaling.bootstrap_resamples", "scaling.confidence"))),
    Stage("device_origin", "device-origin", "08_device_origin", "device_origin_metrics.json", "measurement",
          "AMORT-V1 §V-F, Fig. 5",
          raw=RawSpec(
              {"device_origin_auditor.parquet": ("k", "component", "us_per_report"),
               "device_origin_delays.parquet": ("k", "delay_records"),
               "device_origin_tags.parquet": ("tags", "us_per_report"),
               "device_origin_prover.parquet": ("one_tag_ns", "two_tag_ns"),
               "device_origin_chain_setup.parquet": ("chain_us_per_report",)},
              ("device_origin", "amort"), ("device_origin.report_rate_hz",))),
    Stage("amortisation", "amortisation", "06_amortisation", "amortisation_metrics.json", "measurement",
          "AMORT-V1 §V-D, Table II, Figs. 3-4",
          raw=RawSpec(
              {"amortisation_sweep.parquet": ("scheme", "label", "signer", "backend", "durable_log", "storage", "k",
                                              "trial", "reports", "total_ns", "ingest_ns", "body_ns", "sign_ns",
                                              "commit_ns", "write_ns", "checkpoint_octets"),
               "amortisation_path_probe.parquet": ("signer", "k", "trial", "path_ns"),
               "amortisation_fsync_probe.parquet": ("signer", "touched", "trial", "checkpoint_octets", "ns"),
               "amortisation_sign_probe.parquet": ("signer", "backend", "trial", "message_octets", "ns"),
               "amortisation_checkpoint_sizes.parquet": ("signer", "touched", "checkpoint_octets"),
               "amortisation_sweep_plan.parquet": ("trial", "scheme", "k", "checkpoints", "target_half_width_pct",
                                                   "half_width_pct"),
               "amortisation_sensitivity_probe.parquet": ("combo", "signer", "backend", "storage", "c_sign_us",
                                                          "c_fsync_us"),
               "amortisation_sensitivity_sweep.parquet": ("scheme", "k", "trial", "reports", "total_ns"),
               "amortisation_omission.parquet": ("strategy", "k", "exposed", "delay_records",
                                                 "checkpoints_until_exposed", "check"),
               "amortisation_equivocation.parquet": ("exposed", "exposed_by_gossip", "view_a_valid_alone",
                                                     "view_b_valid_alone", "variant")},
              ("amortisation", "amort"),
              ("amortisation.bootstrap_resamples", "amortisation.model_inputs", "amortisation.rates"))),
    Stage("sensitivity", "sensitivity", "12_sensitivity", "sensitivity_metrics.json", "simulation",
          "PQ-CASE §VII, Figs. 4-5",
          raw=RawSpec(
              {"sensitivity_runs.parquet": ("point_id", "run")},
              ("sensitivity", "thread", "inputs", "framing"),
              ("sensitivity.success_threshold", "sensitivity.report", "thread.bootstrap_resamples",
               "thread.confidence"))),
    Stage("assumptions", "assumptions", "13_assumptions", "assumptions_metrics.json", "simulation",
          "beyond PQ-CASE: §VI's unstated assumptions and the slack bound",
          raw=RawSpec(
              {"assumptions_runs.parquet": ("point_id", "run")},
              ("assumptions", "thread", "inputs", "framing"),
              ("assumptions.bound_hops", "assumptions.count_tail", "thread.bootstrap_resamples", "thread.confidence"))),
    Stage("transport_crosscheck", "transport-crosscheck", "16_transport_crosscheck",
          "crosscheck_metrics.json", "simulation",
          "beyond PQ-CASE: the Thread transport simulator against ns-3 (lr-wpan, sixlowpan)",
          raw=RawSpec(
              {"crosscheck_runs.parquet": ("simulator", "kind", "config", "role", "hops", "loss", "transport",
                                           "topology", "message", "run", "ok", "time_us", "failed_message",
                                           "retransmissions", "spurious", "frames"),
               "crosscheck_ns3_used.parquet": ("key", "value")},
              ("transport_crosscheck", "thread", "inputs", "framing"),
              ("transport_crosscheck.agreement_pct", "transport_crosscheck.chunk_runs", "thread.bootstrap_resamples",
               "thread.confidence"))),
    Stage("report", "report", None, None, "report", "both papers: REPORT.md and report_rows.csv"),
)
BY_NAME: dict[str, Stage] = {stage.name: stage for stage in STAGES}
MEASURING: dict[str, RawSpec] = {stage.name: stage.raw for stage in STAGES if stage.raw}  # measuring stages


RESOLVE_STAGE = "resolve_params"  # dvc.yaml's first stage: params/resolved.yaml (pqlab.studies.resolve_params)


def pipeline_stage_names() -> list[str]:
    """Every stage dvc.yaml must hold: the parameters resolved first, then each study, a measuring stage's
    ``measure_<stage>`` just before it."""
    return [RESOLVE_STAGE, *(name for stage in STAGES for name in (stage.measure_stage, stage.name) if name)]


def raw_spec(stage: str) -> RawSpec:
    """The raw-sample spec of a measuring stage (RawSamplesError for any other stage)."""
    try:
        return MEASURING[stage]
    except KeyError:
        raise RawSamplesError(f"{stage!r} is not a measuring stage (measuring stages: {', '.join(MEASURING)})",
                              field="stage") from None
