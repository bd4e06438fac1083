"""Command line: ``pqlab info``, ``params``, and one command per study stage (``pqlab.studies``)."""

from __future__ import annotations

import argparse
import errno
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from pqlab.errors import PqlabError, one_line


def _info(args: argparse.Namespace) -> int:
    from pqlab import crypto
    from pqlab.crypto.registry import PREFERENCE

    names = PREFERENCE if args.backend is None else (args.backend,)
    statuses = [crypto.backend_status(name) for name in names]
    report = []
    for status in statuses:
        entry = {"backend": status.name, "available": status.available, "version": status.version,
                 "library": status.library, "reason": status.reason, "kems": {}, "signatures": {}}
        for algorithm in status.kems:
            sizes = crypto.get_kem(algorithm, status.name).sizes
            entry["kems"][algorithm] = sizes.__dict__
        for algorithm in status.signatures:
            sizes = crypto.get_signer(algorithm, status.name).sizes
            entry["signatures"][algorithm] = sizes.__dict__
        report.append(entry)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for entry in report:
        if not entry["available"]:
            print(f"{entry['backend']}: not available — {entry['reason']}\n")
            continue
        print(f"{entry['backend']}: {entry['version']}")
        if entry["library"]:
            print(f"  library: {entry['library']}")
        print(f"  {'KEM':<20} {'public key':>10} {'secret key':>10} {'ciphertext':>10} {'shared':>7}")
        for name, s in entry["kems"].items():
            secret = s["secret_key"] if s["secret_key"] is not None else "seed"
            print(f"  {name:<20} {s['public_key']:>10} {secret:>10} {s['ciphertext']:>10} {s['shared_secret']:>7}")
        print(f"  {'signature':<20} {'public key':>10} {'secret key':>10} {'signature':>10}")
        for name, s in entry["signatures"].items():
            secret = s["secret_key"] if s["secret_key"] is not None else "seed"
            print(f"  {name:<20} {s['public_key']:>10} {secret:>10} {s['signature']:>10}")
        print()
    usable = sum(entry["available"] for entry in report)
    print(f"{usable} of {len(report)} backends usable; sizes in octets, measured from real keys and outputs.")
    return 0


def _params(args: argparse.Namespace) -> int:
    from pqlab import params

    if args.resolve:
        if args.profile:
            from pqlab.errors import ParamsError

            raise ParamsError("the resolved file follows the params file's own profile; set `profile:` there",
                              field="--profile")
        settings = params.load(args.params)  # first: a malformed file is refused before anything heavy loads
        from pqlab.studies import resolve_params

        written = resolve_params.run(args.params, settings)
        print(f"wrote {written} (every parameter each pipeline stage reads, for DVC)")
        return 0
    settings = params.load(args.params, args.profile)
    print(json.dumps(params.dump_all(settings), indent=2))
    return 0


def _settings_and_paths(args: argparse.Namespace):
    """The validated params and the project folder a study command writes under."""
    from pqlab import params
    from pqlab.paths import ProjectPaths, project_root

    settings = params.load(args.params, args.profile)
    root = Path(args.out_dir) if getattr(args, "out_dir", None) else project_root(args.params)
    if not getattr(args, "out_dir", None):
        print(f"writing under {root.resolve()} (the project of {args.params}; --out-dir FOLDER writes elsewhere)")
    return settings, ProjectPaths(root.resolve(), Path(args.params).resolve().parent)  # inputs: --params' folder


def _print_written(result) -> None:
    for path in result.files:
        print(f"wrote {path}")


def _print_tables(result, *names: str) -> None:
    for name in names:
        print(result.tables[name].to_string(index=False))


def _run_study(args: argparse.Namespace, stage: str, show: Callable[[Any], int | None], settings=None, paths=None,
               **options: Any) -> int:
    """A study command: under ``--measure-only`` just the measurement, else the stage's ``run``, its result passed to
    ``show`` and the files it wrote listed; the exit status is what ``show`` returns (None: 0).

    ``options`` go to the measurement and the run alike; ``--quiet`` and ``--analyse-only``, where the command has
    them, go to the run."""
    import importlib

    if getattr(args, "measure_only", False):
        return _measure_only(args, stage, settings, paths, **options)
    if settings is None:
        settings, paths = _settings_and_paths(args)
    if "quiet" in args:
        options["progress"] = not args.quiet
    if "analyse_only" in args:
        options["analyse_only"] = args.analyse_only
    result = importlib.import_module(f"pqlab.studies.{stage}").run(settings, paths, **options)
    status = show(result)
    _print_written(result)
    return status or 0


