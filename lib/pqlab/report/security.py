"""REPORT.md's "Beyond the paper: security" section: the attacks beyond Table VI under the paper's design and the
hardened variant, and what the hardening costs (from ``attack_matrix_metrics.json``)."""

from __future__ import annotations

from pqlab.report.metrics import MetricsTree

ATTACK_MATRIX = "attack_matrix_metrics.json"


def _amount(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:,.4g}"


def _ratio(cost: dict) -> str:
    if cost.get("ratio") is None:
        return "—"
    return f"{cost['ratio']:.2f}× ({cost['ratio_min']:.2f}–{cost['ratio_max']:.2f})"


def _outsider(found: dict | None) -> list[str]:
    """Issue 35's cases, built with the default public constructors, and the paper design's gaps among all cases."""
    if not found:
        return []
    lines = ["", "### With the defaults: attacks written against the public API", "",
             f"Each of these {found['cases_total']} attacks builds its objects the way an outsider does — "
             "`Deployment`, `Controller`, `Device`, `ColdAuditor`, `open_controller` with only their required "
             "arguments, never through the project's `Lab` — and runs under both variants "
             f"({found['as_expected']} of {found['cases_total']} end as expected). With the defaults, the paper's "
             f"design stops {found['defects']['stopped_by_paper']} of the {found['defects']['total']} defects and "
             f"the hardened variant {found['defects']['stopped_by_hardened']}; "
             f"{found['gaps']['succeed_under_paper']} of {found['gaps']['total']} attacks succeed under the paper's "
             f"design alone (its design gaps, in bold), {found['gaps']['stopped_by_hardened']} of them stopped by "
             "the hardened variant. ACCEPT is the honest outcome of a denial case (the adversary wants an honest "
             "action refused).", "",
             "| case | attack | kind | the paper's design | hardened |", "|---|---|---|---|---|"]
    for case, codes in sorted(found["codes"].items()):
        gap = codes["kind"] == "gap"
        paper = f"**{codes['paper']}**" if gap else codes["paper"]
        lines.append(f"| {case} | {codes['action']} | {codes['kind']} | {paper} | {codes['hardened']} |")
    return lines


def security_section(tree: MetricsTree) -> list[str]:
    """The section's markdown lines; nothing when the attack matrix has not run."""
    metrics = tree.document(ATTACK_MATRIX)
    if metrics is None or "issue27" not in metrics:  # not run, or another project's model under this name
        return []
    variants, found = metrics["variants"], metrics["issue27"]
    lines = ["## Beyond the paper: security", "",
             f"The attack matrix runs every case under two protocol variants (`amort.variant`): the paper's design "
             f"and a hardened one. Of {variants['paper']['attacks_total']} attacks, the paper's design accepts "
             f"{len(variants['paper']['attacks_succeeded'])} "
             f"({', '.join(variants['paper']['attacks_succeeded']) or 'none'}) and the hardened one "
             f"{len(variants['hardened']['attacks_succeeded'])} "
             f"({', '.join(variants['hardened']['attacks_succeeded']) or 'none'}). Sixteen attacks beyond Table VI "
             f"(N01–N16, docs/protocol.md): {found['defects']['total']} were defects of this package's reference "
             f"model against the paper's own text, now stopped by both variants "
             f"({found['defects']['stopped_by_paper']} and {found['defects']['stopped_by_hardened']}); "
             f"{found['gaps']['total']} are gaps in the paper's design, accepted by it "
             f"({found['gaps']['succeed_under_paper']}) and rejected by the hardened variant "
             f"({found['gaps']['stopped_by_hardened']}). {found['as_expected']} of {found['cases_total']} cases "
             "end as expected.", "",
             "| case | kind | the paper's design | hardened |", "|---|---|---|---|"]
    for case, codes in sorted(found["codes"].items()):
        paper = f"**{codes['paper']}**" if codes["paper"] == "ACCEPT" and codes["kind"] == "gap" else codes["paper"]
        lines.append(f"| {case} | {codes['kind']} | {paper} | {codes['hardened']} |")
    lines += _outsider(metrics.get("outsider"))
    costs = {name: cost for name, cost in metrics["hardening_cost"].items() if name != "setup"}
    setup = metrics["hardening_cost"].get("setup", {})
    lines += ["", "What the hardening costs (hardened ÷ paper's design, median of "
              f"{setup.get('trials', '?')} trials with their range; {setup.get('identities', '?')} identities, "
              f"k = {setup.get('k', '?')}, {setup.get('controller_path', '?')} controller path):", "",
              "| quantity | paper's design | hardened | unit | ratio (range) |", "|---|---:|---:|---|---|"]
    for name, cost in sorted(costs.items()):
        lines.append(f"| {name} | {_amount(cost['paper'])} | {_amount(cost['hardened'])} | {cost['unit']} "
                     f"| {_ratio(cost)} |")
    return [*lines, ""]
