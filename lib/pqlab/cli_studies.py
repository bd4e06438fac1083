"""What each study command prints from its result, and how a command's own options reach its run."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _print_tables(result, *names: str) -> None:
    for name in names:
        print(result.tables[name].to_string(index=False))


def _costs(result) -> None:
    _print_tables(result, "table1_costs")


def _attack_matrix(result) -> int:
    names = ("table6_attack_matrix", "attack_matrix_extra")
    _print_tables(result, *names)
    return 0 if all(result.tables[name]["pass"].all() for name in names) else 1


def _case_sizes(result) -> None:
    columns = ["config", "key_exchange", "chain", "auth", "cached", "Sigma1", "Sigma2", "Sigma3", "Total",
               "fits_limit", "frames_total"]
    print(result.tables["table1_case_sizes"][columns].to_string(index=False))


def _design_space(result) -> None:
    _print_tables(result, "design_space_pareto")


def _extended_design_space(result) -> None:
    _print_tables(result, "extended_design_space_pareto")


def _transport(result) -> None:
    _print_tables(result, "table1_case_times")


def _sensitivity(result) -> None:
    ipv6 = result.tables["fig4a_ipv6_block"]
    print(ipv6.pivot(index="occupancy_pct", columns="burst_ms", values="ratio").sort_index(ascending=False)
          .round(2).to_string())


def _amortisation(result) -> None:
    metrics = result.metrics
    print(f"controller path: {metrics['controller_path']['used']} ({metrics['controller_path']['reason']})")
    _print_tables(result, "table2_amortised", "omission_detection")
    eq = metrics["equivocation"]
    print(f"equivocation: {eq['exposed']} of {eq['trials']} exposed by comparing the two signed views")
    print(metrics["dominant"]["sentence"])


def _control_cycle(result) -> None:
    _print_tables(result, "fig6_scan_summary", "control_cycle_scan_cost")
    scheduling = result.metrics["scheduling"]
    print(f"{result.metrics['host']}; CPU {scheduling['cpu']}, policy {', '.join(scheduling['policies'])}"
          + (f" (SCHED_FIFO refused: {', '.join(scheduling['fifo_errors'])})" if scheduling["fifo_errors"] else ""))


def _assumptions(result) -> None:
    columns = ["set", "ratio_min", "ratio_max", "spurious_2hop", "spurious_4hop", "d3_4hop_heavy_ipv6_completion",
               "sed_max_failure_rate"]
    print(result.tables["assumptions_table"][columns].round(3).to_string(index=False))
    print(result.tables["assumptions_slack_bound"][["hops", "ack_semantics", "slack_s", "ratio_ceiling"]]
          .round(3).to_string(index=False))


def _transport_crosscheck(result) -> None:
    print(result.tables["crosscheck_closing"].to_string(index=False))
    transfers = result.tables["crosscheck_transfers"]
    print(transfers[["config", "message", "transport", "hops", "topology", "pqlab_median_s", "ns3_median_s",
                     "ratio", "framing_ratio", "ns3_extra_per_frame_us"]].round(4).to_string(index=False))


def _image_tree(result) -> None:
    m = result.metrics
    print(f"{m['files']} files, {m['total_bytes']} octets (median file {m['median_file_bytes']:.0f}, "
          f"largest {m['max_file_bytes']}), {m['distribution']['directories']} directories")


def _full_image(result) -> None:
    _print_tables(result, "table5_image")
    eviction = result.metrics["eviction"]
    print(f"eviction {'verified' if eviction['verified'] else 'NOT verified'} by mincore: "
          f"{eviction['resident_before_pages']} pages resident before, {eviction['resident_after_pages']} after "
          f"({eviction['files_still_resident']} files still resident)")


def _recovery(result) -> int:
    _print_tables(result, "table4_recovery", "recovery_restart", "recovery_crash_injection")
    return 0 if result.metrics["crash"]["all_fail_secure_or_resume"] else 1


def _scaling(result) -> None:
    print(f"controller path: {result.metrics['controller_path']} ({result.metrics['controller_path_reason']})")
    _print_tables(result, "table3_scaling", "isolation", "partition_replay")


def _device_origin(result) -> None:
    print(f"controller and device path: {result.metrics['controller_path']} "
          f"({result.metrics['controller_path_reason']})")
    _print_tables(result, "device_origin_auditor", "device_origin_tags")


# stage -> what its command prints from the result; the exit status is what it returns (None: 0)
SHOW: dict[str, Callable[[Any], int | None]] = {
    "costs": _costs, "attack_matrix": _attack_matrix, "case_sizes": _case_sizes, "design_space": _design_space,
    "extended_design_space": _extended_design_space, "transport": _transport, "sensitivity": _sensitivity,
    "amortisation": _amortisation, "control_cycle": _control_cycle, "assumptions": _assumptions,
    "transport_crosscheck": _transport_crosscheck, "image_tree": _image_tree, "full_image": _full_image,
    "recovery": _recovery, "scaling": _scaling, "device_origin": _device_origin,
}


def transport_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--configs``: the configurations and device compute times the grid runs (refused before the heavy imports)."""
    from pqlab.transport.case_inputs import load_configs

    configs, compute = load_configs(args.configs) if args.configs else (None, None)
    return {"configs": configs, "device_compute_ms": compute}


def full_image_settings(args: argparse.Namespace, settings):
    """``--image-dir``: measure that directory instead of full_image.image_dir."""
    if not args.image_dir:
        return settings
    section = settings.full_image.model_copy(update={"image_dir": str(Path(args.image_dir).resolve()),
                                                     "scratch_tree": None})
    return settings.model_copy(update={"full_image": section})


# stage -> run options its own command-line options give (before the params are loaded)
OPTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {"transport": transport_options}
# stage -> the params as its own command-line options change them
SETTINGS: dict[str, Callable[[argparse.Namespace, Any], Any]] = {"full_image": full_image_settings}