def _measure_only(args: argparse.Namespace, stage: str, settings=None, paths=None, **options) -> int:
    """``--measure-only``: run the stage's measurement and write just its raw files, saying where."""
    import importlib

    from pqlab.studies import raw_samples

    if settings is None:
        settings, paths = _settings_and_paths(args)
    raw = raw_samples.spec(stage)
    measure = importlib.import_module(f"pqlab.studies.{raw.measure_stage}").measure
    for path in measure(settings, paths, progress=not getattr(args, "quiet", False), **options):
        print(f"wrote {path} (raw samples of {stage}; `pqlab raw import` it into another clone)")
    return 0


def _raw_import(args: argparse.Namespace) -> int:
    from pqlab.studies import raw_samples

    settings, paths = _settings_and_paths(args)
    if args.name and (not args.edited or len(args.files) != 1):
        from pqlab.errors import RawSamplesError

        raise RawSamplesError("names the one file imported with --edited", field="--as")
    for file in args.files:
        if args.edited:
            target = raw_samples.import_edited(file, settings, paths, args.stage, args.name)
            print(f"imported {file} as {target}, recorded as EDITED BY HAND (REPORT.md marks every row it feeds)")
        else:
            target = raw_samples.import_file(file, settings, paths, args.stage)
            print(f"imported {file} as {target}")
    return 0


def _costs(args: argparse.Namespace) -> int:
    return _run_study(args, "costs", lambda result: _print_tables(result, "table1_costs"))


def _attacks(args: argparse.Namespace) -> int:
    names = ("table6_attack_matrix", "attack_matrix_extra")

    def show(result) -> int:
        _print_tables(result, *names)
        return 0 if all(result.tables[name]["pass"].all() for name in names) else 1

    return _run_study(args, "attack_matrix", show)


def _case_sizes(args: argparse.Namespace) -> int:
    columns = ["config", "key_exchange", "chain", "auth", "cached", "Sigma1", "Sigma2", "Sigma3", "Total",
               "fits_limit", "frames_total"]
    return _run_study(args, "case_sizes",
                      lambda result: print(result.tables["table1_case_sizes"][columns].to_string(index=False)))


def _design_space(args: argparse.Namespace) -> int:
    return _run_study(args, "design_space", lambda result: _print_tables(result, "design_space_pareto"))


def _extended_design_space(args: argparse.Namespace) -> int:
    return _run_study(args, "extended_design_space",
                      lambda result: _print_tables(result, "extended_design_space_pareto"))


def _transport(args: argparse.Namespace) -> int:
    from pqlab.thread.case_inputs import load_configs

    _check_workers(args)
    configs, compute = load_configs(args.configs) if args.configs else (None, None)  # refused before the heavy imports
    return _run_study(args, "transport", lambda result: _print_tables(result, "table1_case_times"), configs=configs,
                      device_compute_ms=compute, workers=args.workers, scheduler=args.scheduler)


