"""The attack matrix: AMORT-V1 Table VI (A01–A27, P1–P5), extra cases (X..), issue 27's (N..) and issue 35's
outsider cases (O.., built with the public constructors and their defaults, never through Lab), each executable.

Every other scenario builds a fresh :class:`Lab` (real ML-KEM/ML-DSA keys from a shared :class:`KeySet`, real
signatures, a real fsync'd checkpoint log), performs the honest set-up, then the adversary's one action.
The observed outcome is the :class:`AmortError` code that action raised, or ``ACCEPT`` for the positive
controls. Set-up steps are not wrapped: an error there is a failed scenario, never a pass.
"""

from pqlab.attacks import defects_and_gaps, extra, outsider, table6  # noqa: F401  (importing registers the scenarios)
from pqlab.attacks.registry import ACCEPT, CASES, Case, Context, Outcome, attempt, ordered, run_matrix

__all__ = ["ACCEPT", "CASES", "Case", "Context", "Outcome", "attempt", "ordered", "run_matrix"]
