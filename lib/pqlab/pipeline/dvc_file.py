"""dvc.yaml written from the stage registry: per stage its cmd, desc, deps (notebook, raw files, inputs, import
closure), params block, outs and metrics; ``pqlab pipeline --write-dvc`` writes it, ``--check`` compares."""

from __future__ import annotations

import json
from pathlib import Path

from pqlab.pipeline.import_closure import LIB, closure
from pqlab.pipeline.registry import RESOLVE_STAGE, STAGES, RawSpec, Stage

HEADER = """\
# The pipeline: each study is a notebook run headless by `pqlab papermill` (papermill with the execution timeout
# `execution_timeout_s`; any failure is one line on stderr) with only the params file (its profile and path become
# the notebook's parameters); the library (pqlab.studies.<stage>) loads and validates everything else.
#   make repro                                         # default profile (quick); `dvc repro` works the same
#   edit `profile: paper` in params/params.yaml        # the papers' sample sizes
# DVC never parses params/params.yaml: the first stage, resolve_params, validates it with pqlab's bounded parser and
# writes params/resolved.yaml, per stage every parameter it reads with every default (pqlab.studies.resolve_params);
# each stage lists only its own block of that file, so any value set for the first time reruns exactly the stages
# that read it. Each stage depends on the pqlab modules its study imports (its import closure).
# Generated from the stage registry (pqlab.pipeline.registry) by `pqlab pipeline --write-dvc`; edit the registry, not
# this file (`pqlab pipeline --check` says when it is stale).
"""

# `dvc plots show`: drawn from the small CSVs the stages write (not stage data, so kept here as written)
PLOTS = """\
# `dvc plots show` renders the amortisation curve (AMORT-V1 Fig. 3 data): measured and Eq. 1, log10 µs per report
# against log2 k, one line per baseline. The PDF/PNG figure is paper_figs/amort/fig3_amortisation.
# The PQ-CASE curves from the small CSVs the stages write;
# .dvc/plots/heatmap.json draws Fig. 4a/b as heat maps with the ratio in each cell.
plots:
  - amortisation_curve:
      template: linear
      x: log2_k
      y:
        data/derived/amortisation_curve.csv:
          - mldsa_nolog_measured_log10_us
          - mldsa_nolog_model_log10_us
          - mldsa_log_measured_log10_us
          - mldsa_log_model_log10_us
          - slhdsa_log_measured_log10_us
          - slhdsa_log_model_log10_us
      title: "AMORT-V1 Fig. 3: amortised cost per report, measured vs Eq. 1"
      x_label: "log2 checkpoint interval k"
      y_label: "log10 µs per report"
  - fig2_handshake_time:
      title: "Fig. 2a/b: median handshake time [s] under interference, always-on device"
      template: .dvc/plots/series.json
      x: hops
      y:
        data/derived/plots/fig2_transport_times.csv: median_s
      x_label: Thread hops
      y_label: Handshake time [s]
  - fig2_spurious:
      title: "Fig. 2c: spurious retransmissions per drop-in handshake, IPv6 fragmentation"
      template: .dvc/plots/series.json
      x: hops
      y:
        data/derived/plots/fig2_transport_spurious.csv: mean_spurious
      x_label: Thread hops
      y_label: Spurious retransmissions
  - fig6_design_space:
      title: "Fig. 6: handshake bytes against responder PQ computation (3,780 points)"
      template: scatter
      x: device_ms
      y:
        data/derived/plots/design_space_points.csv: total_bytes
      x_label: Responder PQ computation [ms at 64 MHz]
      y_label: Handshake bytes
  - fig4ab_sensitivity:
      title: "Fig. 4a/b: median time ratio to block transfer (* success below the threshold, failure rate)"
      template: .dvc/plots/heatmap.json
      x: burst_ms
      y:
        data/derived/plots/fig4ab_heatmaps.csv: occupancy_pct
      x_label: Mean burst length [ms]
      y_label: Time in interference burst [%]
  - fig4c_timers:
      title: "Fig. 4c: IPv6 / block under interference, by controller interval and device boost"
      template: .dvc/plots/series.json
      x: hops
      y:
        data/derived/plots/fig4c_timers.csv: ratio
      x_label: Thread hops
      y_label: Median time ratio to block
  - fig5_segment_size:
      title: "Fig. 5: pull segmentation, time relative to the reference segment size"
      template: .dvc/plots/series.json
      x: segment_payload
      y:
        data/derived/plots/fig5_segment_size.csv: relative
      x_label: Segment size [bytes]
      y_label: Time relative to the reference size
"""