def _check_workers(args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        from pqlab.errors import ParamsError

        raise ParamsError(f"must be >= 1 (got {args.workers})", field="--workers")


def _sensitivity(args: argparse.Namespace) -> int:
    def show(result) -> None:
        ipv6 = result.tables["fig4a_ipv6_block"]
        print(ipv6.pivot(index="occupancy_pct", columns="burst_ms", values="ratio").sort_index(ascending=False)
              .round(2).to_string())

    _check_workers(args)
    return _run_study(args, "sensitivity", show, workers=args.workers, scheduler=args.scheduler)


def _amortisation(args: argparse.Namespace) -> int:
    def show(result) -> None:
        metrics = result.metrics
        print(f"controller path: {metrics['controller_path']['used']} ({metrics['controller_path']['reason']})")
        _print_tables(result, "table2_amortised", "omission_detection")
        eq = metrics["equivocation"]
        print(f"equivocation: {eq['exposed']} of {eq['trials']} exposed by comparing the two signed views")
        print(metrics["dominant"]["sentence"])

    return _run_study(args, "amortisation", show)


def _control_cycle(args: argparse.Namespace) -> int:
    def show(result) -> None:
        _print_tables(result, "fig6_scan_summary", "control_cycle_scan_cost")
        scheduling = result.metrics["scheduling"]
        print(f"{result.metrics['host']}; CPU {scheduling['cpu']}, policy {', '.join(scheduling['policies'])}"
              + (f" (SCHED_FIFO refused: {', '.join(scheduling['fifo_errors'])})" if scheduling["fifo_errors"]
                 else ""))

    return _run_study(args, "control_cycle", show)


def _assumptions(args: argparse.Namespace) -> int:
    def show(result) -> None:
        columns = ["set", "ratio_min", "ratio_max", "spurious_2hop", "spurious_4hop", "d3_4hop_heavy_ipv6_completion",
                   "sed_max_failure_rate"]
        print(result.tables["assumptions_table"][columns].round(3).to_string(index=False))
        print(result.tables["assumptions_slack_bound"][["hops", "ack_semantics", "slack_s", "ratio_ceiling"]]
              .round(3).to_string(index=False))

    _check_workers(args)
    return _run_study(args, "assumptions", show, workers=args.workers, scheduler=args.scheduler)


def _transport_crosscheck(args: argparse.Namespace) -> int:
    def show(result) -> None:
        print(result.tables["crosscheck_closing"].to_string(index=False))
        transfers = result.tables["crosscheck_transfers"]
        print(transfers[["config", "message", "transport", "hops", "topology", "pqlab_median_s", "ns3_median_s",
                         "ratio", "framing_ratio", "ns3_extra_per_frame_us"]].round(4).to_string(index=False))

    _check_workers(args)
    return _run_study(args, "transport_crosscheck", show, workers=args.workers)


def _image_tree(args: argparse.Namespace) -> int:
    def show(result) -> None:
        m = result.metrics
        print(f"{m['files']} files, {m['total_bytes']} octets (median file {m['median_file_bytes']:.0f}, "
              f"largest {m['max_file_bytes']}), {m['distribution']['directories']} directories")

    return _run_study(args, "image_tree", show)


def _grid_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a simulator grid runs: local worker processes or a Dask scheduler; progress bar or not."""
    parser.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: $PQLAB_DASK_SCHEDULER, else local)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _full_image(args: argparse.Namespace) -> int:
    def show(result) -> None:
        _print_tables(result, "table5_image")
        eviction = result.metrics["eviction"]
        print(f"eviction {'verified' if eviction['verified'] else 'NOT verified'} by mincore: "
              f"{eviction['resident_before_pages']} pages resident before, {eviction['resident_after_pages']} after "
              f"({eviction['files_still_resident']} files still resident)")

    settings, paths = _settings_and_paths(args)
    if args.image_dir:
        section = settings.full_image.model_copy(update={"image_dir": str(Path(args.image_dir).resolve()),
                                                         "scratch_tree": None})
        settings = settings.model_copy(update={"full_image": section})
    return _run_study(args, "full_image", show, settings, paths)


def _report(args: argparse.Namespace) -> int:
    from pqlab.paths import ProjectPaths
    from pqlab.studies import report

    root = Path(args.root).resolve()
    if not args.out_dir:
        print(f"writing under {root} (--root; --out-dir FOLDER writes elsewhere)")
    result = report.run(None, ProjectPaths(Path(args.out_dir).resolve() if args.out_dir else root, root / "params"))
    _print_written(result)
    return 0


def _papermill(args: argparse.Namespace) -> int:
    from pqlab.notebook import parameter_value, run_headless

    # nbformat's jsonschema imports rfc3987_syntax when it is installed, which compiles some thirty Lark grammars
    # at import: 1-2.6 s of every notebook stage here (python-jsonschema/jsonschema#1428). No notebook schema uses
    # an IRI format, so this process (one notebook, then it exits) goes without that optional checker.
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)
    parameters = {name: parameter_value(value) for name, value in args.parameters}
    timeout = args.execution_timeout
    if args.params:  # the pipeline's way: profile and timeout from the validated file, not from DVC's templating
        from pqlab import params

        settings = params.load(args.params)
        parameters = {"profile": settings.profile, "params_path": args.params} | parameters
        timeout = settings.execution_timeout_s if timeout is None else timeout
    run_headless(args.notebook, args.output, parameters, kernel_name=args.kernel, execution_timeout=timeout,
                 cwd=args.cwd)
    return 0


def _recovery(args: argparse.Namespace) -> int:
    def show(result) -> int:
        _print_tables(result, "table4_recovery", "recovery_restart", "recovery_crash_injection")
        return 0 if result.metrics["crash"]["all_fail_secure_or_resume"] else 1

    return _run_study(args, "recovery", show)


def _amort_vectors(args: argparse.Namespace) -> int:
    from pqlab.amort.conformance import vectors
    from pqlab.generated import replace_files, signed

    seed = vectors.DEFAULT_SEED if args.seed is None else args.seed
    out = args.out or vectors.default_out(args.set)
    texts = vectors.files(seed, args.set, out, sign=signed)  # the manifest records this --out and pqlab's digest
    # removes only vectors the folder's previous manifest.json recorded; a user's file is never deleted
    written = replace_files(out, texts, manifest=vectors.MANIFEST, pattern=vectors.FILE, force=args.force)
    for path in written:
        path.chmod(0o644)
    print(f"wrote {len(written) - 1} AMORT-V1 differential vectors ({args.set} set) and {written[-1].name} to {out} "
          f"(seed {seed}, from the reference model)")
    return 0


def _amort_fuzz(args: argparse.Namespace) -> int:
    from pqlab.amort.conformance import fuzz
    from pqlab.io import write_json

    result = fuzz.run(args.batches, args.seed)
    print(f"fuzz: {result.batches} batches, {result.reports} reports ({result.accepted} accepted), "
          f"{result.checkpoints} checkpoints in {result.seconds:.1f} s; {len(result.mismatches)} mismatches")
    for line in result.mismatches:
        print("  " + line)
    if args.json:
        write_json(args.json, dict(result.__dict__))
    return 0 if not result.mismatches else 1


def _scaling(args: argparse.Namespace) -> int:
    def show(result) -> None:
        print(f"controller path: {result.metrics['controller_path']} ({result.metrics['controller_path_reason']})")
        _print_tables(result, "table3_scaling", "isolation", "partition_replay")

    return _run_study(args, "scaling", show)


def _device_origin(args: argparse.Namespace) -> int:
    def show(result) -> None:
        print(f"controller and device path: {result.metrics['controller_path']} "
              f"({result.metrics['controller_path_reason']})")
        _print_tables(result, "device_origin_auditor", "device_origin_tags")

    return _run_study(args, "device_origin", show)


def _study_arguments(parser: argparse.ArgumentParser, out_dir: bool = True) -> None:
    """The options every study command shares: which params file, which profile, where to write."""
    parser.add_argument("--params", default="params/params.yaml")
    parser.add_argument("--profile", help="override the file's profile")
    if out_dir:
        parser.add_argument("--out-dir", help="project folder to write data/ and paper_figs/ under "
                            "(default: the params file's project)")


def _measuring_arguments(parser: argparse.ArgumentParser) -> None:
    """A measuring study's two halves on their own: the measurement (dvc's measure_<stage>) or the analysis."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--measure-only", action="store_true",
                      help="run the measurement and write only its raw files under data/raw (for another machine)")
    mode.add_argument("--analyse-only", action="store_true",
                      help="analyse the raw files in place; fail if they are missing, never measure")


