"""The ``pqlab whatif case|amort`` commands: options, loading, printing a table (or JSON), writing JSON and a figure.

Only argparse is imported at module level, so ``pqlab --help`` stays fast; the work is in ``pqlab.whatif.case``
and ``pqlab.whatif.amort``, the same functions ``notebooks/15_your_deployment.ipynb`` calls.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

CASE_EXAMPLE = ("pqlab whatif case --preset D3 --preset C5 --hops 4 --interference heavy_wifi --clock-mhz 128\n"
                "pqlab whatif case --kex ML-KEM-768 --noc ML-DSA-44 --icac none --rcac ML-DSA-44 --hops 4 --json")
AMORT_EXAMPLE = "pqlab whatif amort --identities 1000 --rate 10 --window-s 30 --signer ML-DSA-65 --storage /mnt/sd"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deployment", "-d", action="append", default=[], metavar="FILE",
                        help="YAML: one deployment, or `deployments:` (a list) with optional shared `defaults:`; "
                        "repeat to compare several files")
    parser.add_argument("--name", help="a label for the deployment")
    parser.add_argument("--params", help="params file for the project's models and seed "
                        "(default: params/params.yaml of the project here or of the pqlab checkout)")
    parser.add_argument("--profile", help="override the params file's profile")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON answer to FILE")
    parser.add_argument("--figure", metavar="FILE", help="also draw the figure into FILE (.png, .pdf or .svg)")


def add_parser(sub: Any) -> None:
    """``pqlab whatif`` and its two commands, added to the main parser's subcommands."""
    whatif = sub.add_parser("whatif", help="what post-quantum costs in YOUR deployment: a Matter device on a Thread "
                            "mesh (case) or a PLC fleet (amort)")
    commands = whatif.add_subparsers(dest="whatif", required=True)

    case = commands.add_parser("case", help="CASE bytes, fit, frames, device time and simulated handshake time",
                               epilog="examples:\n  " + CASE_EXAMPLE.replace("\n", "\n  "),
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(case)
    case.add_argument("--preset", action="append", default=[], metavar="CONFIG",
                      help="start from a Table I configuration (B, D1 ... C5); repeat to compare several")
    case.add_argument("--kex", dest="key_exchange", help="key exchange: P-256, ML-KEM-512/768/1024, HQC-1/3/5 or a "
                      "hybrid such as P-256+ML-KEM-768 (default ML-KEM-768)")
    case.add_argument("--noc", help="NOC signature algorithm (default ML-DSA-44)")
    case.add_argument("--icac", help="ICAC signature algorithm, or `none` for no intermediate CA (default ML-DSA-44)")
    case.add_argument("--rcac", help="RCAC signature algorithm (default ML-DSA-44)")
    case.add_argument("--auth", help="responder authentication: sig, kem or kem-pdk (default sig)")
    case.add_argument("--cached", help="chains the peer holds: none, responder or both (default none)")
    case.add_argument("--implementation", help="pqm4 implementation: fastest (default), portable, or a name such "
                      "as m4f, m4fspeed, clean, ref")
    case.add_argument("--clock-mhz", dest="clock_mhz", type=float, help="device clock in MHz (default 64)")
    case.add_argument("--cycles", action="append", metavar="ALG.OP=N",
                      help="a cycle count given directly, e.g. ML-KEM-768.encaps=700000 (repeatable)")
    case.add_argument("--hops", type=int, help="Thread hops between controller and device (default 1)")
    case.add_argument("--interference", help="a transport.scenarios name: none, light_wifi, heavy_wifi, iid_15")
    case.add_argument("--gilbert-elliott", dest="gilbert_elliott", metavar="PG,PB,FRAC,BURST_MS",
                      help="the channel directly: loss in the good and bad state, share of time bad, mean burst ms")
    case.add_argument("--sleepy", action=argparse.BooleanOptionalAction, default=None,
                      help="a sleepy end device (polls its parent) rather than always-on")
    case.add_argument("--poll-interval-ms", dest="poll_interval_ms", type=int, help="sleepy poll interval (200)")
    case.add_argument("--transport", help="for oversized messages: ipv6, pull, block or best (default best)")
    case.add_argument("--runs", type=int, help="simulated handshakes per transport (default 300)")
    case.set_defaults(func=_case)

    amort = commands.add_parser("amort", help="checkpoint interval, detection window, cost per report and "
                                "checkpoint size for a PLC fleet", epilog="example:\n  " + AMORT_EXAMPLE,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(amort)
    amort.add_argument("--rate", dest="rate_hz", type=float, help="reports per second of ONE identity")
    amort.add_argument("--identities", type=int, help="reporting identities (PLCs, devices) in the fleet (1)")
    amort.add_argument("--window-s", dest="window_s", type=float, help="longest acceptable detection window [s]")
    amort.add_argument("--budget-us", dest="budget_us", type=float, help="or: highest cost per report [µs]")
    amort.add_argument("--signer", help="checkpoint signature algorithm (default ML-DSA-65)")
    amort.add_argument("--backend", help="auto (default), liboqs, openssl or pqcrypto")
    amort.add_argument("--storage", help="folder of the durable evidence log (its fsync is probed), or `none`; "
                       "default: amortisation.storage[log_storage] of params (data/raw)")
    amort.add_argument("--size-budget", dest="size_budget_octets", type=int, help="checkpoint size budget [B] (1 MB)")
    for term, what in (("mac", "HMAC per report"), ("leaf", "Merkle leaf + interior hash per report"),
                       ("sign", "one checkpoint signature"), ("fsync", "one durable append + fsync")):
        amort.add_argument(f"--c-{term}", dest=f"c_{term}", type=float, metavar="US",
                           help=f"type in C_{term} [µs] ({what}), e.g. measured on your PLC")
    amort.set_defaults(func=_amort)


def _settings(args: argparse.Namespace):
    from pqlab import params
    from pqlab.errors import ParamsError
    from pqlab.paths import ProjectPaths, find_params, project_root

    if args.params:
        path = Path(args.params)
    else:
        try:
            path = find_params()
        except ParamsError:  # not inside a project: the checkout pqlab is installed from
            path = find_params(Path(__file__).resolve())
    settings = params.load(path, args.profile)
    return settings, path, ProjectPaths(project_root(path))


def _given(args: argparse.Namespace, names: Any) -> dict[str, Any]:
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def _emit(args: argparse.Namespace, document: dict[str, Any], text: str) -> None:
    from pqlab import io

    if args.out:
        io.write_text(args.out, io.json_text(document, checksum=False))
    print(json.dumps(document, indent=2, default=str) if args.json else text)


FIGURE_FORMATS = ("png", "pdf", "svg")


def _check_outputs(args: argparse.Namespace) -> None:
    """``--figure`` and ``--out`` refused before anything is computed: a format pqlab does not draw, a folder that
    cannot be written (nothing is created here; the writers create missing folders at the end)."""
    from pqlab import io
    from pqlab.errors import OutputError

    if args.figure:
        kind = Path(args.figure).suffix.lstrip(".").lower()
        if kind not in FIGURE_FORMATS:
            raise OutputError(f"{'.' + kind if kind else 'no suffix'} is not a figure format pqlab draws: name a "
                              f"{', '.join('.' + k for k in FIGURE_FORMATS)} file", field=f"--figure {args.figure}")
    for option, given in (("--figure", args.figure), ("--out", args.out)):
        if not given:
            continue
        target = Path(given)
        if target.is_dir():
            raise OutputError("is a folder; name a file", field=f"{option} {given}")
        existing = next(p for p in (target.parent.absolute(), *target.parent.absolute().parents) if p.exists())
        try:  # a probe file, not os.access: root passes access() on /proc and on read-only mounts
            io.fresh_file(existing, ".pqlab-probe").unlink()
        except OSError as exc:
            raise OutputError(f"{existing} is not writable ({exc.strerror or exc})",
                              field=f"{option} {given}") from None


def _save(figure: Any, path: str) -> None:
    from pqlab import io

    kind = Path(path).suffix.lstrip(".").lower()
    io.write_with(path, lambda tmp: figure.savefig(tmp, format=kind, dpi=150, metadata={"CreationDate": None}
                                                   if kind == "pdf" else None))


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _case(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_outputs(args)
    from pqlab.whatif import case, deployment

    settings, params_path, _paths = _settings(args)
    context = case.CaseContext.load(settings, params_path.parent)
    values = _given(args, set(deployment.CASE_FIELDS) - {"preset"})  # --preset may be repeated: passed apart
    if "cycles" in values:
        values["cycles"] = deployment.parse_cycles(values["cycles"])
    if "gilbert_elliott" in values:
        values["gilbert_elliott"] = deployment.parse_gilbert_elliott(values["gilbert_elliott"])
    deployments = deployment.case_deployments(args.deployment, deployment.field_values(values, deployment.CASE_FIELDS),
                                              args.preset, scenarios=context.scenarios,
                                              implementations=context.implementations)
    answers = case.evaluate_all(deployments, context)
    if args.figure:
        import matplotlib.pyplot as plt

        from pqlab.figures.whatif import whatif_case_comparison

        figure = whatif_case_comparison(answers)
        _save(figure, args.figure)
        plt.close(figure)
    seconds = time.perf_counter() - start
    document = {"command": "pqlab whatif case", "params": str(params_path), "seed": settings.seed,
                "deployments": [a.to_dict() for a in answers], "notes": case.notes(answers),
                "wall_seconds": seconds, "loadavg": _loadavg()}
    runs = sorted({r.runs for a in answers for r in a.transports})
    text = "\n".join([
        f"pqlab whatif case: {len(answers)} deployment(s); {'/'.join(map(str, runs))} simulated handshakes per "
        f"transport (C Thread simulator, seed {settings.seed}); sizes from the CASE encoder; device time from pqm4 "
        f"@ {context.pqm4.source_commit[:8]}",
        case.table(answers).to_string(), *[f"note: {line}" for line in case.notes(answers)],
        *([f"wrote {args.figure}"] if args.figure else []), *([f"wrote {args.out}"] if args.out else []),
        f"answered in {seconds:.2f} s (load average {_loadavg()})"])
    _emit(args, document, text)
    return 0


def _amort(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_outputs(args)
    from pqlab.whatif import amort, deployment

    settings, params_path, paths = _settings(args)
    values = deployment.field_values(_given(args, deployment.AMORT_FIELDS), deployment.AMORT_FIELDS)
    fleets = deployment.amort_deployments(args.deployment, values, root=paths.root)
    answers = [amort.evaluate(fleet, settings, paths) for fleet in fleets]
    if args.figure:
        import matplotlib.pyplot as plt

        from pqlab.figures.whatif import whatif_amort_tradeoff

        figure = whatif_amort_tradeoff(answers)
        _save(figure, args.figure)
        plt.close(figure)
    seconds = time.perf_counter() - start
    document = {"command": "pqlab whatif amort", "params": str(params_path),
                "fleets": [a.to_dict() for a in answers], "wall_seconds": seconds, "loadavg": _loadavg()}
    text = "\n".join([
        f"pqlab whatif amort: {len(answers)} fleet(s); Eq. 1 over {answers[0].costs_source}",
        amort.table(answers).to_string(),
        *[f"source: {line}" for a in answers for line in amort.describe_sources(a)],
        *([f"wrote {args.figure}"] if args.figure else []), *([f"wrote {args.out}"] if args.out else []),
        f"answered in {seconds:.2f} s (load average {_loadavg()})"])
    _emit(args, document, text)
    return 0
