"""REPORT.md's "Which library" section: the signing library behind each AMORT-V1 row, and the claims whose verdict
depends on it (dominant term, k*, shares, reductions) under every signing backend this machine has."""

from __future__ import annotations

from typing import Any

from pqlab.report.metrics import MetricsTree
from pqlab.report.schema import Reference

COSTS, AMORTISATION = "costs_metrics.json", "amortisation_metrics.json"

# column -> (the library_dependent value, the main-row metric in the reference whose paper value belongs beside it)
_COLUMNS = {
    "dominant term": ("dominant", None),
    "signature share [%]": ("share_signature_pct", "model.{baseline}.share_signature_pct"),
    "k*": ("k_star", "model.{baseline}.k_star"),
    "reduction, Eq. 1": ("reduction_eq1", "model.{baseline}.reduction"),
    "reduction, measured": ("reduction_measured", "measured.{baseline}.reduction"),
}


def _paper_value(reference: Reference, key: str) -> str:
    """The paper's printed value of the main row that reads ``amortisation_metrics.json:<key>``, or a dash."""
    for quantity in reference.main_rows():
        if quantity.metric == f"{AMORTISATION}:{key}":
            value = quantity.value
            return "–".join(map(str, value)) if isinstance(value, tuple) else str(value)
    return "—"


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"
    return str(value)


def libraries_section(reference: Reference, tree: MetricsTree) -> list[str]:
    """The section's markdown lines; nothing when neither the costs nor the amortisation stage has run."""
    # a project whose stages write other models under these names (the report's own tests) has no such section
    costs, amortisation = (document if document and "library_dependent" in document else None
                           for document in (tree.document(COSTS), tree.document(AMORTISATION)))
    if costs is None and amortisation is None:
        return []
    lines = ["## Which library: the claims that depend on it", ""]
    if costs is not None:
        present = ", ".join(f"{name} {version}" for name, version in sorted(costs["backends_available"].items()))
        absent = ", ".join(sorted(costs["backends_absent"])) or "none"
        main = costs["library_dependent"]["main_backend"]
        lines.append(f"Post-quantum backends on this machine: {present} (absent: {absent}). The AMORT-V1 main rows "
                     "used, per signer: " + "; ".join(f"{signer} → **{backend}**" for signer, backend in
                                                      sorted(main.items()))
                     + " (the paper's liboqs when present, otherwise the first available); Table I's HMAC and "
                       "Merkle rows: OpenSSL's libcrypto timed in C, as in the paper.")
    if amortisation is None:
        return [*lines, ""]
    block = amortisation["library_dependent"]
    lines += ["", "Eq. 1's split and the measured reductions per checkpoint baseline under every signing backend "
              "present (main: the backend the main rows used), with the paper's values from its main rows. Which term "
              "dominates, k* and the reductions follow the signing time, which differs between libraries by up to "
              "an order of magnitude: a verdict on these rows is a verdict on the library as much as on the "
              "protocol (`make liboqs` builds the paper's).", "",
              "| baseline | backend | C_sign mean [µs] | C_fsync [µs] | " + " | ".join(_COLUMNS) + " |",
              "|---|---|---:|---:|" + "|".join("---:" if i else "---" for i in range(len(_COLUMNS))) + "|"]
    for baseline, backends in block["baselines"].items():
        paper = [_paper_value(reference, key.format(baseline=baseline)) if key else "—"
                 for _, key in _COLUMNS.values()]
        lines.append(f"| {baseline} | *paper* (liboqs) | — | — | " + " | ".join(paper) + " |")
        for backend, values in backends.items():
            name = f"**{backend}** (main)" if values.get("main") else backend
            cells = [_number(values.get(field)) for field, _ in _COLUMNS.values()]
            lines.append(f"| {baseline} | {name} | {_number(values.get('c_sign_mean_us'))} "
                         f"| {_number(values.get('c_fsync_median_us'))} | " + " | ".join(cells) + " |")
    return [*lines, ""]