def _study_command(sub, command: str, func: Callable[[argparse.Namespace], int], help: str, *,
                   quiet: str | None = "no progress bar", grid: bool = False,
                   measuring: bool = True) -> argparse.ArgumentParser:
    """A study's subcommand: the shared study options, then ``--quiet`` (its help ``quiet``; None: no such option) or
    with ``grid`` the simulator grid's options, then with ``measuring`` the measuring study's two halves."""
    parser = sub.add_parser(command, help=help)
    _study_arguments(parser)
    if grid:
        _grid_arguments(parser)
    elif quiet:
        parser.add_argument("--quiet", action="store_true", help=quiet)
    if measuring:
        _measuring_arguments(parser)
    parser.set_defaults(func=func)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error as one line (``pqlab: error [USAGE]: ...``, exit 2), as every other error."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"pqlab: error [USAGE]: {self.prog}: {text} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pqlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="list backends, versions, algorithms and sizes")
    info.add_argument("--backend", help="only this backend (liboqs, openssl, pqcrypto)")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(func=_info)

    check = sub.add_parser("params", help="validate a params file and print the resolved values")
    _study_arguments(check, out_dir=False)
    check.add_argument("--resolve", action="store_true", help="write params/resolved.yaml instead: per pipeline "
                       "stage every parameter it reads (what dvc.yaml's stages list; make repro / dvc repro do this "
                       "first)")
    check.set_defaults(func=_params)

    _study_command(sub, "costs", _costs, "run the AMORT-V1 cost characterisation (Table I, Fig. 2)")
    _study_command(sub, "attacks", _attacks, "run the AMORT-V1 attack matrix (Table VI and extra cases)", quiet=None,
                   measuring=False)
    _study_command(sub, "case-sizes", _case_sizes, "run the PQ-CASE size model (Table I payload columns, Fig. 1)",
                   quiet=None, measuring=False)
    _study_command(sub, "design-space", _design_space, "run the PQ-CASE design space (Fig. 6, Device PQ, Pareto "
                   "fronts)", quiet=None, measuring=False)
    _study_command(sub, "extended-design-space", _extended_design_space, "the design space with newer algorithms: "
                   "fronts, what enters them, new fits (beyond PQ-CASE §VIII)", measuring=False)

    tr = sub.add_parser("transport", help="run the PQ-CASE Thread transport grid (Fig. 2, Table I times)")
    tr.add_argument("--configs",
                    help="YAML/JSON: name -> {sizes: [Sigma1, Sigma2, Sigma3, status], device_compute_ms: "
                    "[before Sigma2, before the status report]} (default: thread.configurations from Table I, "
                    "sizes from the CASE size model)")
    _study_arguments(tr)
    _grid_arguments(tr)
    _measuring_arguments(tr)
    tr.set_defaults(func=_transport)

    _study_command(sub, "sensitivity", _sensitivity, "run the PQ-CASE §VII sensitivity analyses (Fig. 4 a-c, Fig. 5)",
                   grid=True)
    _study_command(sub, "assumptions", _assumptions, "run the unstated-assumption study (channel rule, ACK loss, "
                   "indirect retries, block timer) and the slack bound", grid=True)
    _study_command(sub, "transport-crosscheck", _transport_crosscheck, "run the Thread transport simulator beside "
                   "ns-3 (lr-wpan, sixlowpan) on the same scenarios and params; needs Debian's libns3-dev", grid=True)

    nb = sub.add_parser("papermill", help="run a notebook headless (papermill); any failure is one line on stderr")
    nb.add_argument("notebook")
    nb.add_argument("output")
    nb.add_argument("-k", "--kernel", default="pqlab", help="Jupyter kernel (default: pqlab)")
    nb.add_argument("-p", "--parameters", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="set a parameter of the notebook's `parameters` cell")
    nb.add_argument("--execution-timeout", type=int, help="seconds one cell may run (default with --params: its "
                    "execution_timeout_s)")
    nb.add_argument("--params", help="a params file: validated, then passed as the notebook's params_path with its "
                    "profile, and its execution_timeout_s as the timeout (what dvc.yaml's stages run)")
    nb.add_argument("--cwd", help="working directory of the kernel (default: this one)")
    nb.set_defaults(func=_papermill)

    _study_command(sub, "amortisation", _amortisation, "run the AMORT-V1 amortisation study (Eq. 1, Table II, Fig. 3, "
                   "Fig. 4, omission and equivocation trials)", quiet="no progress bars")
    _study_command(sub, "recovery", _recovery, "run AMORT-V1 restart/rollback recovery with a real TPM 2.0 (Table IV)")
    _study_command(sub, "control-cycle", _control_cycle, "run the AMORT-V1 control-cycle harness (Fig. 6) on this "
                   "host")
    _study_command(sub, "image-tree", _image_tree, "generate data/raw/image_tree/ with the paper's image shape (§V-I)",
                   measuring=False)

    full = sub.add_parser("full-image", help="measure a software image warm and cold (AMORT-V1 Table V)")
    _study_arguments(full)
    full.add_argument("--image-dir", help="measure this directory instead of full_image.image_dir")
    full.add_argument("--quiet", action="store_true", help="no progress bar")
    _measuring_arguments(full)
    full.set_defaults(func=_full_image)

    vec = sub.add_parser("amort-vectors", help="write AMORT-V1 differential vectors from the reference model (native "
                         "vs reference fast path, §V-A): the paper's 149, or the extension set")
    vec.add_argument("--set", choices=("paper", "extension"), default="paper",
                     help="paper: the 149 vectors; extension: explicit wire format, hardened variant, issue 27")
    vec.add_argument("--out", default=None, help="folder for the JSON files (default: tests/vectors/"
                     "amort_differential, its extension/ for the extension set)")
    vec.add_argument("--seed", type=int, default=None, help="key and choice seed (default: the committed one)")
    vec.add_argument("--force", action="store_true", help="write into a folder holding files pqlab did not write "
                     "there (they are kept; those with a vector's name are overwritten)")
    vec.set_defaults(func=_amort_vectors)

    fz = sub.add_parser("amort-fuzz", help="random and mutated report batches through the native and reference "
                        "fast paths; exit 1 on any differing verdict or state (make sanitize runs it)")
    fz.add_argument("--batches", type=int, default=100_000)
    fz.add_argument("--seed", type=int, default=1)
    fz.add_argument("--json", help="also write the result here")
    fz.set_defaults(func=_amort_fuzz)

    rep = sub.add_parser("report", help="build paper_figs/REPORT.md from derived metrics")
    rep.add_argument("--root", default=".", help="project folder (params/paper_reference.yaml is read from it)")
    rep.add_argument("--out-dir", help="folder holding the stages' data/ and paper_figs/, where REPORT.md is written "
                     "(default: --root)")
    rep.set_defaults(func=_report)
    _study_command(sub, "scaling", _scaling, "run AMORT-V1 fleet scaling (Table III), isolation, re-keying and "
                   "partition replay")
    _study_command(sub, "device-origin", _device_origin, "run AMORT-V1 device-origin costs (Fig. 5, one vs two tags, "
                   "prover extra work)")

    raw = sub.add_parser("raw", help="raw samples measured elsewhere")
    raw_sub = raw.add_subparsers(dest="raw_command", required=True)
    raw_in = raw_sub.add_parser("import", help="validate raw-sample files from another machine (schema, provenance, "
                                "checksum, stage, measurement parameters) and put them in place under data/raw")
    raw_in.add_argument("files", nargs="+", metavar="FILE")
    raw_in.add_argument("--stage", help="the measuring stage the files must belong to (refused otherwise)")
    raw_in.add_argument("--edited", action="store_true", help="the files were edited by hand (e.g. a pandas round "
                        "trip): accept them without their digest, take missing provenance from the raw file they "
                        "replace, and record them as edited; REPORT.md marks every row they feed")
    raw_in.add_argument("--as", dest="name", metavar="NAME", help="with --edited: the raw file it replaces "
                        "(default: its provenance's, else its own file name)")
    _study_arguments(raw_in)
    raw_in.set_defaults(func=_raw_import)

    from pqlab.cli_whatif import add_parser as add_whatif  # argparse only: the work is imported when it runs

    add_whatif(sub)
    return parser