RESOLVED = "params/resolved.yaml"
_METRICS_COMMENT = "# one narrow row per study in `dvc metrics show`; every number in {}"


def _expanded(paths: tuple[str, ...]) -> list[str]:
    """``stem.{csv,md}`` as its two files; any other path as it is."""
    out = []
    for path in paths:
        if path.endswith("}") and ".{" in path:
            stem, _, suffixes = path[:-1].partition(".{")
            out += [f"{stem}.{suffix}" for suffix in suffixes.split(",")]
        else:
            out.append(path)
    return out


def _lib_deps(module: str, packages: tuple[str, ...]) -> list[str]:
    """The import closure of ``module`` as repository paths, a package depended on whole as its folder."""
    whole = [f"lib/pqlab/{package}" for package in packages]
    files = sorted(str(path.relative_to(LIB.parent)) for path in closure(module))
    return whole + [path for path in files if not any(path.startswith(folder + "/") for folder in whole)]


def _entry(name: str, desc: str, cmd: str, deps: list[str], params: bool, outs: list[tuple[str, bool]],
           metrics: str | None = None) -> str:
    lines = [f"  {name}:", f"    desc: {json.dumps(desc, ensure_ascii=False)}", f"    cmd: {cmd}", "    deps:"]
    lines += [f"      - {dep}" for dep in dict.fromkeys(deps)]
    if params:
        lines += ["    params:", f"      - {RESOLVED}:", f"          - {name}"]
    lines.append("    outs:")
    for path, cached in outs:
        lines += [f"      - {path}"] if cached else [f"      - {path}:", "          cache: false"]
    if metrics:
        headline = metrics.replace("_metrics.json", "_headline.json")
        lines += [f"    metrics:                {_METRICS_COMMENT.format(metrics)}",
                  f"      - data/derived/{headline}:", "          cache: false"]
    return "\n".join(lines) + "\n"


def _measure_entry(stage: Stage, raw: RawSpec) -> str:
    files = [f"data/raw/{file}" for file in raw.files]
    deps = [*raw.inputs, *_lib_deps(f"pqlab.studies.{raw.measure_stage}", raw.packages)]
    return _entry(raw.measure_stage, raw.desc, f"pqlab {stage.command} --measure-only --quiet", deps, True,
                  [(path, True) for path in files])


def _study_entry(stage: Stage) -> str:
    deps = [f"notebooks/{stage.notebook}.ipynb"] if stage.notebook else []
    deps += [f"data/raw/{file}" for file in stage.raw.files] if stage.raw else []
    deps += list(stage.inputs)
    if stage.kind == "report":
        deps += [f"data/derived/{other.metrics}" for other in STAGES if other.metrics]
    deps += _lib_deps(f"pqlab.studies.{stage.name}", stage.packages)
    outs = [(path, True) for path in _expanded(stage.outs)] + [(path, False) for path in stage.uncached]
    if stage.notebook:
        copy = f"data/derived/notebooks/{stage.notebook}.ipynb"
        outs.append((copy, False))
        cmd = (f">-\n      mkdir -p data/derived/notebooks && pqlab papermill notebooks/{stage.notebook}.ipynb {copy}"
               f"\n      -k pqlab --params params/params.yaml -p pipeline True")
    else:
        cmd = f"pqlab {stage.command} {stage.run_args}".rstrip()
    if stage.metrics:
        outs.append((f"data/derived/{stage.metrics}", False))
    return _entry(stage.name, stage.desc, cmd, deps, stage.kind != "report", outs, stage.metrics)


def _resolve_entry() -> str:
    desc = ("params/params.yaml validated (pqlab's bounded parser) and resolved: per stage every parameter it reads, "
            "defaults included (pqlab.studies.resolve_params)")
    deps = ["params/params.yaml", *_lib_deps(f"pqlab.studies.{RESOLVE_STAGE}", ())]
    return _entry(RESOLVE_STAGE, desc, "pqlab params --resolve", deps, False, [(RESOLVED, False)])


def text() -> str:
    """The whole dvc.yaml, from the registry."""
    entries = [_resolve_entry()]
    for stage in STAGES:
        if stage.raw:
            entries.append(_measure_entry(stage, stage.raw))
        entries.append(_study_entry(stage))
    return HEADER + "stages:\n" + "\n".join(entries) + "\n" + PLOTS


def stale(path: Path) -> bool:
    """Whether the dvc.yaml at ``path`` differs from what the registry gives (missing: stale)."""
    return not path.is_file() or path.read_text() != text()
