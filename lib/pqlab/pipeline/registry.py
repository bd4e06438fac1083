"""The one table of pqlab's pipeline stages: per stage its study module, ``pqlab`` command, notebook, metrics file,
kind and, for a measuring stage, its raw samples (:class:`RawSpec`, whose ``measure_<stage>`` writes them). dvc.yaml
is generated from it (:mod:`pqlab.pipeline.dvc_file`), the CLI's study commands come from it, and the report's stage
table (params/paper_reference.yaml), the session's smoke runs and the notebooks are checked against it
(tests/test_stage_registry.py), so no other list of stages is kept by hand."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pqlab.errors import RawSamplesError

if TYPE_CHECKING:  # the CLI builds its parser from this table: nothing heavy at import
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
    desc: str = ""                                # dvc.yaml's desc of ``measure_<stage>``
    packages: tuple[str, ...] = ("params",)       # see Stage.packages
    inputs: tuple[str, ...] = ()                  # see Stage.inputs
    stage: str = ""
    command: str = ""                             # ``pqlab <command> --measure-only``

    @property
    def measure_stage(self) -> str:
        return f"measure_{self.stage}"

    def raw_paths(self, paths: ProjectPaths) -> list[Path]:
        return [paths.raw / name for name in self.files]


@dataclass(frozen=True)
class Option:
    """A study command's option of its own (a string value; :mod:`pqlab.cli_studies` says what it does)."""

    flag: str
    help: str

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


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
    desc: str = ""            # dvc.yaml's desc
    # dvc.yaml's deps beyond the study's import closure (pqlab.pipeline.import_closure), its notebook and raw files:
    # packages under lib/pqlab it depends on whole (backends loaded by name, C sources), and other files it reads
    packages: tuple[str, ...] = ("params",)
    inputs: tuple[str, ...] = ()
    # what it writes besides its notebook's copy and metrics files: cached outs (``stem.{csv,md}`` for both files)
    # and outs DVC must not cache
    outs: tuple[str, ...] = ()
    uncached: tuple[str, ...] = ()
    run_args: str = ""        # a stage without a notebook runs ``pqlab <command> <run_args>``
    # its ``pqlab <command>``: help, the --quiet option's help (None: no such option), the run options the simulator
    # grid's --workers / --scheduler feed (none: no grid options), and options of its own (pqlab.cli_studies)
    help: str = ""
    quiet: str | None = "no progress bar"
    grid: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
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
          desc="AMORT-V1 §V-C from measure_costs' raw samples: Table I, Fig. 2, backend comparison "
               "(pqlab.studies.costs)",
          packages=("params", "crypto"),
          outs=("data/derived/costs_stats.parquet", "data/derived/costs_backend_comparison.parquet",
                "paper_figs/amort/table1_costs.{csv,md}", "paper_figs/amort/table1_backend_comparison.{csv,md}",
                "paper_figs/amort/fig2_costs.{pdf,png}"),
          help="run the AMORT-V1 cost characterisation (Table I, Fig. 2)",
          raw=RawSpec(
              {"costs.parquet": ("op_id", "operation", "frequency", "algorithm", "backend", "in_table1", "trial",
                                 "net_ns", "overhead_ns")},
              ("costs",), ("costs.bootstrap_resamples", "costs.confidence"),
              desc="AMORT-V1 §V-C: time every protocol operation; only the raw samples "
                   "(pqlab.studies.measure_costs)",
              packages=("params", "crypto"),
              inputs=("lib/pqlab/experiments/symmetric/_symmetric.c", "lib/pqlab/experiments/symmetric/sym_timing.c",
                      "lib/pqlab/experiments/symmetric/sym_timing.h", "lib/pqlab/include/pqlab_binding.h",
                      "lib/pqlab/amort/fastpath/native/_amort_native.c", "lib/pqlab/amort/fastpath/native/amort_core.c",
                      "lib/pqlab/amort/fastpath/native/amort_core.h"))),
    Stage("attack_matrix", "attacks", "02_attack_matrix", "attack_matrix_metrics.json", "model",
          "AMORT-V1 Appendix A, Table VI, and the attacks beyond it", ("profile", "seed", "attack_matrix", "amort"),
          desc="AMORT-V1 Appendix A: the 27-case attack matrix and positive controls (Table VI), plus extra "
               "cases (pqlab.studies.attack_matrix)",
          packages=("params", "amort", "crypto"),
          outs=("data/raw/attack_matrix_runs.parquet", "data/raw/hardening_cost_samples.parquet",
                "paper_figs/amort/table6_attack_matrix.{csv,md}", "paper_figs/amort/attack_matrix_extra.{csv,md}",
                "paper_figs/amort/attack_matrix_variants.{csv,md}", "paper_figs/amort/hardening_cost.{csv,md}",
                "paper_figs/amort/attack_matrix_overview.{pdf,png}",
                "paper_figs/amort/attack_matrix_variants.{pdf,png}"),
          help="run the AMORT-V1 attack matrix (Table VI and extra cases)",
          quiet=None),
    Stage("case_sizes", "case-sizes", "03_case_sizes", "case_sizes_metrics.json", "model",
          "PQ-CASE §V, Table I, Fig. 1", ("profile", "seed", "case_sizes", "framing"),
          desc="PQ-CASE §IV-A/§V: byte-exact CASE sizes — Table I payload columns, Fig. 1, resumption "
               "(pqlab.studies.case_sizes)",
          packages=("params", "case", "crypto"),
          outs=("data/derived/case_sizes.parquet", "paper_figs/case/table1_case_sizes.{csv,md}",
                "paper_figs/case/table1_case_breakdown.{csv,md}", "paper_figs/case/resumption_sizes.{csv,md}",
                "paper_figs/case/fig1_case_sizes.{pdf,png}"),
          help="run the PQ-CASE size model (Table I payload columns, Fig. 1)",
          quiet=None),
    Stage("design_space", "design-space", "04_design_space", "design_space_metrics.json", "model",
          "PQ-CASE §VIII, Fig. 6", ("profile", "seed", "design_space", "inputs", "framing"),
          desc="PQ-CASE §IV-B/§VIII: 3,780-point design space, Device PQ column, fit and Pareto results, Fig. 6 "
               "(pqlab.studies.design_space)",
          packages=("params", "case", "crypto"),
          inputs=("params/pqm4_cycles.yaml",),
          outs=("data/derived/design_space.parquet", "paper_figs/case/table1_device_pq.{csv,md}",
                "paper_figs/case/design_space_pareto.{csv,md}", "paper_figs/case/design_space_fits.md",
                "paper_figs/case/fig6_design_space.{pdf,png}", "data/derived/plots/design_space_points.csv"),
          help="run the PQ-CASE design space (Fig. 6, Device PQ, Pareto fronts)",
          quiet=None),
    Stage("extended_design_space", "extended-design-space", "14_extended_design_space",
          "extended_design_space_metrics.json", "model", "beyond PQ-CASE: the design space with more algorithms",
          ("profile", "seed", "extended_design_space", "design_space", "inputs", "framing"),
          desc="Beyond PQ-CASE §VIII: the design space with HQC and round-2 signatures added, which new points "
               "enter the Pareto fronts, new fits (pqlab.studies.extended_design_space)",
          packages=("params", "case", "crypto"),
          inputs=("params/pqm4_cycles.yaml", "params/pqm4_implementations.yaml"),
          outs=("data/derived/extended_design_space.parquet", "paper_figs/case/extended_design_space_pareto.{csv,md}",
                "paper_figs/case/extended_design_space_displaced.{csv,md}",
                "paper_figs/case/extended_design_space_fits.{csv,md}",
                "paper_figs/case/extended_design_space_unranked.{csv,md}",
                "paper_figs/case/fig_extended_design_space.{pdf,png}"),
          help="the design space with newer algorithms: fronts, what enters them, new fits (beyond PQ-CASE §VIII)"),
    Stage("transport", "transport", "05_transport", "transport_metrics.json", "simulation",
          "PQ-CASE §IV-C, §VI, Fig. 2, Table I's times",
          desc="PQ-CASE §IV-C/§VI: Thread transport grid (paper model + source_accurate), Fig. 2, Table I times, "
               "SED failures, radio time (pqlab.studies.transport)",
          packages=("params", "transport"),
          inputs=("params/pqm4_cycles.yaml",),
          outs=("data/derived/transport_summary.parquet", "data/derived/transport_summary_source_accurate.parquet",
                "paper_figs/case/fig2_transport.{pdf,png}", "paper_figs/case/table1_case_times.{csv,md}",
                "paper_figs/case/sed_failures.csv", "paper_figs/case/radio_time.csv",
                "data/derived/plots/fig2_transport_times.csv", "data/derived/plots/fig2_transport_spurious.csv"),
          help="run the PQ-CASE Thread transport grid (Fig. 2, Table I times)",
          grid=("workers", "scheduler"),
          options=(Option("--configs", "YAML/JSON: name -> {sizes: [Sigma1, Sigma2, "
                                       "Sigma3, status], device_compute_ms: [before Sigma2, before the status "
                                       "report]} (default: transport.configurations from Table I, sizes from the CASE "
                                       "size model)"),),
          raw=RawSpec(
              {"transport_grid.parquet": ("point_id", "run"),
               "transport_grid_source_accurate.parquet": ("point_id", "run"),
               "transport_channel_rule.parquet": (), "transport_channel_rule_source_accurate.parquet": ()},
              ("transport", "inputs", "framing"), ("transport.bootstrap_resamples", "transport.confidence"),
              desc="PQ-CASE §IV-C/§VI: the measurement only, its raw samples (pqlab.studies.measure_transport)",
              packages=("case", "crypto", "params", "transport"),
              inputs=("params/pqm4_cycles.yaml",))),
    Stage("recovery", "recovery", "09_recovery", "recovery_metrics.json", "measurement",
          "AMORT-V1 §IV-E, §V-H, Table IV",
          desc="AMORT-V1 §IV-E, §V-H: restart and rollback with a real TPM 2.0 (swtpm by default) — Table IV, "
               "restart loss, crash injection, reservation cost (pqlab.studies.recovery)",
          packages=("params",),
          outs=("paper_figs/amort/table4_recovery.{csv,md}", "paper_figs/amort/recovery_restart.{csv,md}",
                "paper_figs/amort/recovery_crash_injection.{csv,md}", "paper_figs/amort/fig_recovery.{pdf,png}"),
          help="run AMORT-V1 restart/rollback recovery with a real TPM 2.0 (Table IV)",
          raw=RawSpec(
              {"recovery_trials.parquet": ("arm", "scenario", "killed_by_sigkill", "new_epoch", "stale_detected",
                                           "resume_rejected", "reissued", "skipped", "ready_ms", "spawn_to_ready_ms"),
               "recovery_restart.parquet": ("trial", "epoch", "interrupted", "kill_point", "lost",
                                            "err_evidence_incomplete", "restart_rate_refused"),
               "recovery_crashes.parquet": ("case", "killed_by_sigkill", "outcome", "fails_secure_or_resumes"),
               "recovery_reservations.parquet": ("arm", "increment_ms", "read_ms", "write_ms", "total_ms")},
              ("recovery",), ("recovery.sizing",),
              desc="AMORT-V1 §IV-E/§V-H: the measurement only, its raw samples (pqlab.studies.measure_recovery)",
              packages=("amort", "crypto", "params"))),
    Stage("control_cycle", "control-cycle", "10_control_cycle", "control_cycle_metrics.json", "measurement",
          "AMORT-V1 §V-G, Fig. 6",
          desc="AMORT-V1 §V-G: scan response time on one pinned core in seven configurations, Fig. 6 — a Linux "
               "host, not a PLC (pqlab.studies.control_cycle)",
          packages=("params",),
          outs=("data/derived/control_cycle_summary.parquet", "paper_figs/amort/fig6_scan.{pdf,png}",
                "paper_figs/amort/fig6_scan_summary.{csv,md}", "paper_figs/amort/control_cycle_scan_cost.{csv,md}"),
          help="run the AMORT-V1 control-cycle harness (Fig. 6) on this host",
          raw=RawSpec(
              {"control_cycle_samples.parquet": ("configuration", "cycle", "response_ns", "latency_ns", "execution_ns",
                                                 "evidence", "evidence_ns")},
              ("control_cycle",),
              ("control_cycle.deadline_us", "control_cycle.bootstrap_resamples", "control_cycle.confidence"),
              desc="AMORT-V1 §V-G: the measurement only, its raw samples (pqlab.studies.measure_control_cycle)",
              packages=("crypto", "params", "experiments/cycle"),
              inputs=("lib/pqlab/include/pqlab_binding.h", "lib/pqlab/amort/fastpath/native/amort_core.c",
                      "lib/pqlab/amort/fastpath/native/amort_core.h", "lib/pqlab/experiments/signing_load.py"))),
    Stage("image_tree", "image-tree", None, None, "data", "AMORT-V1 §V-I: the firmware image Table V reads",
          ("seed", "image_tree"),
          desc="AMORT-V1 §V-I: a synthetic image with the paper's OpenPLC shape (6,239 files, 355 MB, seeded "
               "lognormal sizes) under data/raw/image_tree/ (pqlab.studies.image_tree)",
          packages=("params",),
          outs=("data/raw/image_tree", "data/raw/image_tree_manifest.parquet"),
          run_args="--params params/params.yaml --quiet",
          help="generate data/raw/image_tree/ with the paper's image shape (§V-I)"),
    Stage("full_image", "full-image", "11_full_image", "full_image_metrics.json", "measurement",
          "AMORT-V1 §V-I, Table V",
          desc="AMORT-V1 §V-I: warm- and cold-cache full-image measurement, eviction verified with mincore, "
               "Table V (pqlab.studies.full_image)",
          packages=("params",),
          inputs=("data/derived/costs_metrics.json",),
          outs=("paper_figs/amort/table5_image.{csv,md}", "paper_figs/amort/full_image_times.{pdf,png}"),
          help="measure a software image warm and cold (AMORT-V1 Table V)",
          options=(Option("--image-dir", "measure this directory instead of "
                                         "full_image.image_dir"),),
          raw=RawSpec(
              {"full_image_samples.parquet": ("condition", "repetition", "seconds", "octets", "files", "pages",
                                              "digest", "resident_before", "resident_after_eviction",
                                              "files_still_resident", "resident_after_read"),
               "full_image_evictions.parquet": ("repetition",)},
              ("full_image",), ("full_image.reference_operation",),
              desc="AMORT-V1 §V-I: the measurement only, its raw samples (pqlab.studies.measure_full_image)",
              packages=("params",),
              inputs=("data/raw/image_tree",))),
    Stage("scaling", "scaling", "07_scaling", "scaling_metrics.json", "measurement",
          "AMORT-V1 §V-E, §V-H, Table III",
          desc="AMORT-V1 §V-E/§V-H: controller scaling to 100,000 identities (Table III), isolation, re-keying, "
               "partition replay (pqlab.studies.scaling)",
          packages=("amort", "experiments", "crypto", "params"),
          outs=("paper_figs/amort/table3_scaling.{csv,md}", "paper_figs/amort/isolation.{csv,md}",
                "paper_figs/amort/rekey_parts.{csv,md}", "paper_figs/amort/partition_replay.{csv,md}",
                "paper_figs/amort/checkpoint_budget.{csv,md}", "paper_figs/amort/fig_scaling.{pdf,png}"),
          help="run AMORT-V1 fleet scaling (Table III), isolation, re-keying and partition replay",
          raw=RawSpec(
              {"scaling_rounds.parquet": ("identities", "trial"),
               "scaling_trials.parquet": ("identities", "trial", "us_per_report", "signature_octets",
                                          "checkpoint_octets", "verify_ms"),
               "scaling_rekey.parquet": ("identities", "rekey_us", "open_epoch_us", "confirm_us"),
               "scaling_replay.parquet": ("backlog", "trial", "merge_ns", "total_ns", "one_window"),
               "scaling_isolation.parquet": ("identities", "others", "others_attesting", "rekeyed")},
              ("scaling", "amort"),
              ("scaling.size_budget_octets", "scaling.bootstrap_resamples", "scaling.confidence"),
              desc="AMORT-V1 §V-E/§V-H: the measurement only, its raw samples (pqlab.studies.measure_scaling)",
              packages=("amort", "experiments", "crypto", "params"),
              inputs=("lib/pqlab/stats.py",))),
    Stage("device_origin", "device-origin", "08_device_origin", "device_origin_metrics.json", "measurement",
          "AMORT-V1 §V-F, Fig. 5",
          desc="AMORT-V1 §V-F: cold-auditor cost per report by audit level and k (Fig. 5), one vs two tags, "
               "prover extra work, disclosure delay (pqlab.studies.device_origin)",
          packages=("params",),
          outs=("paper_figs/amort/device_origin_auditor.{csv,md}", "paper_figs/amort/device_origin_tags.{csv,md}",
                "paper_figs/amort/fig5_auditor.{pdf,png}"),
          help="run AMORT-V1 device-origin costs (Fig. 5, one vs two tags, prover extra work)",
          raw=RawSpec(
              {"device_origin_auditor.parquet": ("k", "component", "us_per_report"),
               "device_origin_delays.parquet": ("k", "delay_records"),
               "device_origin_tags.parquet": ("tags", "us_per_report"),
               "device_origin_prover.parquet": ("one_tag_ns", "two_tag_ns"),
               "device_origin_chain_setup.parquet": ("chain_us_per_report",)},
              ("device_origin", "amort"), ("device_origin.report_rate_hz",),
              desc="AMORT-V1 §V-F: the measurement only, its raw samples (pqlab.studies.measure_device_origin)",
              packages=("amort", "experiments", "crypto", "params"))),
    Stage("amortisation", "amortisation", "06_amortisation", "amortisation_metrics.json", "measurement",
          "AMORT-V1 §V-D, Table II, Figs. 3-4",
          desc="AMORT-V1 §V-D from measure_amortisation's raw samples: Eq. 1 vs the checkpoint-interval sweep "
               "(Table II, Fig. 3), omission and equivocation trials, cost-detection trade-off (Fig. 4), backend x "
               "storage sensitivity (pqlab.studies.amortisation)",
          packages=("amort", "crypto", "params"),
          inputs=("data/derived/costs_stats.parquet", "lib/pqlab/figures/interactive.py"),
          outs=("data/derived/amortisation_trials.parquet", "data/derived/amortisation_stats.parquet",
                "data/derived/amortisation_sensitivity.parquet",
                "data/derived/amortisation_sensitivity_points.parquet", "paper_figs/amort/table2_amortised.{csv,md}",
                "paper_figs/amort/amortisation_model.{csv,md}", "paper_figs/amort/amortisation_by_backend.{csv,md}",
                "paper_figs/amort/omission_detection.{csv,md}", "paper_figs/amort/fig3_amortisation.{pdf,png}",
                "paper_figs/amort/fig4_tradeoff.{pdf,png}", "paper_figs/amort/amortisation_sensitivity.{pdf,png}"),
          uncached=("data/derived/amortisation_curve.csv",),
          help="run the AMORT-V1 amortisation study (Eq. 1, Table II, Fig. 3, Fig. 4, omission and equivocation "
               "trials)",
          quiet="no progress bars",
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
              ("amortisation.bootstrap_resamples", "amortisation.model_inputs", "amortisation.rates"),
              desc="AMORT-V1 §V-D: the measurement only — the adaptive interval sweep with its path-terms "
                   "probes, omission and equivocation trials, backend x storage probe; its raw samples "
                   "(pqlab.studies.measure_amortisation)",
              packages=("amort", "experiments", "crypto", "params"),
              inputs=("lib/pqlab/stats.py",))),
    Stage("sensitivity", "sensitivity", "12_sensitivity", "sensitivity_metrics.json", "simulation",
          "PQ-CASE §VII, Figs. 4-5",
          desc="PQ-CASE §VII: transport sensitivity — Fig. 4 a-c (interference occupancy x burst, MRP timers) "
               "and Fig. 5 (segment size) (pqlab.studies.sensitivity)",
          packages=("case", "crypto", "params", "transport"),
          inputs=("params/pqm4_cycles.yaml",),
          outs=("data/derived/sensitivity_cells.parquet", "paper_figs/case/fig4_sensitivity.{pdf,png}",
                "paper_figs/case/fig5_segment_size.{pdf,png}", "paper_figs/case/fig4a_ipv6_block.{csv,md}",
                "paper_figs/case/fig4b_pull_block.{csv,md}", "paper_figs/case/fig4c_timers.{csv,md}",
                "paper_figs/case/fig5_segment_size.{csv,md}", "data/derived/plots/fig4ab_heatmaps.csv",
                "data/derived/plots/fig4c_timers.csv", "data/derived/plots/fig5_segment_size.csv"),
          help="run the PQ-CASE §VII sensitivity analyses (Fig. 4 a-c, Fig. 5)",
          grid=("workers", "scheduler"),
          raw=RawSpec(
              {"sensitivity_runs.parquet": ("point_id", "run")},
              ("sensitivity", "transport", "inputs", "framing"),
              ("sensitivity.success_threshold", "sensitivity.report", "transport.bootstrap_resamples",
               "transport.confidence"),
              desc="PQ-CASE §VII: the measurement only, its raw samples (pqlab.studies.measure_sensitivity)",
              packages=("case", "crypto", "params", "transport"),
              inputs=("params/pqm4_cycles.yaml",))),
    Stage("assumptions", "assumptions", "13_assumptions", "assumptions_metrics.json", "simulation",
          "beyond PQ-CASE: §VI's unstated assumptions and the slack bound",
          desc="Beyond the paper: transport headlines under each unstated assumption (channel rule x ACK loss, "
               "indirect retries, block timer) and the slack bound from Eq. 2's counts (pqlab.studies.assumptions)",
          packages=("case", "crypto", "params", "transport"),
          inputs=("params/pqm4_cycles.yaml",),
          outs=("paper_figs/case/assumptions_table.{csv,md}", "paper_figs/case/assumptions_slack_bound.{csv,md}",
                "paper_figs/case/fig_assumptions.{pdf,png}"),
          help="run the unstated-assumption study (channel rule, ACK loss, indirect retries, block timer) and "
               "the slack bound",
          grid=("workers", "scheduler"),
          raw=RawSpec(
              {"assumptions_runs.parquet": ("point_id", "run")},
              ("assumptions", "transport", "inputs", "framing"),
              ("assumptions.bound_hops", "assumptions.count_tail", "transport.bootstrap_resamples",
               "transport.confidence"),
              desc="Beyond the paper: the measurement only, its raw samples (pqlab.studies.measure_assumptions)",
              packages=("case", "crypto", "params", "transport"),
              inputs=("params/pqm4_cycles.yaml",))),
    Stage("transport_crosscheck", "transport-crosscheck", "16_transport_crosscheck",
          "transport_crosscheck_metrics.json", "simulation",
          "beyond PQ-CASE: the Thread transport simulator against ns-3 (lr-wpan, sixlowpan)",
          desc="Beyond the papers: pqlab's Thread transport against ns-3 (lr-wpan, sixlowpan): per scenario both "
               "medians, the ratio with its interval and the two-sample tests; loss-free transfer times; where they "
               "part (pqlab.studies.transport_crosscheck)",
          packages=("case", "crypto", "params", "transport"),
          outs=("paper_figs/case/crosscheck_scenarios.{csv,md}", "paper_figs/case/crosscheck_transfers.{csv,md}",
                "paper_figs/case/crosscheck_parameters.{csv,md}", "paper_figs/case/fig_transport_crosscheck.{pdf,png}"),
          help="run the Thread transport simulator beside ns-3 (lr-wpan, sixlowpan) on the same scenarios and "
               "params; needs Debian's libns3-dev",
          grid=("workers",),
          raw=RawSpec(
              {"transport_crosscheck_runs.parquet": ("simulator", "kind", "config", "role", "hops", "loss", "transport",
                                           "topology", "message", "run", "ok", "time_us", "failed_message",
                                           "retransmissions", "spurious", "frames"),
               "transport_crosscheck_ns3_used.parquet": ("key", "value")},
              ("transport_crosscheck", "transport", "inputs", "framing"),
              ("transport_crosscheck.agreement_pct", "transport_crosscheck.chunk_runs", "transport.bootstrap_resamples",
               "transport.confidence"),
              desc="Beyond the papers: the measurement only, both simulators' runs "
                   "(pqlab.studies.measure_transport_crosscheck; ns-3 from Debian's libns3-dev, its scenario program "
                   "built from lib/pqlab/crosscheck/ns3)",
              packages=("case", "crosscheck", "crypto", "params", "transport"),
              inputs=("params/pqm4_cycles.yaml",))),
    Stage("report", "report", None, None, "report", "both papers: REPORT.md and report_rows.csv",
          desc="paper_figs/REPORT.md and report_rows.csv: every published claim of both papers, judged by its "
               "kind against this run (pqlab.studies.report)",
          packages=("params", "report"),
          inputs=("params/paper_reference.yaml",),
          uncached=("paper_figs/REPORT.md", "paper_figs/report_rows.csv", "data/derived/report_run.json"),
          run_args="--root .",
          help="build paper_figs/REPORT.md from derived metrics"),
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