def _interrupted(args: argparse.Namespace) -> str:
    """What the interrupted command leaves behind, as this process knows it."""
    if args.command == "papermill":
        return (f"interrupted while {args.notebook} ran; its study replaces an output set only whole, so each is the "
                "previous complete set or the new complete one")
    outputs, cache = sys.modules.get("pqlab.studies.outputs"), sys.modules.get("pqlab.cache")
    if outputs is None:
        return "interrupted; nothing was written"
    return "interrupted; " + outputs.interrupt_report(getattr(cache, "KEPT", None))


def _quiet_broken_pipe() -> int:
    """The reader of our output went away (``pqlab info | head -1``): stop quietly as other Unix tools do, with the
    status a SIGPIPE gives (128 + 13); stdout is pointed at /dev/null so the exit-time flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout file descriptor (captured in a test)
        pass
    return 128 + 13


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return status
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except PqlabError as exc:
        print(one_line(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from pqlab.progress import close_all

        close_all()
        print(f"pqlab: {_interrupted(args)}", file=sys.stderr, flush=True)
        return 130
    except OSError as exc:  # a full disk outside an output set (resume parts, scratch files): one line, not a bug
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(one_line(_no_space(exc)), file=sys.stderr)
        return 2


def _no_space(exc: OSError) -> PqlabError:
    from pqlab.errors import OutputError
    from pqlab.studies.outputs import free_octets, octets_text

    where = Path(exc.filename) if exc.filename else Path.cwd()
    folder = next((p for p in (where, *where.parents) if p.is_dir()), Path.cwd())
    return OutputError(f"no space left on the device ({octets_text(free_octets(folder))} free there); free some "
                       "space and rerun (outputs are replaced only as whole sets, so the previous ones are unchanged)",
                       field=str(where))


if __name__ == "__main__":
    sys.exit(main())
