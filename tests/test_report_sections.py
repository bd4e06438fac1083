"""REPORT.md's sections beyond the rows: the claims that depend on the signing library (every backend present, the
paper's values taken from its main rows) and the security findings beyond Table VI."""

from __future__ import annotations

from pathlib import Path

from pqlab.report import load_reference
from pqlab.report.libraries import libraries_section
from pqlab.report.security import security_section

REPO = Path(__file__).resolve().parent.parent


class Documents:
    """A run's metrics documents by file name (what the sections read through MetricsTree.document)."""

    def __init__(self, **documents: dict) -> None:
        self.documents = {name.replace("_json", ".json"): doc for name, doc in documents.items()}

    def document(self, filename: str) -> dict | None:
        return self.documents.get(filename)


def _claims(main: bool, sign: float, dominant: str, k_star: float) -> dict:
    return {"main": main, "c_sign_mean_us": sign, "c_fsync_median_us": 4000.0, "dominant": dominant,
            "share_signature_pct": 100 * sign / (sign + 4000.0), "k_star": k_star, "reduction_eq1": 800.0,
            "reduction_measured": 700.0}


COSTS = {"backends_available": {"openssl": "3.5", "liboqs": "0.16.0"}, "backends_absent": {"pqcrypto": "absent"},
         "library_dependent": {"main_backend": {"ML-DSA-65": "liboqs"}}}
AMORTISATION = {"library_dependent": {"main_backend": {"mldsa_log": "liboqs"}, "baselines": {"mldsa_log": {
    "liboqs": _claims(True, 80.0, "durable write", 1500.0), "openssl": _claims(False, 800.0, "signature", 1900.0)}}}}


def test_every_signing_backend_present_has_a_row_beside_the_papers_values():
    reference = load_reference(REPO / "params" / "paper_reference.yaml")
    text = "\n".join(libraries_section(reference, Documents(costs_metrics_json=COSTS,
                                                             amortisation_metrics_json=AMORTISATION)))
    assert "ML-DSA-65 → **liboqs**" in text and "absent: pqcrypto" in text
    rows = [line for line in text.splitlines() if line.startswith("| mldsa_log |")]
    assert len(rows) == 3
    paper, main, other = rows
    k_star = next(q.value for q in reference.main_rows()
                  if q.metric == "amortisation_metrics.json:model.mldsa_log.k_star")
    assert "*paper*" in paper and f"| {k_star} |" in paper
    assert "**liboqs** (main)" in main and "durable write" in main and "1,500.0" in main
    assert "| openssl |" in other and "signature" in other


def test_no_library_section_before_the_measuring_stages_have_run():
    reference = load_reference(REPO / "params" / "paper_reference.yaml")
    assert libraries_section(reference, Documents()) == []


def _attack_matrix(paper_accepts: list[str]) -> dict:
    codes = {f"N{i:02d}": {"kind": "gap" if 3 <= i <= 5 else "defect",
                           "paper": "ACCEPT" if f"N{i:02d}" in paper_accepts else "SIG_FAIL", "hardened": "SIG_FAIL"}
             for i in range(1, 17)}
    return {"variants": {"paper": {"attacks_total": 61, "attacks_succeeded": paper_accepts},
                         "hardened": {"attacks_total": 61, "attacks_succeeded": []}},
            "issue27": {"cases_total": 16, "as_expected": 16, "codes": codes,
                        "defects": {"total": 13, "stopped_by_paper": 13, "stopped_by_hardened": 13},
                        "gaps": {"total": 3, "succeed_under_paper": len(paper_accepts), "stopped_by_hardened": 3}},
            "hardening_cost": {"setup": {"trials": 5, "identities": 1000, "k": 64, "controller_path": "native"},
                               "device_epoch_us": {"paper": 300.0, "hardened": 900.0, "unit": "µs", "ratio": 3.0,
                                                   "ratio_min": 2.5, "ratio_max": 3.5},
                               "device_state_octets_per_checkpoint": {"paper": 0.0, "hardened": 40.0,
                                                                      "unit": "octets", "ratio": None,
                                                                      "ratio_min": None, "ratio_max": None}}}


def test_security_names_the_attacks_the_papers_design_accepts_and_what_hardening_costs():
    text = "\n".join(security_section(Documents(attack_matrix_metrics_json=_attack_matrix(["N03", "N05"]))))
    assert "the paper's design accepts 2 (N03, N05) and the hardened one 0 (none)" in text
    assert "| N03 | gap | **ACCEPT** | SIG_FAIL |" in text and "| N04 | gap | SIG_FAIL | SIG_FAIL |" in text
    assert "| device_epoch_us | 300 | 900 | µs | 3.00× (2.50–3.50) |" in text
    assert "| device_state_octets_per_checkpoint | 0 | 40 | octets | — |" in text


def test_security_lists_the_outsider_cases_with_the_papers_gaps_marked():
    metrics = _attack_matrix(["N03"])
    metrics["outsider"] = {
        "cases_total": 2, "as_expected": 2,
        "defects": {"total": 1, "stopped_by_paper": 1, "stopped_by_hardened": 1},
        "gaps": {"total": 1, "succeed_under_paper": 1, "stopped_by_hardened": 1},
        "codes": {"O01": {"kind": "defect", "paper": "SIG_FAIL", "hardened": "SIG_FAIL", "action": "another's"},
                  "O05": {"kind": "gap", "paper": "ACCEPT", "hardened": "SIG_FAIL", "action": "forged list"}}}
    text = "\n".join(security_section(Documents(attack_matrix_metrics_json=metrics)))
    assert "| O05 | forged list | gap | **ACCEPT** | SIG_FAIL |" in text
    assert "| O01 | another's | defect | SIG_FAIL | SIG_FAIL |" in text
    assert "the paper's design stops 1 of the 1 defects" in text and "1 of 1 attacks succeed under" in text


def test_no_security_section_before_the_attack_matrix_has_run():
    assert security_section(Documents()) == []
