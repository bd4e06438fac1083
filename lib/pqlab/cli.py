"""Command line: ``pqlab info``, ``params``, ``pipeline``, and one command per study stage (from the stage registry)."""

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


def _pipeline(args: argparse.Namespace) -> int:
    from pqlab.pipeline import architecture, dvc_file

    path, page = Path(args.dvc_yaml), Path(args.docs)
    if args.write_dvc:
        path.write_text(dvc_file.text())
        print(f"wrote {path} from the stage registry (pqlab.pipeline.registry)")
        return 0
    if args.write_docs:
        page.write_text(architecture.render())
        print(f"wrote {page} from the layers, the stage registry and the import graph (pqlab.pipeline.architecture)")
        return 0
    if dvc_file.stale(path):
        print(f"pqlab: {path} is stale: it is not what the stage registry gives; run `pqlab pipeline --write-dvc`",
              file=sys.stderr)
        return 1
    if not page.is_file() or page.read_text() != architecture.render():
        print(f"pqlab: {page} is stale: it is not what the layers and the registry give; run `pqlab pipeline "
              f"--write-docs`", file=sys.stderr)
        return 1
    print(f"{path} and {page} are what the stage registry gives")
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

    from pqlab.pipeline import registry

    if settings is None:
        settings, paths = _settings_and_paths(args)
    raw = registry.raw_spec(stage)
    measure = importlib.import_module(f"pqlab.studies.{raw.measure_stage}").measure
    for path in measure(settings, paths, progress=not getattr(args, "quiet", False), **options):
        print(f"wrote {path} (raw samples of {stage}; `pqlab raw import` it into another clone)")
    return 0


def _raw_import(args: argparse.Namespace) -> int:
    from pqlab.pipeline import raw_io

    settings, paths = _settings_and_paths(args)
    if args.name and (not args.edited or len(args.files) != 1):
        from pqlab.errors import RawSamplesError

        raise RawSamplesError("names the one file imported with --edited", field="--as")
    for file in args.files:
        if args.edited:
            target = raw_io.import_edited(file, settings, paths, args.stage, args.name)
            print(f"imported {file} as {target}, recorded as EDITED BY HAND (REPORT.md marks every row it feeds)")
        else:
            target = raw_io.import_file(file, settings, paths, args.stage)
            print(f"imported {file} as {target}")
    return 0


def _study(args: argparse.Namespace) -> int:
    """A study command (``args.stage``, from the registry): its own options, the params, the run, what it prints."""
    from pqlab import cli_studies
    from pqlab.pipeline import registry

    stage = registry.BY_NAME[args.stage]
    options: dict[str, Any] = {}
    if stage.grid:
        _check_workers(args)
        options |= {name: getattr(args, name) for name in stage.grid}
    if stage.name in cli_studies.OPTIONS:
        options |= cli_studies.OPTIONS[stage.name](args)
    settings, paths = _settings_and_paths(args)
    if stage.name in cli_studies.SETTINGS:
        settings = cli_studies.SETTINGS[stage.name](args, settings)
    return _run_study(args, stage.name, cli_studies.SHOW[stage.name], settings, paths, **options)


def _check_workers(args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        from pqlab.errors import ParamsError

        raise ParamsError(f"must be >= 1 (got {args.workers})", field="--workers")


def _grid_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a simulator grid runs: local worker processes or a Dask scheduler; progress bar or not."""
    parser.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: $PQLAB_DASK_SCHEDULER, else local)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


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


def _study_commands(sub: argparse._SubParsersAction) -> None:
    """One subcommand per study stage of the registry: the shared study options, then ``--quiet`` (the stage's help
    for it; none when None) or with a grid the simulator grid's options, the stage's own options, and for a measuring
    stage its two halves (``--measure-only`` / ``--analyse-only``)."""
    from pqlab.pipeline import registry

    for stage in registry.STAGES:
        if stage.kind == "report":  # not a study of the params: `pqlab report` reads every stage's metrics
            continue
        parser = sub.add_parser(stage.command, help=stage.help)
        _study_arguments(parser)
        for option in stage.options:
            parser.add_argument(option.flag, help=option.help)
        if stage.grid:
            _grid_arguments(parser)
        elif stage.quiet:
            parser.add_argument("--quiet", action="store_true", help=stage.quiet)
        if stage.raw:
            _measuring_arguments(parser)
        parser.set_defaults(func=_study, stage=stage.name)


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error as one line (``pqlab: error [USAGE]: ...``, exit 2), as every other error."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"pqlab: error [USAGE]: {self.prog}: {text} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from pqlab.pipeline import registry

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

    pipe = sub.add_parser("pipeline", help="dvc.yaml and docs/architecture.md from the stage registry: write them, or "
                          "check they are current")
    pipe.add_argument("--dvc-yaml", default="dvc.yaml", help="the pipeline file (default: dvc.yaml)")
    pipe.add_argument("--docs", default="docs/architecture.md", help="the architecture page (default: "
                      "docs/architecture.md)")
    mode = pipe.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write-dvc", action="store_true", help="write dvc.yaml from the registry")
    mode.add_argument("--write-docs", action="store_true", help="write the architecture page from the layers, the "
                      "registry, the import graph and the papers' coverage")
    mode.add_argument("--check", action="store_true", help="exit 1 with one line when either differs from what the "
                      "registry gives")
    pipe.set_defaults(func=_pipeline)

    _study_commands(sub)

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

    rep = sub.add_parser("report", help=registry.BY_NAME["report"].help)
    rep.add_argument("--root", default=".", help="project folder (params/paper_reference.yaml is read from it)")
    rep.add_argument("--out-dir", help="folder holding the stages' data/ and paper_figs/, where REPORT.md is written "
                     "(default: --root)")
    rep.set_defaults(func=_report)

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
    outputs, cache = sys.modules.get("pqlab.pipeline.outputs"), sys.modules.get("pqlab.cache")
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
    from pqlab.progress import LineTracking

    args = build_parser().parse_args(argv)
    stderr = sys.stderr = LineTracking(sys.stderr)
    try:
        return _run(args, stderr)
    finally:
        sys.stderr = stderr.stream


def _run(args: argparse.Namespace, stderr: Any) -> int:
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
        stderr.end_line()  # a bar interrupted while it started leaves its line open
        print(f"pqlab: {_interrupted(args)}", file=sys.stderr, flush=True)
        return 130
    except OSError as exc:  # a full disk outside an output set (resume parts, scratch files): one line, not a bug
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(one_line(_no_space(exc)), file=sys.stderr)
        return 2


def _no_space(exc: OSError) -> PqlabError:
    from pqlab.errors import OutputError
    from pqlab.pipeline.outputs import free_octets, octets_text

    where = Path(exc.filename) if exc.filename else Path.cwd()
    folder = next((p for p in (where, *where.parents) if p.is_dir()), Path.cwd())
    return OutputError(f"no space left on the device ({octets_text(free_octets(folder))} free there); free some "
                       "space and rerun (outputs are replaced only as whole sets, so the previous ones are unchanged)",
                       field=str(where))


if __name__ == "__main__":
    sys.exit(main())
